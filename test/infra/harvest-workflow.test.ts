import { readFileSync } from 'node:fs';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { harvestTaskEntries, harvestTasks } from '#infra/constructs/harvest-workflow.ts';
import { createGeoPlaneApp, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { transientErrors } from '#infra/workflows/deletion-workflow.ts';
import {
  type HarvestTask,
  harvestStepBudgetMs,
  harvestTaskAccess,
  harvestTaskArnPlaceholders,
  harvestTaskHandlers,
  harvestTaskStates,
  substitutedHarvestDefinition,
} from '#infra/workflows/harvest-workflow.ts';
import { actionsIn, asArray, logicalId, type Statement, statementsOfRole } from './iam.ts';
import { deploymentTemplate } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

function synthesize(context: Record<string, unknown> = {}) {
  const { stack } = createGeoPlaneApp({
    context: { ...cdkContext, ...context },
    bundling: false,
    builtinCloudFormationValidation: false,
  });
  return { stack, template: deploymentTemplate(stack) };
}

const logDelivery = [
  'logs:CreateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:DescribeLogGroups',
  'logs:DescribeResourcePolicies',
  'logs:GetLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:UpdateLogDelivery',
];
const xray = [
  'xray:GetSamplingRules',
  'xray:GetSamplingTargets',
  'xray:PutTelemetryRecords',
  'xray:PutTraceSegments',
];
const taskOfState = (name: string) => harvestTaskStates[name] as HarvestTask;
const failureState = Object.keys(harvestTaskStates).find((name) => taskOfState(name) === 'recordFailure');

describe('mosaic harvest workflow (ADR 0136)', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  const fnOf = (task: HarvestTask) => {
    const fn = stack.harvestWorkflow.functions.get(task);
    if (!fn) throw new Error(`no function for ${task}`);
    return fn;
  };
  const fnId = (task: HarvestTask) => logicalId(fnOf(task).function);

  beforeAll(() => {
    ({ stack, template } = synthesize());
  }, 120_000);

  describe('state machine', () => {
    let definition: ReturnType<typeof substitutedHarvestDefinition>;
    let props: Record<string, any>;
    const arnMarker = (task: HarvestTask) => `arn-of:${fnId(task)}`;

    beforeAll(() => {
      props = template.findResources('AWS::StepFunctions::StateMachine')[
        logicalId(stack.harvestWorkflow.stateMachine)
      ]?.Properties;
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
          harvestTasks.map((task) => [
            harvestTaskArnPlaceholders[task],
            { 'Fn::GetAtt': [fnId(task), 'Arn'] },
          ]),
        ),
      );
    });

    it('is the definition of infra/workflows/harvest-workflow.ts, the one the local host runs', () => {
      expect(definition).toEqual(
        substitutedHarvestDefinition(
          Object.fromEntries(harvestTasks.map((task) => [task, arnMarker(task)])) as Record<
            HarvestTask,
            string
          >,
        ),
      );
    });

    it.each(Object.keys(harvestTaskStates))(
      'runs "%s" on its task function, retrying transient errors',
      (name) => {
        const state = (definition.States as Record<string, any>)[name];
        expect(state?.Type).toBe('Task');
        expect(state.Resource).toBe(arnMarker(taskOfState(name)));
        const retried = state.Retry.flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals);
        for (const error of transientErrors) expect(retried).toContain(error);
        expect(retried).not.toContain('States.ALL');
      },
    );

    it('loops the step until done, catches every error into the recorder, and ends it in a Fail state', () => {
      const states = definition.States as Record<string, any>;
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
      expect(harvestTaskEntries).toEqual(Object.values(harvestTaskHandlers));
      const functions = template.findResources('AWS::Lambda::Function');
      for (const task of harvestTasks) {
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

    it.each(harvestTasks)('grants %s exactly its DynamoDB actions from harvestTaskAccess', (task) => {
      const statements = statementsOfRole(template, fnOf(task).role);
      expect(actionsIn(statements, 'dynamodb')).toEqual(
        [
          ...new Set(
            harvestTaskAccess[task].data.map((a) => `dynamodb:${a === 'PutAuditRecord' ? 'PutItem' : a}`),
          ),
        ].sort(),
      );
    });

    it.each(harvestTasks)(
      'gives %s no API Gateway, Step Functions, Lambda, KMS or S3 action (no mosaic buckets)',
      (task) => {
        const statements = statementsOfRole(template, fnOf(task).role);
        for (const service of ['apigateway', 'states', 'lambda', 'kms', 's3'])
          expect(actionsIn(statements, service), task).toEqual([]);
      },
    );
  });

  describe("the state machine's role", () => {
    let statements: Statement[];
    beforeAll(() => {
      statements = statementsOfRole(template, stack.harvestWorkflow.role);
    });

    it('may invoke the two task functions and no other function', () => {
      const invoke = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('lambda:')));
      expect(invoke).toHaveLength(1);
      const resources = asArray(invoke[0]?.Resource as unknown[]);
      expect(resources).toHaveLength(harvestTasks.length);
      expect(resources).toEqual(
        expect.arrayContaining(harvestTasks.map((task) => ({ 'Fn::GetAtt': [fnId(task), 'Arn'] }))),
      );
    });

    it('may otherwise only deliver its logs and traces', () => {
      const all = [...new Set(statements.flatMap((s) => asArray(s.Action)))].sort();
      expect(all).toEqual(['lambda:InvokeFunction', ...logDelivery, ...xray].sort());
    });
  });

  it('lets createMosaicHarvestJob (only) start it, through HARVEST_STATE_MACHINE_ARN', () => {
    const starters = routes.filter((op) => op.starts?.includes('harvest')).map((op) => op.operationId);
    expect(starters).toEqual(['createMosaicHarvestJob']);
    const fn = stack.api.functions.get('createMosaicHarvestJob');
    if (!fn) throw new Error('no createMosaicHarvestJob function');
    const states = statementsOfRole(template, fn.role).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('states:')),
    );
    expect(states).toEqual([
      {
        Effect: 'Allow',
        Action: 'states:StartExecution',
        Resource: { Ref: logicalId(stack.harvestWorkflow.stateMachine) },
      },
    ]);
    const env =
      template.findResources('AWS::Lambda::Function')[logicalId(fn.function)]?.Properties.Environment
        .Variables;
    expect(env.HARVEST_STATE_MACHINE_ARN).toEqual({ Ref: logicalId(stack.harvestWorkflow.stateMachine) });
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
