import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { USAGE_KEY_TAG } from '#domain/usage-keys.ts';
import type { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { asArray, logicalId, type Statement, statementsOfRole } from './iam.ts';
import { synthesize } from './templates.ts';

type Json = Record<string, any>;
const apigateway = (statements: Statement[]) =>
  statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('apigateway:'))) as (Statement & {
    Condition?: Json;
  })[];
const path = (s: Statement) => JSON.stringify(s.Resource).match(/::(\/[^"]*)"/)?.[1];

describe('the usage-key pool in the template (ADR 0111)', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  const planName = 'GeoPlane-prod';
  beforeAll(() => {
    ({ stack, template } = synthesize());
  });

  it('tags the usage plan and the global key with the deployment tag, and sets the pool size where keys are made', () => {
    const plan = Object.values(template.findResources('AWS::ApiGateway::UsagePlan'))[0] as Json;
    expect(plan.Properties.UsagePlanName).toBe(planName);
    expect(plan.Properties.Tags).toEqual(expect.arrayContaining([{ Key: USAGE_KEY_TAG, Value: planName }]));
    const key = Object.values(template.findResources('AWS::ApiGateway::ApiKey'))[0] as Json;
    expect(key.Properties.Tags).toEqual(expect.arrayContaining([{ Key: USAGE_KEY_TAG, Value: planName }]));
    const creator = stack.api.functions.get('createWorkspace');
    if (!creator) throw new Error('createWorkspace');
    const fn = template.findResources('AWS::Lambda::Function')[logicalId(creator.function)] as Json;
    expect(fn.Properties.Environment.Variables).toMatchObject({
      USAGE_PLAN_NAME: planName,
      USAGE_KEY_POOL_SIZE: '1000',
    });
  });

  it('lets only createWorkspace make keys, and the sweep list and delete them: no other function reaches API Gateway', () => {
    const makers = routes.filter((op) => op.usageKeys?.includes('create')).map((op) => op.operationId);
    expect(makers).toEqual(['createWorkspace']);
    for (const op of routes) {
      const fn = stack.api.functions.get(op.operationId);
      if (!fn) throw new Error(op.operationId);
      const granted = apigateway(statementsOfRole(template, fn.role));
      if (op.operationId === 'createWorkspace') expect(granted.length, op.operationId).toBeGreaterThan(0);
      else expect(granted, op.operationId).toEqual([]);
    }
    for (const fn of stack.deletionWorkflow.functions.values())
      expect(apigateway(statementsOfRole(template, fn.role))).toEqual([]);
    expect(apigateway(statementsOfRole(template, stack.sweeps.function.role)).length).toBeGreaterThan(0);
  });

  it('conditions every grant on a key or on the plan keys on the deployment tag; only listings are unconditioned', () => {
    const creator = stack.api.functions.get('createWorkspace');
    if (!creator) throw new Error('createWorkspace');
    const all = [
      ...apigateway(statementsOfRole(template, creator.role)),
      ...apigateway(statementsOfRole(template, stack.sweeps.function.role)),
    ];
    const byPath = new Map<string, typeof all>();
    for (const s of all) byPath.set(path(s) as string, [...(byPath.get(path(s) as string) ?? []), s]);
    expect([...byPath.keys()].sort()).toEqual([
      '/apikeys',
      '/apikeys/*',
      '/tags/*',
      '/usageplans',
      '/usageplans/*/keys',
    ]);
    for (const s of all) {
      const p = path(s) as string;
      const actions = asArray(s.Action);
      if (p === '/usageplans' || (p === '/apikeys' && actions.includes('apigateway:GET'))) {
        // Listings: IAM can't condition them on tags; nothing else is granted with them.
        expect(actions).toEqual(['apigateway:GET']);
        continue;
      }
      const condition = JSON.stringify(s.Condition ?? {});
      if (p === '/apikeys' || p === '/tags/*') {
        expect(s.Condition?.StringEquals?.[`aws:RequestTag/${USAGE_KEY_TAG}`], p).toBe(planName);
        expect(s.Condition?.['ForAllValues:StringEquals']?.['aws:TagKeys'], p).toEqual([USAGE_KEY_TAG]);
      } else {
        expect(s.Condition?.StringEquals?.[`aws:ResourceTag/${USAGE_KEY_TAG}`], `${p} ${condition}`).toBe(
          planName,
        );
      }
    }
    // No function may read a key by id (GET /apikeys/{id} returns its value).
    expect(
      all.filter((s) => path(s) === '/apikeys/*' && asArray(s.Action).includes('apigateway:GET')),
    ).toEqual([]);
  });

  it('refuses a per-workspace limit above the stage ceiling, and a pool larger than the account can hold', () => {
    expect(() => synthesize({ throttlingRateLimit: 2000, stageThrottlingRateLimit: 1000 })).toThrow(
      /throttlingRateLimit \(2000\) is above stageThrottlingRateLimit \(1000\)/,
    );
    expect(() => synthesize({ throttlingBurstLimit: 300, stageThrottlingBurstLimit: 200 })).toThrow(
      /throttlingBurstLimit \(300\) is above stageThrottlingBurstLimit/,
    );
    expect(() => synthesize({ usageKeyPoolSize: 20000 })).toThrow(/usageKeyPoolSize/);
  });
});
