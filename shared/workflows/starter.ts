import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { UnavailableError } from '#domain/errors.ts';
import type { ImportWorkflowInput } from '#domain/import-model.ts';
import type { ImportStarter } from '#domain/imports.ts';
import type { HarvestStarter, HarvestWorkflowInput } from '#domain/mosaic-harvest-jobs.ts';
import type { TileCacheStarter, TileCacheWorkflowInput } from '#domain/tile-cache-jobs.ts';
import type { DeletionWorkflowInput, WorkflowStarter } from '#domain/workflows.ts';
import { awsClient } from '#telemetry/aws-clients.ts';

// The ports live in the domain; re-exported for the local host's runner.
export type {
  DeletionWorkflowInput,
  HarvestWorkflowInput,
  ImportStarter,
  ImportWorkflowInput,
  TileCacheWorkflowInput,
  WorkflowStarter,
};

/** Every workflow's starts. */
export type WorkflowStarters = WorkflowStarter & ImportStarter & HarvestStarter & TileCacheStarter;

/**
 * Step Functions adapter: `StartExecution` on the state machine named by
 * `DELETION_STATE_MACHINE_ARN` / `IMPORT_STATE_MACHINE_ARN` / `HARVEST_STATE_MACHINE_ARN` /
 * `TILE_CACHE_STATE_MACHINE_ARN`.
 */
export class StepFunctionsStarter implements WorkflowStarters {
  private readonly client = awsClient(new SFNClient({}));
  constructor(
    private readonly arns: { deletion?: string; import?: string; harvest?: string; tileCache?: string },
  ) {}

  startDeletion(name: string, input: DeletionWorkflowInput): Promise<void> {
    return this.start(this.arns.deletion, name, input);
  }

  startImport(name: string, input: ImportWorkflowInput): Promise<void> {
    return this.start(this.arns.import, name, input);
  }

  startHarvest(name: string, input: HarvestWorkflowInput): Promise<void> {
    return this.start(this.arns.harvest, name, input);
  }

  startTileCacheJob(name: string, input: TileCacheWorkflowInput): Promise<void> {
    return this.start(this.arns.tileCache, name, input);
  }

  private async start(stateMachineArn: string | undefined, name: string, input: unknown): Promise<void> {
    if (!stateMachineArn) {
      throw new UnavailableError('workflow_unavailable', 'The workflow is not configured for this function.');
    }
    try {
      await this.client.send(
        new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
      );
    } catch (error) {
      // The same name with other input: that execution exists already (and runs the same operation).
      if (error instanceof ExecutionAlreadyExists) return;
      throw new UnavailableError(
        'workflow_unavailable',
        'The workflow service is unavailable; retry shortly.',
      );
    }
  }
}
