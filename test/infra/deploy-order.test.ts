import { readFileSync } from 'node:fs';
import type { CfnResource } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { stackNameOf } from '#infra/stacks/geoplane-stack.ts';
import { appWithConsole, deploymentTemplate, templatesOf } from './templates.ts';

/*
 * ADR 0114: the nested operation stacks are created one after the other, the stack's name and
 * every explicit resource name come from cdk.json `stage`, and API Gateway's account-wide
 * CloudWatch role is set only when `apiGatewayCloudWatchRole` asks.
 */

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

type Json = Record<string, any>;

const synthesize = (context: Record<string, unknown> = {}) =>
  appWithConsole({ context: { ...cdkContext, ...context } });

describe('the nested operation stacks (ADR 0114)', () => {
  let parent: Json;
  let order: string[];

  beforeAll(async () => {
    const { stack } = await synthesize();
    parent = Template.fromStack(stack).toJSON();
    // The operations' stacks, then the data plane's (ADR 0122): its methods wait for theirs too.
    order = [...stack.api.stacks.values(), stack.dataPlane.stack].map((nested) =>
      stack.getLogicalId(nested.nestedStackResource as CfnResource),
    );
  }, 240_000);

  it('are all chained: each but the first DependsOn exactly the one before it', () => {
    const nestedIds = Object.entries(parent.Resources as Record<string, Json>)
      .filter(([, r]) => r.Type === 'AWS::CloudFormation::Stack')
      .map(([id]) => id);
    expect(order.length).toBeGreaterThanOrEqual(8);
    expect([...order].sort()).toEqual([...nestedIds].sort());
    const nestedDependencies = (id: string) =>
      ([] as string[]).concat(parent.Resources[id].DependsOn ?? []).filter((d) => nestedIds.includes(d));
    expect(nestedDependencies(order[0] as string)).toEqual([]);
    for (let i = 1; i < order.length; i++) {
      expect(nestedDependencies(order[i] as string), order[i]).toEqual([order[i - 1]]);
    }
  });

  it('form no cycle: following DependsOn from the last reaches the first, once each', () => {
    const nestedIds = new Set(order);
    const visited: string[] = [];
    let current: string | undefined = order[order.length - 1];
    while (current) {
      expect(visited, `${current} comes twice`).not.toContain(current);
      visited.push(current);
      current = ([] as string[])
        .concat(parent.Resources[current].DependsOn ?? [])
        .find((d) => nestedIds.has(d));
    }
    expect(visited.reverse()).toEqual(order);
  });
});

/**
 * The explicit physical names of a deployment: every `…Name` property of a resource (or of its
 * `…Config` object) that is a literal or built from literals, plus API key values (unique per
 * account and region). Names scoped to their parent resource (a stage of its API, an index of its
 * table, an inline policy of its role, a metric's name or dimension) are no collision; references
 * (`Ref`, `Fn::GetAtt`) name another resource, not this one.
 */
function explicitNames(template: Json): Map<string, string> {
  // Scoped to their parent, or a label nothing looks up (an SNS topic's DisplayName).
  const scoped = new Set([
    'StageName',
    'IndexName',
    'AttributeName',
    'PolicyName',
    'OperationName',
    'MetricName',
    'DisplayName',
  ]);
  const isReference = (v: unknown) =>
    typeof v === 'object' && v !== null && ('Ref' in (v as Json) || 'Fn::GetAtt' in (v as Json));
  const names = new Map<string, string>();
  const add = (where: string, value: unknown) => {
    if (value === undefined || isReference(value)) return;
    const text = JSON.stringify(value);
    // The stack's own name at deploy time is unique per stack.
    if (text.includes('AWS::StackName')) return;
    names.set(where, text);
  };
  for (const [id, resource] of Object.entries(template.Resources as Record<string, Json>)) {
    const properties = (resource.Properties ?? {}) as Json;
    if (resource.Type === 'AWS::ApiGateway::Authorizer') continue; // named within its API
    if (resource.Type === 'AWS::ApiGateway::ApiKey') add(`${id}.Value`, properties.Value);
    for (const [key, value] of Object.entries(properties)) {
      if (key.endsWith('Name') && !scoped.has(key)) add(`${id}.${key}`, value);
      if (key.endsWith('Config') && value && typeof value === 'object' && !Array.isArray(value)) {
        for (const [inner, innerValue] of Object.entries(value as Json))
          if (inner.endsWith('Name') && !scoped.has(inner)) add(`${id}.${key}.${inner}`, innerValue);
      }
    }
  }
  return names;
}

