import {
  type JobLoopSpec,
  type JobLoopTask,
  jobLoopDefinition,
  jobLoopTaskStates,
  substitutedJobLoopDefinition,
} from './job-loop-workflow.ts';

/**
 * The mosaic harvest state machine, as plain Amazon States Language built in code (ADR 0136):
 * CDK deploys exactly this object as a Standard state machine; the local host runs the very same
 * object under `aws-local-stepfunctions`. One task harvests chunks of files for its time budget
 * (60 s by default, well under its 120 s timeout) and says whether the job is finished; the job
 * item holds the cursor and the progress, so a re-run resumes. 100,000 files take about a hundred
 * loop turns at a few history events each, far below 25,000.
 */

/** The job loop of a harvest (ADR 0136; the loop itself is `job-loop-workflow.ts`). */
export const harvestWorkflow: JobLoopSpec = {
  comment: 'GeoPlane: harvests the files under a raster mosaic root into granules, in chunks',
  name: 'harvest',
  title: 'mosaic harvest',
  stepBudget: { ms: 60_000, variable: 'HARVEST_STEP_BUDGET_MS' },
  handlers: {
    step: 'functions/workflow-tasks/harvest-step.ts',
    recordFailure: 'functions/workflow-tasks/record-harvest-failure.ts',
  },
  // The step also reads the stage's mosaic buckets (granted by the construct).
  access: {
    step: {
      data: [
        'GetItem',
        'Query',
        'PutItem',
        'UpdateItem',
        'DeleteItem',
        'ConditionCheckItem',
        'PutAuditRecord',
      ],
    },
    recordFailure: { data: ['GetItem', 'UpdateItem', 'DeleteItem', 'PutAuditRecord'] },
  },
  placeholders: { step: 'HarvestStepFunctionArn', recordFailure: 'RecordHarvestFailureFunctionArn' },
  states: {
    step: 'Harvest the next chunks of files',
    finished: 'Is the harvest finished?',
    record: 'Record why the harvest failed',
    failed: 'The harvest failed',
    succeeded: 'The harvest is finished',
  },
  error: 'HarvestFailed',
  ids: ['workspace_id', 'service_id'],
};

export type HarvestTask = JobLoopTask;
/** The Lambda task functions of the workflow: entry modules relative to the repository root. */
export const harvestTaskHandlers = harvestWorkflow.handlers;
/** What each task function may do to the table (CDK grants exactly this); their transactions carry audit records. */
export const harvestTaskAccess = harvestWorkflow.access;
/** The `definitionSubstitutions` placeholder of each task's function ARN. */
export const harvestTaskArnPlaceholders = harvestWorkflow.placeholders;
/** State names (sentences) of the task states, and the task each runs. */
export const harvestTaskStates = jobLoopTaskStates(harvestWorkflow);
/** Time the step spends on chunks per invocation before it returns (well under its timeout). */
export const harvestStepBudgetMs = harvestWorkflow.stepBudget.ms;

/** The definition. Execution input: `{job_id, workspace_id, service_id}`; the job item holds the progress. */
export function harvestWorkflowDefinition() {
  return jobLoopDefinition(harvestWorkflow);
}

/** The definition with the task ARNs filled in (what `definitionSubstitutions` does in AWS). */
export function substitutedHarvestDefinition(arns: Record<HarvestTask, string>) {
  return substitutedJobLoopDefinition(harvestWorkflow, arns);
}
