import {
  type JobLoopSpec,
  type JobLoopTask,
  jobLoopDefinition,
  jobLoopTaskStates,
  substitutedJobLoopDefinition,
} from './job-loop-workflow.ts';

/**
 * The tile cache job state machine (ADR 0139): a job loop whose step seeds, reseeds or truncates
 * chunks of tiles for its time budget (60 s by default, well under its timeout). A million tiles at
 * a few hundred a minute take some thousands of loop turns at a few history events each, below
 * Step Functions' 25,000.
 */
export const tileCacheWorkflow: JobLoopSpec = {
  comment: "GeoPlane: seeds, reseeds or truncates a workspace's persistent tile cache, in chunks",
  name: 'tile-cache',
  title: 'tile cache',
  stepBudget: { ms: 60_000, variable: 'TILE_CACHE_STEP_BUDGET_MS' },
  handlers: {
    step: 'functions/workflow-tasks/tile-cache-step.ts',
    recordFailure: 'functions/workflow-tasks/record-tile-cache-failure.ts',
  },
  access: {
    // It renders tiles from the operator's PostGIS: placed in the VPC with cdk.json `vpc` (ADR 0112).
    step: {
      data: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem', 'DeleteItem', 'PutAuditRecord'],
      postgres: true,
    },
    recordFailure: { data: ['GetItem', 'UpdateItem', 'DeleteItem', 'PutAuditRecord'] },
  },
  placeholders: { step: 'TileCacheStepFunctionArn', recordFailure: 'RecordTileCacheFailureFunctionArn' },
  states: {
    step: 'Run the next chunks of tiles',
    finished: 'Is the tile cache job finished?',
    record: 'Record why the tile cache job failed',
    failed: 'The tile cache job failed',
    succeeded: 'The tile cache job is finished',
  },
  error: 'TileCacheJobFailed',
  ids: ['workspace_id'],
};

export type TileCacheTask = JobLoopTask;
export const tileCacheTaskHandlers = tileCacheWorkflow.handlers;
export const tileCacheTaskAccess = tileCacheWorkflow.access;
export const tileCacheTaskStates = jobLoopTaskStates(tileCacheWorkflow);
/** Time the step spends on chunks per invocation before it returns (well under its timeout). */
export const tileCacheStepBudgetMs = tileCacheWorkflow.stepBudget.ms;

export function tileCacheWorkflowDefinition() {
  return jobLoopDefinition(tileCacheWorkflow);
}

export function substitutedTileCacheDefinition(arns: Record<TileCacheTask, string>) {
  return substitutedJobLoopDefinition(tileCacheWorkflow, arns);
}
