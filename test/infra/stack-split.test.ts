import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataRoutes } from '#api/data-routes.ts';
import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import { deletionTasks } from '#infra/constructs/deletion-workflow.ts';
import { importTasks } from '#infra/constructs/import-workflow.ts';
import { jobLoopTasks } from '#infra/constructs/job-loop-workflow.ts';
import {
  areaOf,
  maxOperationsPerStack,
  OperationsStack,
  operationStackAreas,
  operationStackOf,
  operationsByStack,
  resourcesPerOperation,
  templateResourceBudget,
} from '#infra/constructs/operation-stacks.ts';
import { stageConfigOf } from '#infra/constructs/stage-config.ts';
import { createGeoPlaneApp, GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { harvestWorkflow } from '#infra/workflows/harvest-workflow.ts';
import { tileCacheWorkflow } from '#infra/workflows/tile-cache-workflow.ts';
import { logicalId } from './iam.ts';
import { deploymentTemplate, resourceCount, templatesOf } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

/** The app with a given route table, without bundling or cdk-nag (speed; cdk-nag.test.ts runs it). */
function synthesize(routeTable: readonly Operation[]) {
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  return new GeoPlaneStack(app, 'GeoPlane', { config: stageConfigOf(app.node), routes: routeTable });
}

/**
 * A route table of `count` operations: THE route table, then copies of its routes under
 * `/api/v1/copy<n>/…` (each area grows in proportion, and so does the parent's path tree).
 */
function grownRoutes(count: number): Operation[] {
  const grown: Operation[] = [...routes];
  for (let i = 0; grown.length < count; i++) {
    const op = routes[i % routes.length] as Operation;
    const copy = Math.floor(i / routes.length) + 1;
    grown.push({
      ...op,
      operationId: `${op.operationId}Copy${copy}`,
      path: op.path.replace(/^\/api\/v1\//, `/api/v1/copy${copy}/`),
    });
  }
  return grown;
}

/** Resources of each template, by stack path. */
const countsOf = (stack: Stack) =>
  Object.fromEntries(templatesOf(stack).map(([s, t]) => [s.node.path, resourceCount(t)]));

describe('the stack split (ADR 0077)', () => {
  let stack: GeoPlaneStack;
  let templates: [Stack, Template][];

  beforeAll(() => {
    ({ stack } = createGeoPlaneApp({
      context: cdkContext,
      bundling: false,
      builtinCloudFormationValidation: false,
    }));
    templates = templatesOf(stack);
  });

  it(`keeps every template (the parent and each nested stack) under ${templateResourceBudget} resources`, () => {
    // The parent, a stack per group of areas, and the data plane's (ADR 0122).
    expect(templates.length).toBe(1 + operationsByStack(routes).size + 1);
    for (const [s, template] of templates) {
      expect(resourceCount(template), s.node.path).toBeLessThan(templateResourceBudget);
    }
    // The budget leaves CloudFormation's limit of 500 room (the CLI adds one metadata resource per template).
    expect(templateResourceBudget).toBeLessThanOrEqual(450);
  });

  it('holds in each nested stack exactly the operations of its areas, within its budget', () => {
    const groups = operationsByStack(routes);
    expect([...stack.api.stacks.keys()].sort()).toEqual([...groups.keys()].sort());
    for (const [id, ops] of groups) {
      const nested = stack.api.stacks.get(id) as OperationsStack;
      expect([...nested.functions.keys()], id).toEqual(ops.map((op) => op.operationId));
      expect([...nested.methods.keys()], id).toEqual(ops.map((op) => op.operationId));
      expect(ops.length, id).toBeLessThanOrEqual(maxOperationsPerStack);
      for (const op of ops) expect(Stack.of(nested.functions.get(op.operationId) as never)).toBe(nested);
    }
  });

  it(`costs ${resourcesPerOperation} resources per operation in a nested stack, none in the parent`, () => {
    for (const [s, template] of templates) {
      const types = Object.values(template.toJSON().Resources as Record<string, { Type: string }>).map(
        (r) => r.Type,
      );
      if (s === stack) {
        expect(types.filter((t) => t === 'AWS::ApiGateway::Method')).toEqual([]);
        // The authorizer, the workflows' tasks, the bootstrapAdmins resource, the sweep (ADR 0093) and
        // the catalog events publisher (ADR 0094): the parent's only functions.
        expect(types.filter((t) => t === 'AWS::Lambda::Function')).toHaveLength(
          1 +
            deletionTasks.length +
            importTasks.length +
            jobLoopTasks(harvestWorkflow).length +
            jobLoopTasks(tileCacheWorkflow).length +
            1 +
            1 +
            1,
        );
        continue;
      }
      // The data plane's stack (one function for all its methods) is test/infra/data-plane.test.ts's.
      if (!(s instanceof OperationsStack)) continue;
      const ops = s.functions.size;
      expect(types.length, s.node.path).toBe(resourcesPerOperation * ops);
      for (const type of [
        'AWS::Lambda::Function',
        'AWS::IAM::Role',
        'AWS::Logs::LogGroup',
        'AWS::Lambda::Permission',
        'AWS::ApiGateway::Method',
      ]) {
        expect(types.filter((t) => t === type).length, `${s.node.path} ${type}`).toBe(ops);
      }
    }
  });

  it('keeps the API, its paths, authorizer, deployment, stage, usage plan, table, key, workflows and upload bucket in the parent', () => {
    const parent = templates[0]?.[1] as Template;
    for (const type of [
      'AWS::ApiGateway::RestApi',
      'AWS::ApiGateway::Authorizer',
      'AWS::ApiGateway::Deployment',
      'AWS::ApiGateway::Stage',
      'AWS::ApiGateway::UsagePlan',
      'AWS::DynamoDB::Table',
    ]) {
      parent.resourceCountIs(type, 1);
    }
    // The connection-secrets key and the alarm topic's key (ADR 0091).
    parent.resourceCountIs('AWS::KMS::Key', 2);
    // The deletion, the import, the mosaic harvest and the tile cache workflow; the upload bucket and
    // its access-log bucket, and the tile cache bucket (ADR 0139).
    parent.resourceCountIs('AWS::StepFunctions::StateMachine', 4);
    parent.resourceCountIs('AWS::S3::Bucket', 3);
    for (const [s, template] of templates.slice(1)) {
      expect(Object.keys(template.findResources('AWS::ApiGateway::Resource')), s.node.path).toEqual([]);
    }
  });

  it('deploys the API after every nested stack (its deployment depends on each)', () => {
    const parent = templates[0]?.[1] as Template;
    const deployments = Object.values(parent.findResources('AWS::ApiGateway::Deployment'));
    expect(deployments).toHaveLength(1);
    const dependsOn = deployments[0]?.DependsOn as string[];
    for (const nested of stack.api.stacks.values()) {
      expect(dependsOn, nested.node.path).toContain(stack.getLogicalId(nested.nestedStackResource as never));
    }
  });

  it('passes the nested stacks nothing of the stage or the deployment (they depend on the nested stacks)', () => {
    const parent = templates[0]?.[1] as Template;
    const stageAndDeployment = [
      ...Object.keys(parent.findResources('AWS::ApiGateway::Stage')),
      ...Object.keys(parent.findResources('AWS::ApiGateway::Deployment')),
    ];
    for (const [id, nested] of Object.entries(parent.findResources('AWS::CloudFormation::Stack'))) {
      const parameters = JSON.stringify(nested.Properties.Parameters ?? {});
      for (const other of stageAndDeployment) expect(parameters, id).not.toContain(`"${other}"`);
    }
  });

  it("invokes each method's own function in the method's template, from that method on the stage only", () => {
    const merged = deploymentTemplate(stack);
    const apiId = logicalId(stack.api.api);
    for (const op of routes) {
      const method = stack.api.methods.get(op.operationId);
      const fn = stack.api.functions.get(op.operationId);
      if (!method || !fn) throw new Error(op.operationId);
      // Same nested stack: the integration names the function itself, not a parameter.
      expect(Stack.of(method), op.operationId).toBe(Stack.of(fn));
      const permissions = Object.values(
        merged.findResources('AWS::Lambda::Permission', {
          Properties: { FunctionName: { 'Fn::GetAtt': [logicalId(fn.function), 'Arn'] } },
        }),
      );
      expect(permissions, op.operationId).toHaveLength(1);
      expect(permissions[0]?.Properties.Principal).toBe('apigateway.amazonaws.com');
      const sourceArn = JSON.stringify(permissions[0]?.Properties.SourceArn);
      expect(sourceArn).toContain(JSON.stringify({ Ref: apiId }));
      expect(sourceArn).toContain(`/prod/${op.method}${op.path.replace(/\{[^}]*\}/g, '*')}"`);
    }
  });

  it('names every area of the route table in operationStackAreas, each in one stack', () => {
    const named = Object.values(operationStackAreas).flat();
    expect(new Set(named).size).toBe(named.length);
    for (const op of routes) expect(named, op.operationId).toContain(areaOf(op));
  });

  it('gives an area no entry names a stack of its own, named after it', () => {
    const op = { ...(routes[0] as Operation), handler: 'functions/data-imports/create-import.ts' };
    expect(operationStackOf(op)).toBe('DataImports');
  });
});

describe('the stack split as the route table grows', () => {
  it(`holds 150 operations with every template under ${templateResourceBudget} resources`, () => {
    const grown = grownRoutes(150);
    expect(grown).toHaveLength(150);
    const stack = synthesize(grown);
    const counts = countsOf(stack);
    for (const [path, count] of Object.entries(counts))
      expect(count, path).toBeLessThan(templateResourceBudget);
    const merged = deploymentTemplate(stack);
    merged.resourceCountIs('AWS::ApiGateway::Method', 150 + dataRoutes.length);
    // The operations, the authorizer, the workflow tasks, the bootstrapAdmins resource (ADR 0089), the
    // sweep (ADR 0093), the events publisher (ADR 0094) and the data plane (ADR 0122).
    merged.resourceCountIs(
      'AWS::Lambda::Function',
      150 +
        1 +
        deletionTasks.length +
        importTasks.length +
        jobLoopTasks(harvestWorkflow).length +
        jobLoopTasks(tileCacheWorkflow).length +
        1 +
        1 +
        1 +
        1,
    );
  }, 120_000);

  it('refuses a nested stack over its budget, naming the fix', () => {
    const area = routes.find((op) => areaOf(op) === 'roles') as Operation;
    const many = Array.from({ length: maxOperationsPerStack + 1 }, (_, i) => ({
      ...area,
      operationId: `${area.operationId}${i}`,
      path: `/api/v1/many/r${i}`,
    }));
    expect(() => synthesize(many)).toThrow(
      new RegExp(`Identity stack would hold ${maxOperationsPerStack + 1} operations.*operationStackAreas`),
    );
  });
});
