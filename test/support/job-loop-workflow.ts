/**
 * What the template tests of the two job-loop workflows (mosaic harvest, ADR 0136; tile cache jobs,
 * ADR 0139) share: the synthesized stack, the deployed state machine with its ARNs named, and the
 * assertions every job loop answers the same way (its state machine, its role).
 */
import { readFileSync } from 'node:fs';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import type { ApiFunction } from '#infra/constructs/api-function.ts';
import { type JobLoopWorkflow, jobLoopTasks } from '#infra/constructs/job-loop-workflow.ts';
import { createGeoPlaneApp, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { transientErrors } from '#infra/workflows/deletion-workflow.ts';
import {
  type JobLoopSpec,
  type JobLoopTask,
  jobLoopTaskStates,
  substitutedJobLoopDefinition,
} from '#infra/workflows/job-loop-workflow.ts';
import {
  actionsIn,
  asArray,
  expectTaskInvokerRole,
  logDelivery,
  logicalId,
  type Statement,
  statementsOfRole,
  xray,
} from '../infra/iam.ts';
import { deploymentTemplate } from '../infra/templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

/** The whole app as `cdk synth` builds it from cdk.json (with `context` on top), without bundling. */
export function synthesize(context: Record<string, unknown> = {}) {
  const { stack } = createGeoPlaneApp({
    context: { ...cdkContext, ...context },
    bundling: false,
    builtinCloudFormationValidation: false,
  });
  return { stack, template: deploymentTemplate(stack) };
}

/** A synthesized job loop: the stack and template it is in, and its construct. */
export interface DeployedJobLoop {
  stack: GeoPlaneStack;
  template: Template;
  workflow: JobLoopWorkflow;
}

/** A task's function. */
export function taskFunction(workflow: JobLoopWorkflow, task: JobLoopTask): ApiFunction {
  const fn = workflow.functions.get(task);
  if (!fn) throw new Error(`no function for ${task}`);
  return fn;
}

/** The logical id of a task's function. */
export function taskFunctionId(workflow: JobLoopWorkflow, task: JobLoopTask): string {
  return logicalId(taskFunction(workflow, task).function);
}

/**
 * The state machine assertions every job loop answers (`deployed` is read once the suite's
 * `beforeAll` synthesized it): Standard, traced and logged; each placeholder its own function's
 * ARN; exactly the definition of `spec` (the one the local host runs); each task state retrying
 * transient errors.
 */
export function describeJobLoopStateMachine(
  spec: JobLoopSpec,
  deployed: () => DeployedJobLoop,
  more?: (definition: () => ReturnType<typeof substitutedJobLoopDefinition>) => void,
): void {
  describe('state machine', () => {
    let definition: ReturnType<typeof substitutedJobLoopDefinition>;
    let props: Record<string, any>;
    const tasks = jobLoopTasks(spec);
    const taskStates = jobLoopTaskStates(spec);
    const fnId = (task: JobLoopTask) => taskFunctionId(deployed().workflow, task);
    const arnMarker = (task: JobLoopTask) => `arn-of:${fnId(task)}`;

    beforeAll(() => {
      const { template, workflow } = deployed();
      props = template.findResources('AWS::StepFunctions::StateMachine')[logicalId(workflow.stateMachine)]
        ?.Properties;
      let text = props.DefinitionString as string;
      for (const [placeholder, value] of Object.entries(
        props.DefinitionSubstitutions as Record<string, { 'Fn::GetAtt': [string, string] }>,
      )) {
        text = text.replaceAll(`\${${placeholder}}`, `arn-of:${value['Fn::GetAtt'][0]}`);
      }
      expect(text).not.toContain('${');
      definition = JSON.parse(text);
    });

    it('is a Standard state machine with X-Ray and ALL events logged without execution data', () => {
      expect(props.StateMachineType).toBe('STANDARD');
      expect(props.TracingConfiguration).toEqual({ Enabled: true });
      expect(props.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
    });

    it("maps each task's placeholder to exactly its own function's ARN", () => {
      expect(props.DefinitionSubstitutions).toEqual(
        Object.fromEntries(
          tasks.map((task) => [spec.placeholders[task], { 'Fn::GetAtt': [fnId(task), 'Arn'] }]),
        ),
      );
    });

    it(`is the definition of infra/workflows/${spec.name}-workflow.ts, the one the local host runs`, () => {
      expect(definition).toEqual(
        substitutedJobLoopDefinition(
          spec,
          Object.fromEntries(tasks.map((task) => [task, arnMarker(task)])) as Record<JobLoopTask, string>,
        ),
      );
    });

    it.each(Object.keys(taskStates))('runs "%s" on its task function, retrying transient errors', (name) => {
      const state = (definition.States as Record<string, any>)[name];
      expect(state?.Type).toBe('Task');
      expect(state.Resource).toBe(arnMarker(taskStates[name] as JobLoopTask));
      const retried = state.Retry.flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals);
      for (const error of transientErrors) expect(retried).toContain(error);
      expect(retried).not.toContain('States.ALL');
    });

    more?.(() => definition);
  });
}

/** The role assertions every job loop answers: it invokes its two task functions, and otherwise only logs and traces. */
export function describeJobLoopRole(spec: JobLoopSpec, deployed: () => DeployedJobLoop): void {
  describe("the state machine's role", () => {
    let statements: Statement[];
    beforeAll(() => {
      const { template, workflow } = deployed();
      statements = statementsOfRole(template, workflow.role);
    });

    it('is assumed by Step Functions only, with no managed policy, and may invoke the two task functions and no other function', () => {
      const { template, workflow } = deployed();
      expectTaskInvokerRole(
        template,
        workflow.role,
        jobLoopTasks(spec).map((task) => taskFunctionId(workflow, task)),
      );
    });

    it('may otherwise only deliver its logs and traces', () => {
      const all = [...new Set(statements.flatMap((s) => asArray(s.Action)))].sort();
      expect(all).toEqual(['lambda:InvokeFunction', ...logDelivery, ...xray].sort());
    });
  });
}

/** Each task function may do exactly the table actions its spec's `access` names (`accessName` in the test names). */
export function itGrantsEachTaskItsTableActions(
  spec: JobLoopSpec,
  accessName: string,
  deployed: () => DeployedJobLoop,
): void {
  it.each(jobLoopTasks(spec))(`grants %s exactly its DynamoDB actions from ${accessName}`, (task) => {
    const { template, workflow } = deployed();
    const statements = statementsOfRole(template, taskFunction(workflow, task).role);
    expect(actionsIn(statements, 'dynamodb')).toEqual(
      [
        ...new Set(spec.access[task].data.map((a) => `dynamodb:${a === 'PutAuditRecord' ? 'PutItem' : a}`)),
      ].sort(),
    );
  });
}

/**
 * Only `operationId` starts the workflow (its route's `starts` names `starts`): it may start this
 * state machine and nothing else of Step Functions, and finds it in its `variable`.
 */
export function itIsStartedOnlyBy(
  deployed: () => DeployedJobLoop,
  started: { operationId: string; starts: 'harvest' | 'tileCache'; variable: string },
): void {
  it(`lets ${started.operationId} (only) start it, through ${started.variable}`, () => {
    const { stack, template, workflow } = deployed();
    const starters = routes.filter((op) => op.starts?.includes(started.starts)).map((op) => op.operationId);
    expect(starters).toEqual([started.operationId]);
    const fn = stack.api.functions.get(started.operationId);
    if (!fn) throw new Error(`no ${started.operationId} function`);
    const states = statementsOfRole(template, fn.role).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('states:')),
    );
    expect(states).toEqual([
      {
        Effect: 'Allow',
        Action: 'states:StartExecution',
        Resource: { Ref: logicalId(workflow.stateMachine) },
      },
    ]);
    const env =
      template.findResources('AWS::Lambda::Function')[logicalId(fn.function)]?.Properties.Environment
        .Variables;
    expect(env[started.variable]).toEqual({ Ref: logicalId(workflow.stateMachine) });
  });
}
