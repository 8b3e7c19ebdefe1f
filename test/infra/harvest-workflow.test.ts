import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { jobLoopTaskEntries, jobLoopTasks } from '#infra/constructs/job-loop-workflow.ts';
import type { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import {
  type HarvestTask,
  harvestStepBudgetMs,
  harvestTaskHandlers,
  harvestTaskStates,
  harvestWorkflow,
} from '#infra/workflows/harvest-workflow.ts';
import {
  describeJobLoopRole,
  describeJobLoopStateMachine,
  itGrantsEachTaskItsTableActions,
  itIsStartedOnlyBy,
  synthesize,
  taskFunction,
} from '../support/job-loop-workflow.ts';
import { actionsIn, asArray, logicalId, statementsOfRole } from './iam.ts';

const taskOfState = (name: string) => harvestTaskStates[name] as HarvestTask;
const failureState = Object.keys(harvestTaskStates).find((name) => taskOfState(name) === 'recordFailure');

describe('mosaic harvest workflow (ADR 0136)', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  const fnOf = (task: HarvestTask) => taskFunction(stack.harvestWorkflow, task);
  const fnId = (task: HarvestTask) => logicalId(fnOf(task).function);

  const deployed = () => ({ stack, template, workflow: stack.harvestWorkflow });

  beforeAll(() => {
    ({ stack, template } = synthesize());
  }, 120_000);

  describeJobLoopStateMachine(harvestWorkflow, deployed, (definitionOf) => {
    it('loops the step until done, catches every error into the recorder, and ends it in a Fail state', () => {
      const states = definitionOf().States as Record<string, any>;
      const step = Object.keys(harvestTaskStates).find((name) => taskOfState(name) === 'step') as string;
      expect(states[step].Catch).toEqual([
        expect.objectContaining({ ErrorEquals: ['States.ALL'], Next: failureState }),
      ]);
      const choice = states[states[step].Next];
      expect(choice.Type).toBe('Choice');
      expect(choice.Choices).toEqual([{ Variable: '$.done', BooleanEquals: false, Next: step }]);
      expect(states[states[failureState as string].Next]?.Type).toBe('Fail');
      // The ASL's task timeout covers the Lambda's.
      expect(states[step].TimeoutSeconds).toBeGreaterThanOrEqual(180);
    });
  });

  describe('task functions', () => {
    it('has one function per task, bundled with the API functions, with its timeout and budget', () => {
      expect([...stack.harvestWorkflow.functions.keys()].sort()).toEqual(
        Object.keys(harvestTaskHandlers).sort(),
      );
      expect(jobLoopTaskEntries(harvestWorkflow)).toEqual(Object.values(harvestTaskHandlers));
      const functions = template.findResources('AWS::Lambda::Function');
      for (const task of jobLoopTasks(harvestWorkflow)) {
        const props = functions[fnId(task)]?.Properties;
        const env = props.Environment.Variables as Record<string, unknown>;
        expect(props.Timeout, task).toBe(task === 'step' ? 180 : 30);
        expect(env.HARVEST_STEP_BUDGET_MS, task).toBe(
          task === 'step' ? String(harvestStepBudgetMs) : undefined,
        );
        expect(env.HARVEST_STATE_MACHINE_ARN, task).toBeUndefined();
      }
      // The budget leaves the step time to finish the chunk in flight.
      expect(harvestStepBudgetMs).toBeLessThanOrEqual(180_000 / 2);
    });

    itGrantsEachTaskItsTableActions(harvestWorkflow, 'harvestTaskAccess', deployed);

    it.each(jobLoopTasks(harvestWorkflow))(
      'gives %s no API Gateway, Step Functions, Lambda, KMS or S3 action (no mosaic buckets)',
      (task) => {
        const statements = statementsOfRole(template, fnOf(task).role);
        for (const service of ['apigateway', 'states', 'lambda', 'kms', 's3'])
          expect(actionsIn(statements, service), task).toEqual([]);
      },
    );
  });

  describeJobLoopRole(harvestWorkflow, deployed);

  itIsStartedOnlyBy(deployed, {
    operationId: 'createMosaicHarvestJob',
    starts: 'harvest',
    variable: 'HARVEST_STATE_MACHINE_ARN',
  });
});

describe('mosaic harvest workflow with mosaic buckets', () => {
  it('lets the step (only) read the named buckets', () => {
    const { stack, template } = synthesize({ mosaicBuckets: 'ortho-bucket' });
    const step = stack.harvestWorkflow.functions.get('step');
    const recorder = stack.harvestWorkflow.functions.get('recordFailure');
    if (!step || !recorder) throw new Error('no task functions');
    const s3 = statementsOfRole(template, step.role).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('s3:')),
    );
    expect(s3).toHaveLength(1);
    expect(asArray(s3[0]?.Action).sort()).toEqual(['s3:GetObject', 's3:ListBucket']);
    expect(JSON.stringify(s3[0]?.Resource)).toContain('ortho-bucket');
    expect(actionsIn(statementsOfRole(template, recorder.role), 's3')).toEqual([]);
  }, 120_000);
});
