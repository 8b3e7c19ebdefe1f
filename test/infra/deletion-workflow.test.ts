import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { CatalogTable } from '#infra/constructs/catalog-table.ts';
import {
  deletionBatchBudgetMs,
  deletionTaskEntries,
  deletionTasks,
} from '#infra/constructs/deletion-workflow.ts';
import { FunctionBundles } from '#infra/constructs/function-bundles.ts';
import { ManagementApi, managementApiEntries } from '#infra/constructs/management-api.ts';
import { stageConfigOf } from '#infra/constructs/stage-config.ts';
import { createGeoPlaneApp, GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import {
  type DeletionTask,
  deletionTaskAccess,
  deletionTaskArnPlaceholders,
  deletionTaskHandlers,
  deletionTaskStates,
  substitutedDeletionDefinition,
  transientErrors,
} from '#infra/workflows/deletion-workflow.ts';
import {
  actionsIn,
  asArray,
  expectTaskInvokerRole,
  logDelivery,
  logicalId,
  policyDocuments,
  type Statement,
  statementsOfRole,
  xray,
} from './iam.ts';
import { deploymentTemplate } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

/**
 * The stack with a given route table, synthesized without bundling (as the other infra tests do);
 * `template` holds the nested stacks' resources too, their parameters resolved (ADR 0077).
 */
function synthesize(routeTable?: readonly Operation[]) {
  if (!routeTable) {
    const { stack } = createGeoPlaneApp({
      context: cdkContext,
      bundling: false,
      builtinCloudFormationValidation: false,
    });
    return { stack, template: deploymentTemplate(stack) };
  }
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  const stack = new GeoPlaneStack(app, 'GeoPlane', { config: stageConfigOf(app.node), routes: routeTable });
  return { stack, template: deploymentTemplate(stack) };
}

/** The routes that will start deletions, marked so even before the route table says so. */
const startingIds = new Set(['deleteService', 'deleteWorkspace', 'retryDeletionOperation']);
const syntheticRoutes: Operation[] = routes.map((op) =>
  startingIds.has(op.operationId) ? { ...op, starts: ['deletion'] as const } : op,
);

const startsDeletion = (op: Operation) => op.starts?.includes('deletion') === true;

const taskOfState = (name: string) => deletionTaskStates[name] as DeletionTask;
const failureState = Object.keys(deletionTaskStates).find((name) => taskOfState(name) === 'recordFailure');

describe('deletion workflow', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  let stateMachineId: string;
  const fnId = (task: DeletionTask) => {
    const fn = stack.deletionWorkflow.functions.get(task);
    if (!fn) throw new Error(`no function for ${task}`);
    return logicalId(fn.function);
  };

  beforeAll(() => {
    ({ stack, template } = synthesize());
    stateMachineId = logicalId(stack.deletionWorkflow.stateMachine);
  });

  describe('state machine', () => {
    it('is a Standard state machine with X-Ray and ALL events logged without execution data', () => {
      // Four workflows: the deletion, the import (test/infra/import-workflow.test.ts), the mosaic
      // harvest (test/infra/harvest-workflow.test.ts) and the tile cache workflow (test/infra/tile-cache.test.ts).
      template.resourceCountIs('AWS::StepFunctions::StateMachine', 4);
      const logGroupId = logicalId(stack.deletionWorkflow.logGroup);
      template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
        StateMachineType: 'STANDARD',
        TracingConfiguration: { Enabled: true },
        LoggingConfiguration: {
          Level: 'ALL',
          IncludeExecutionData: false,
          Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [logGroupId, 'Arn'] } } }],
        },
      });
      template.hasResourceProperties('AWS::Logs::LogGroup', {
        LogGroupName: Match.stringLikeRegexp('^/aws/vendedlogs/states/'),
        RetentionInDays: 30,
      });
    });

    describe('definition (after the substitutions)', () => {
      let definition: ReturnType<typeof substitutedDeletionDefinition>;
      /** What each task's ARN placeholder stands for in the deployed definition. */
      const arnMarker = (task: DeletionTask) => `arn-of:${fnId(task)}`;

      beforeAll(() => {
        const props = template.findResources('AWS::StepFunctions::StateMachine')[stateMachineId]?.Properties;
        const substitutions = props.DefinitionSubstitutions as Record<
          string,
          { 'Fn::GetAtt': [string, string] }
        >;
        let text = props.DefinitionString as string;
        expect(typeof text).toBe('string');
        for (const [placeholder, value] of Object.entries(substitutions)) {
          text = text.replaceAll(`\${${placeholder}}`, `arn-of:${value['Fn::GetAtt'][0]}`);
        }
        expect(text).not.toContain('${');
        definition = JSON.parse(text);
      });

      it("maps each task's placeholder to exactly its own function's ARN", () => {
        const props = template.findResources('AWS::StepFunctions::StateMachine')[stateMachineId]?.Properties;
        expect(props.DefinitionSubstitutions).toEqual(
          Object.fromEntries(
            deletionTasks.map((task) => [
              deletionTaskArnPlaceholders[task],
              { 'Fn::GetAtt': [fnId(task), 'Arn'] },
            ]),
          ),
        );
      });

      it('is the definition of infra/workflows/deletion-workflow.ts, the one the local host runs', () => {
        expect(definition).toEqual(
          substitutedDeletionDefinition(
            Object.fromEntries(deletionTasks.map((task) => [task, arnMarker(task)])) as Record<
              DeletionTask,
              string
            >,
          ),
        );
      });

      it.each(Object.keys(deletionTaskStates))(
        'runs "%s" on its task function, retrying transient errors',
        (name) => {
          const state = (definition.States as Record<string, any>)[name];
          expect(state?.Type).toBe('Task');
          expect(state.Resource).toBe(arnMarker(taskOfState(name)));
          expect(state.Retry?.length).toBeGreaterThan(0);
          const retried = state.Retry.flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals);
          for (const error of transientErrors) expect(retried).toContain(error);
          expect(retried).not.toContain('States.ALL');
        },
      );

      it.each(Object.keys(deletionTaskStates).filter((name) => name !== failureState))(
        '"%s" catches every error into the failure recorder',
        (name) => {
          const state = (definition.States as Record<string, any>)[name];
          expect(state.Catch).toEqual([
            expect.objectContaining({ ErrorEquals: ['States.ALL'], Next: failureState }),
          ]);
        },
      );

      it('ends a recorded failure in a Fail state', () => {
        expect(failureState).toBeDefined();
        const states = definition.States as Record<string, any>;
        const recorder = states[failureState as string];
        expect(states[recorder.Next]?.Type).toBe('Fail');
      });
    });
  });

  describe('task functions', () => {
    it('has one function per task, with the timeout and environment of its task', () => {
      expect([...stack.deletionWorkflow.functions.keys()].sort()).toEqual(
        Object.keys(deletionTaskHandlers).sort(),
      );
      const functions = template.findResources('AWS::Lambda::Function');
      const tableId = logicalId(stack.table.table);
      for (const task of deletionTasks) {
        const props = functions[fnId(task)]?.Properties;
        const env = props.Environment.Variables as Record<string, unknown>;
        expect(props.Timeout, task).toBe(task === 'deleteBatch' ? 120 : 30);
        expect(env.TABLE_NAME, task).toEqual({ Ref: tableId });
        expect(env.DELETION_BATCH_BUDGET_MS, task).toBe(
          task === 'deleteBatch' ? String(deletionBatchBudgetMs) : undefined,
        );
        // Pool keys outlive workspaces (ADR 0111): no deletion task touches API Gateway.
        expect(env.USAGE_PLAN_NAME, task).toBeUndefined();
        expect(env.DELETION_STATE_MACHINE_ARN, task).toBeUndefined();
      }
      // The budget leaves the batch task time to finish the page in flight.
      expect(deletionBatchBudgetMs).toBeLessThanOrEqual(120_000 / 2);
    });

    it('bundles the task entries with the API functions (one esbuild run)', () => {
      expect(deletionTaskEntries).toEqual(Object.values(deletionTaskHandlers));
    });

    it.each(deletionTasks)('grants %s exactly its DynamoDB actions from deletionTaskAccess', (task) => {
      const fn = stack.deletionWorkflow.functions.get(task);
      if (!fn) throw new Error(task);
      const statements = statementsOfRole(template, fn.role);
      expect(actionsIn(statements, 'dynamodb')).toEqual(
        // PutAuditRecord is PutItem on the audit partitions (ADR 0094).
        [
          ...new Set(
            deletionTaskAccess[task].data.map((a) => `dynamodb:${a === 'PutAuditRecord' ? 'PutItem' : a}`),
          ),
        ].sort(),
      );
    });

    it.each(deletionTasks)('gives %s no API Gateway, Step Functions, Lambda, KMS or S3 action', (task) => {
      const fn = stack.deletionWorkflow.functions.get(task);
      if (!fn) throw new Error(task);
      const statements = statementsOfRole(template, fn.role);
      for (const service of ['apigateway', 'states', 'lambda', 'kms', 's3'])
        expect(actionsIn(statements, service), task).toEqual([]);
    });
  });

  describe("the state machine's role", () => {
    let statements: Statement[];

    beforeAll(() => {
      statements = statementsOfRole(template, stack.deletionWorkflow.role);
    });

    it('is assumed by Step Functions only, with no managed policy, and may invoke the three task functions and no other function', () => {
      expectTaskInvokerRole(template, stack.deletionWorkflow.role, deletionTasks.map(fnId));
    });

    it('may otherwise only deliver its logs and traces', () => {
      const all = [...new Set(statements.flatMap((s) => asArray(s.Action)))].sort();
      expect(all).toEqual(['lambda:InvokeFunction', ...logDelivery, ...xray].sort());
    });
  });
});

