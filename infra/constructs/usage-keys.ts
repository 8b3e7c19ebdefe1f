import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { ApiFunction } from './api-function.ts';
import type { StageConfig } from './stage-config.ts';

/** Name of the stage's usage plan; functions find the plan by it (its id would make them depend on the stage: a cycle). */
export function usagePlanNameOf(scope: Construct, config: StageConfig): string {
  return `${Stack.of(scope).stackName}-${config.stageName}`;
}

/**
 * Lets a function find the usage plan by name and create or delete usage keys (API Gateway has no
 * per-key ARNs known at deploy time): sets USAGE_PLAN_NAME, grants GET plus the declared write
 * actions on the usage-plan and API-key paths, and records why the path wildcards are needed.
 */
export function grantUsageKeys(
  fn: ApiFunction,
  actions: readonly ('create' | 'delete')[],
  usagePlanName: string,
): void {
  const stack = Stack.of(fn);
  const usageKeyArn = (path: string) =>
    stack.formatArn({
      service: 'apigateway',
      account: '',
      resource: path,
      arnFormat: ArnFormat.NO_RESOURCE_NAME,
    });
  fn.function.addEnvironment('USAGE_PLAN_NAME', usagePlanName);
  fn.role.addToPolicy(
    new PolicyStatement({
      actions: [
        'apigateway:GET',
        ...(actions.includes('create') ? ['apigateway:POST'] : []),
        ...(actions.includes('delete') ? ['apigateway:DELETE'] : []),
      ],
      resources: [
        usageKeyArn('/usageplans'),
        usageKeyArn('/usageplans/*/keys'),
        usageKeyArn('/apikeys'),
        usageKeyArn('/apikeys/*'),
      ],
    }),
  );
  Validations.of(fn.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*]',
    reason: 'Usage keys are created at run time, one per workspace; their ids are not known at deploy time.',
  });
  Validations.of(fn.role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/keys]',
    reason: 'The usage plan is found by name at run time (its id would create a dependency cycle).',
  });
}