describe('stage (cdk.json context, ADR 0114)', () => {
  it('names the stack GeoPlane without a stage (existing deployments keep theirs) and GeoPlane-<stage> with one', async () => {
    expect(stackNameOf({ stage: undefined })).toBe('GeoPlane');
    expect(stackNameOf({ stage: 'dev' })).toBe('GeoPlane-dev');
    expect((await synthesize()).stack.stackName).toBe('GeoPlane');
    expect((await synthesize({ stage: '' })).stack.stackName).toBe('GeoPlane');
  }, 240_000);

  it.each(['Dev_1', '-dev', 'dev-', 'a--b', '1dev', 'x'.repeat(25)])(
    'refuses %j as a stage',
    async (stage) => {
      await expect(synthesize({ stage })).rejects.toThrow(/Invalid cdk\.json context[\s\S]*stage/);
    },
  );

  it('lets two stages share an account and region: no explicit physical name in common', async () => {
    const [first, second, third] = await Promise.all([
      synthesize(),
      synthesize({ stage: 'dev' }),
      synthesize({ stage: 'staging' }),
    ]);
    expect(second.stack.stackName).toBe('GeoPlane-dev');
    const names = [first, second, third].map(({ stack }) =>
      explicitNames(deploymentTemplate(stack).toJSON()),
    );
    // The check sees the names that matter (API, usage plan, alarms, log groups, event bus, console).
    const defaults = [...(names[0] as Map<string, string>).values()].join('\n');
    for (const expected of [
      'GeoPlane-management',
      'GeoPlane-prod',
      'GeoPlane-api-5xx-rate',
      'states/GeoPlane-import',
    ])
      expect(defaults).toContain(expected);
    expect((names[0] as Map<string, string>).size).toBeGreaterThanOrEqual(10);
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const others = new Map([...(names[j] as Map<string, string>)].map(([where, name]) => [name, where]));
        const shared = [...(names[i] as Map<string, string>)]
          .filter(([, name]) => others.has(name))
          .map(([where, name]) => `${where} and ${others.get(name)}: ${name}`);
        expect(shared, 'names two stages would both claim').toEqual([]);
      }
    }
    // Every stage's resources carry its stack name, so they tell apart in one account.
    expect([...(names[1] as Map<string, string>).values()].join('\n')).toContain('GeoPlane-dev-management');
  }, 240_000);
});

describe('apiGatewayCloudWatchRole (cdk.json context, ADR 0114)', () => {
  const accountSettings = (stack: Parameters<typeof templatesOf>[0]) =>
    templatesOf(stack).flatMap(([, template]) =>
      Object.values(template.findResources('AWS::ApiGateway::Account')),
    );

  it('is off by default (cdk.json): no AWS::ApiGateway::Account, no role for it; the stage still logs', async () => {
    expect(cdkContext.apiGatewayCloudWatchRole).toBe(false);
    const { stack } = await synthesize();
    expect(accountSettings(stack)).toEqual([]);
    const template = Template.fromStack(stack);
    expect(
      Object.values(template.findResources('AWS::IAM::Role')).filter((role) =>
        JSON.stringify(role).includes('AmazonAPIGatewayPushToCloudWatchLogs'),
      ),
    ).toEqual([]);
    // Access and execution logs stay on: they need the account's role, set once (docs/deploy.md).
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: Match.objectLike({ DestinationArn: Match.anyValue() }),
      MethodSettings: Match.arrayWith([Match.objectLike({ LoggingLevel: 'ERROR' })]),
    });
  }, 240_000);

  it('when true, sets the account role (retained, as it is shared) and the stage waits for it', async () => {
    const { stack } = await synthesize({ apiGatewayCloudWatchRole: 'true' });
    const template = Template.fromStack(stack).toJSON();
    const [accountId, account] = Object.entries(template.Resources as Record<string, Json>).find(
      ([, r]) => r.Type === 'AWS::ApiGateway::Account',
    ) as [string, Json];
    expect(account.DeletionPolicy).toBe('Retain');
    const roleId = account.Properties.CloudWatchRoleArn['Fn::GetAtt'][0];
    expect(template.Resources[roleId].DeletionPolicy).toBe('Retain');
    expect(JSON.stringify(template.Resources[roleId])).toContain('AmazonAPIGatewayPushToCloudWatchLogs');
    const stage = Object.values(template.Resources as Record<string, Json>).find(
      (r) => r.Type === 'AWS::ApiGateway::Stage',
    ) as Json;
    expect([].concat(stage.DependsOn ?? [])).toContain(accountId);
  }, 240_000);
});