/**
 * Routes with `starts: ['deletion']` may start the deletion state machine (and routes starting
 * imports the import one, checked alike here), and nothing else may — except the import state
 * machine, which runs a rollback's deletion as its nested execution (test/infra/import-workflow.test.ts).
 */
function checkStartGrants(stack: GeoPlaneStack, template: Template, routeTable: readonly Operation[]) {
  const arnOf = {
    deletion: { Ref: logicalId(stack.deletionWorkflow.stateMachine) },
    import: { Ref: logicalId(stack.importWorkflow.stateMachine) },
    harvest: { Ref: logicalId(stack.harvestWorkflow.stateMachine) },
    tileCache: { Ref: logicalId(stack.tileCacheWorkflow.stateMachine) },
  };
  const variableOf = {
    deletion: 'DELETION_STATE_MACHINE_ARN',
    import: 'IMPORT_STATE_MACHINE_ARN',
    harvest: 'HARVEST_STATE_MACHINE_ARN',
    tileCache: 'TILE_CACHE_STATE_MACHINE_ARN',
  };
  const functions = template.findResources('AWS::Lambda::Function');
  const starters = new Set<string>();
  for (const op of routeTable) {
    const fn = stack.api.functions.get(op.operationId);
    if (!fn) throw new Error(`no function for ${op.operationId}`);
    const statements = statementsOfRole(template, fn.role).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('states:')),
    );
    const env = functions[logicalId(fn.function)]?.Properties.Environment.Variables;
    const started = new Set(op.starts ?? []);
    if (started.size > 0) starters.add(logicalId(fn.role));
    // Exactly StartExecution on the started machines (IAM may merge them into one statement).
    for (const st of statements)
      expect([st.Effect, st.Action], op.operationId).toEqual(['Allow', 'states:StartExecution']);
    const resources = statements
      .flatMap((st) => asArray(st.Resource as never) as unknown[])
      .map((r) => JSON.stringify(r));
    expect(resources.sort(), op.operationId).toEqual(
      (['deletion', 'import', 'harvest', 'tileCache'] as const)
        .filter((w) => started.has(w))
        .map((w) => JSON.stringify(arnOf[w]))
        .sort(),
    );
    for (const w of ['deletion', 'import', 'harvest', 'tileCache'] as const) {
      expect(env[variableOf[w]], `${op.operationId} ${w}`).toEqual(started.has(w) ? arnOf[w] : undefined);
    }
  }
  const importMachine = logicalId(stack.importWorkflow.role);
  const sweep = logicalId(stack.sweeps.function.role);
  // No other role (authorizer, tasks, the state machines' own) has any Step Functions action.
  for (const [id, statements] of policyDocuments(template)) {
    if (starters.has(id)) continue;
    // The import state machine runs a rollback's deletion as its nested execution (ADR 0083).
    if (id === importMachine) {
      const states = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('states:')));
      expect(states[0], id).toEqual({
        Effect: 'Allow',
        Action: 'states:StartExecution',
        Resource: arnOf.deletion,
      });
      expect(actionsIn(statements, 'states'), id).toEqual([
        'states:DescribeExecution',
        'states:StartExecution',
        'states:StopExecution',
      ]);
      continue;
    }
    // The scheduled sweep restarts stuck work and asks whether an execution still runs (ADR 0093).
    if (id === sweep) {
      expect(actionsIn(statements, 'states'), id).toEqual([
        'states:DescribeExecution',
        'states:StartExecution',
      ]);
      continue;
    }
    expect(actionsIn(statements, 'states'), id).toEqual([]);
  }
  return starters;
}

