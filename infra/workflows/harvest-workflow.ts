import type { DataAction } from '../../shared/api/operation.ts';
import { transientErrors } from './deletion-workflow.ts';

/**
 * The mosaic harvest state machine, as plain Amazon States Language built in code (ADR 0136):
 * CDK deploys exactly this object as a Standard state machine; the local host runs the very same
 * object under `aws-local-stepfunctions`. One task harvests chunks of files for its time budget
 * (60 s by default, well under its 120 s timeout) and says whether the job is finished; the job
 * item holds the cursor and the progress, so a re-run resumes. 100,000 files take about a hundred
 * loop turns at a few history events each, far below 25,000.
 */

/** The Lambda task functions of the workflow: entry modules relative to the repository root. */
export const harvestTaskHandlers = {
  step: 'functions/workflow-tasks/harvest-step.ts',
  recordFailure: 'functions/workflow-tasks/record-harvest-failure.ts',
} as const;

export type HarvestTask = keyof typeof harvestTaskHandlers;

/**
 * What each task function may do to the table (CDK grants exactly this); the step also reads the
 * stage's mosaic buckets (granted by the construct). Their transactions carry audit records.
 */
export const harvestTaskAccess: Record<HarvestTask, { data: readonly DataAction[] }> = {
  step: {
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem', 'PutAuditRecord'],
  },
  recordFailure: { data: ['GetItem', 'UpdateItem', 'DeleteItem', 'PutAuditRecord'] },
};

/** The `definitionSubstitutions` placeholder of each task's function ARN. */
export const harvestTaskArnPlaceholders: Record<HarvestTask, string> = {
  step: 'HarvestStepFunctionArn',
  recordFailure: 'RecordHarvestFailureFunctionArn',
};

/** State names (sentences) of the task states, and the task each runs. */
export const harvestTaskStates: Record<string, HarvestTask> = {
  'Harvest the next chunks of files': 'step',
  'Record why the harvest failed': 'recordFailure',
};

/** Time the step spends on chunks per invocation before it returns (well under its timeout). */
export const harvestStepBudgetMs = 60_000;

const retry = [
  {
    ErrorEquals: [...transientErrors],
    IntervalSeconds: 2,
    MaxAttempts: 6,
    BackoffRate: 2,
    MaxDelaySeconds: 60,
    JitterStrategy: 'FULL',
  },
];

const arn = (task: HarvestTask) => `\${${harvestTaskArnPlaceholders[task]}}`;
const ids = { 'job_id.$': '$.job_id', 'workspace_id.$': '$.workspace_id', 'service_id.$': '$.service_id' };

/** The definition. Execution input: `{job_id, workspace_id, service_id}`; the job item holds the progress. */
export function harvestWorkflowDefinition() {
  return {
    Comment: 'GeoPlane: harvests the files under a raster mosaic root into granules, in chunks',
    StartAt: 'Harvest the next chunks of files',
    TimeoutSeconds: 7 * 86400,
    States: {
      'Harvest the next chunks of files': {
        Type: 'Task',
        Resource: arn('step'),
        Parameters: ids,
        TimeoutSeconds: 300,
        Retry: retry,
        Catch: [
          { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Record why the harvest failed' },
        ],
        Next: 'Is the harvest finished?',
      },
      'Is the harvest finished?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.done', BooleanEquals: false, Next: 'Harvest the next chunks of files' }],
        Default: 'The harvest is finished',
      },
      'Record why the harvest failed': {
        Type: 'Task',
        Resource: arn('recordFailure'),
        Parameters: { ...ids, 'error.$': '$.error' },
        Retry: retry,
        Next: 'The harvest failed',
      },
      'The harvest failed': { Type: 'Fail', Error: 'HarvestFailed', Cause: 'See the job error.' },
      'The harvest is finished': { Type: 'Succeed' },
    },
  } as const;
}

/** The definition with the task ARNs filled in (what `definitionSubstitutions` does in AWS). */
export function substitutedHarvestDefinition(arns: Record<HarvestTask, string>) {
  let text = JSON.stringify(harvestWorkflowDefinition());
  for (const [task, placeholder] of Object.entries(harvestTaskArnPlaceholders)) {
    text = text.replaceAll(`\${${placeholder}}`, arns[task as HarvestTask]);
  }
  return JSON.parse(text) as ReturnType<typeof harvestWorkflowDefinition>;
}
