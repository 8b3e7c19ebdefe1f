import { sweepConfig } from '#config/env.ts';
import type { SweepPorts, WorkflowExecutions } from '#domain/sweeps.ts';
import { DynamoImportRepository } from '#store/imports-repository.ts';
import { DynamoStuckDeletions, stuckHarvests, stuckTileCacheJobs } from '#store/sweeps.ts';
import { stepFunctionsExecutions } from '#workflows/executions.ts';
import { deletionSteps, workflowStarter } from './workflows.ts';

/**
 * The ports of the scheduled sweep of stuck work (ADR 0093): the store's deletions, imports,
 * harvest jobs and tile cache jobs,
 * the configured workflow starter (Step Functions, or the local runner) and the liveness check —
 * Step Functions' DescribeExecution unless the host passes its own (the local runner).
 */
export function sweepPorts(executions?: WorkflowExecutions): SweepPorts {
  const starter = workflowStarter();
  return {
    settings: sweepConfig(),
    executions: executions ?? stepFunctionsExecutions(),
    deletions: new DynamoStuckDeletions(),
    deletionSteps: deletionSteps(),
    deletionStarter: starter,
    imports: new DynamoImportRepository(),
    importStarter: starter,
    harvests: stuckHarvests(),
    harvestStarter: starter,
    tileCacheJobs: stuckTileCacheJobs(),
    tileCacheStarter: starter,
  };
}
