import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { USAGE_KEY_TAG } from '#domain/usage-keys.ts';
import type { ApiFunction } from './api-function.ts';
import type { StageConfig } from './stage-config.ts';

/** Name of the stage's usage plan; functions find the plan by it (its id would make them depend on the stage: a cycle). */
export function usagePlanNameOf(scope: Construct, config: StageConfig): string {
  return `${Stack.of(scope).stackName}-${config.stageName}`;
}

/** What a function does with the keys of the usage-key pool (ADR 0111). */
export type UsageKeyAction = 'create' | 'delete' | 'list';

/**
 * Lets a function work on the keys of the usage-key pool (ADR 0111): sets USAGE_PLAN_NAME and
 * USAGE_KEY_POOL_SIZE and grants exactly the API Gateway calls of `actions`. Every grant on a key
 * or on the plan's keys is conditioned on the deployment's tag (API Gateway has no key ARNs known
 * at deploy time), so no other application's keys are reachable; only the listings, which IAM
 * can't condition on tags, are unconditioned.
 */
export function grantUsageKeys(
  fn: ApiFunction,
  actions: readonly UsageKeyAction[],
  usagePlanName: string,
  config: StageConfig,
): void {
  const stack = Stack.of(fn);
  const arn = (path: string) =>
    stack.formatArn({
      service: 'apigateway',
      account: '',
      resource: path,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });
  const requestTag = {
    StringEquals: { [`aws:RequestTag/${USAGE_KEY_TAG}`]: usagePlanName },
    'ForAllValues:StringEquals': { 'aws:TagKeys': [USAGE_KEY_TAG] },
  };
  const resourceTag = { StringEquals: { [`aws:ResourceTag/${USAGE_KEY_TAG}`]: usagePlanName } };
  fn.function.addEnvironment('USAGE_PLAN_NAME', usagePlanName);
  fn.function.addEnvironment('USAGE_KEY_POOL_SIZE', String(config.usageKeyPoolSize));
  const add = (statement: PolicyStatement) => fn.role.addToPolicy(statement);
  if (actions.includes('create')) {
    // The plan is found by name: GetUsagePlans (its id would create a dependency cycle).
    add(new PolicyStatement({ actions: ['apigateway:GET'], resources: [arn('/usageplans')] }));
    // CreateApiKey only with the deployment's tag, and that tag only (tags given on create are a PUT on /tags).
    add(
      new PolicyStatement({
        actions: ['apigateway:POST'],
        resources: [arn('/apikeys')],
        conditions: requestTag,
      }),
    );
    add(
      new PolicyStatement({
        actions: ['apigateway:PUT'],
        resources: [arn('/tags/*')],
        conditions: requestTag,
      }),
    );
    // CreateUsagePlanKey: a usage plan key inherits its plan's tags for access control.
    add(
      new PolicyStatement({
        actions: ['apigateway:POST'],
        resources: [arn('/usageplans/*/keys')],
        conditions: resourceTag,
      }),
    );
  }
  if (actions.includes('delete'))
    add(
      new PolicyStatement({
        actions: ['apigateway:DELETE'],
        resources: [arn('/apikeys/*')],
        conditions: resourceTag,
      }),
    );
  // GetApiKeys (the sweep): names, ids and tags only — it never asks for values.
  if (actions.includes('list'))
    add(new PolicyStatement({ actions: ['apigateway:GET'], resources: [arn('/apikeys')] }));
  for (const [path, reason] of [
    [
      '/apikeys/*',
      'Pool keys are made at run time; the grant is conditioned on the deployment tag of each key.',
    ],
    [
      '/usageplans/*/keys',
      'The plan is found by name at run time; the grant is conditioned on its deployment tag.',
    ],
    [
      '/tags/*',
      'Tags given on CreateApiKey; only the deployment tag is allowed (aws:RequestTag, aws:TagKeys).',
    ],
  ] as const) {
    Validations.of(fn.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::${path}]`,
      reason,
    });
  }
}