describe('routes that start the deletion workflow', () => {
  it('the route table: every route with `starts` may StartExecution the state machine, no other may', () => {
    const { stack, template } = synthesize();
    const starters = checkStartGrants(stack, template, routes);
    expect(starters.size).toBe(routes.filter((op) => op.starts?.length).length);
  }, 60_000);

  it('a route table where deleteService, deleteWorkspace (and retryDeletionOperation) start deletions', () => {
    const { stack, template } = synthesize(syntheticRoutes);
    const starters = checkStartGrants(stack, template, syntheticRoutes);
    // The check above tests something: at least the two existing delete routes start the workflow.
    expect(starters.size).toBeGreaterThanOrEqual(2);
    expect(starters.size).toBe(syntheticRoutes.filter((op) => op.starts?.length).length);
  }, 60_000);

  it('refuses a route that starts a workflow the stack does not deploy', () => {
    const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'NoWorkflow');
    const op = syntheticRoutes.find(startsDeletion) as Operation;
    expect(
      () =>
        new ManagementApi(stack, 'Management', {
          config: stageConfigOf(app.node),
          table: new CatalogTable(stack, 'Catalog'),
          routes: [op],
          bundles: new FunctionBundles(repositoryRoot, managementApiEntries([op])),
        }),
    ).toThrow(/starts the deletion workflow, which is not deployed/);
  });
});
