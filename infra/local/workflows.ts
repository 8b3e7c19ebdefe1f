import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { deletionRepository } from '#store/repositories.ts';
import { importRepository } from '#wiring/imports.ts';
import { harvestJobRepository } from '#wiring/mosaic-harvest-jobs.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';
import { withDataAccess } from './data-access.ts';
import './promise-with-resolvers.ts';
import type { DataAction } from '#api/operation.ts';
import { importExecutionName } from '#domain/import-model.ts';
import { jobExecutionName } from '#domain/jobs.ts';
import { errorFields, logger } from '#log/logger.ts';
import type {
  DeletionWorkflowInput,
  HarvestWorkflowInput,
  ImportWorkflowInput,
  TileCacheWorkflowInput,
  WorkflowStarters,
} from '#workflows/starter.ts';
import {
  deletionTaskAccess,
  deletionTaskHandlers,
  deletionTaskStates,
  substitutedDeletionDefinition,
} from '../workflows/deletion-workflow.ts';
import {
  harvestTaskAccess,
  harvestTaskHandlers,
  harvestTaskStates,
  substitutedHarvestDefinition,
} from '../workflows/harvest-workflow.ts';
import {
  importTaskAccess,
  importTaskHandlers,
  importTaskStates,
  substitutedImportDefinition,
} from '../workflows/import-workflow.ts';
import {
  substitutedTileCacheDefinition,
  tileCacheTaskAccess,
  tileCacheTaskHandlers,
  tileCacheTaskStates,
} from '../workflows/tile-cache-workflow.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
type TaskHandler = (input: unknown) => Promise<unknown>;

/** Local stand-in for a task function's ARN (the state machine only needs a well-formed one). */
const localArn = (task: string) => `arn:aws:lambda:us-east-1:000000000000:function:geoplane-local-${task}`;

/** One workflow as the local runner needs it: its ASL, its task states and their handlers and grants. */
interface LocalMachine {
  definition: unknown;
  states: Record<string, string>;
  handlers: Record<string, string>;
  access: Record<string, { data: readonly DataAction[] }>;
}

function machine<T extends string>(
  substituted: (arns: Record<T, string>) => unknown,
  handlers: Record<T, string>,
  states: Record<string, T>,
  access: Record<T, { data: readonly DataAction[] }>,
): LocalMachine {
  const arns = Object.fromEntries(Object.keys(handlers).map((t) => [t, localArn(t)])) as Record<T, string>;
  return { definition: substituted(arns), states, handlers, access };
}

const deletionMachine = machine(
  substitutedDeletionDefinition,
  deletionTaskHandlers,
  deletionTaskStates,
  deletionTaskAccess,
);
const importMachine = machine(
  substitutedImportDefinition,
  importTaskHandlers,
  importTaskStates,
  importTaskAccess,
);

const harvestMachine = machine(
  substitutedHarvestDefinition,
  harvestTaskHandlers,
  harvestTaskStates,
  harvestTaskAccess,
);

const tileCacheMachine = machine(
  substitutedTileCacheDefinition,
  tileCacheTaskHandlers,
  tileCacheTaskStates,
  tileCacheTaskAccess,
);

/** How long a Wait state waits locally (the imports' rollback polls): capped so tests stay quick. */
const LOCAL_WAIT_CAP_MS = 500;

/**
 * Runs the workflows in this process: the same ASL that CDK deploys, executed by
 * `aws-local-stepfunctions`, each task state mapped to the handler its Lambda runs (with its
 * function's grants only). One execution per name at a time; on start the host resumes every
 * deletion left pending or running and every import a workflow owned.
 */
export class LocalWorkflowRunner implements WorkflowStarters {
  private readonly running = new Map<string, { abort: () => void; result: Promise<unknown> }>();
  private closed = false;

  startDeletion(name: string, input: DeletionWorkflowInput): Promise<void> {
    return this.run(deletionMachine, `deletion:${input.operation_id}#${input.attempt}`, name, input);
  }

  startImport(name: string, input: ImportWorkflowInput): Promise<void> {
    return this.run(importMachine, `import:${name}`, name, input);
  }

  startHarvest(name: string, input: HarvestWorkflowInput): Promise<void> {
    return this.run(harvestMachine, `harvest:${name}`, name, input);
  }

  startTileCacheJob(name: string, input: TileCacheWorkflowInput): Promise<void> {
    return this.run(tileCacheMachine, `tile-cache:${name}`, name, input);
  }

  private async run(m: LocalMachine, key: string, name: string, input: unknown): Promise<void> {
    if (this.closed || this.running.has(key)) return;
    const { StateMachine } = await import('aws-local-stepfunctions');
    const handlers: Record<string, TaskHandler> = {};
    for (const [state, task] of Object.entries(m.states)) {
      const mod = (await import(pathToFileURL(resolve(root, m.handlers[task] as string)).href)) as {
        handler: TaskHandler;
      };
      const grants = (m.access[task] as { data: readonly DataAction[] }).data;
      handlers[state] = (taskInput) => withDataAccess(`task:${task}`, grants, () => mod.handler(taskInput));
    }
    const sm = new StateMachine(m.definition as never, {
      validationOptions: { checkArn: true, checkPaths: true },
    });
    const waits = Object.fromEntries(
      Object.entries((m.definition as { States: Record<string, { Type: string }> }).States)
        .filter(([, s]) => s.Type === 'Wait')
        .map(([stateName]) => [stateName, LOCAL_WAIT_CAP_MS]),
    );
    const execution = sm.run(input as never, {
      overrides: { taskResourceLocalHandlers: handlers as never, waitTimeOverrides: waits },
      noThrowOnAbort: true,
    });
    const result = execution.result.catch((error: unknown) => {
      // A failed execution already recorded its reason (its Fail state).
      if ((error as Error)?.name !== 'ExecutionError')
        logger.error('workflow execution failed', { execution: name, ...errorFields(error) });
    });
    this.running.set(key, { abort: execution.abort, result });
    void result.finally(() => this.running.delete(key));
  }

  /** Whether the execution of this deletion attempt is in flight (the sweep's liveness check, ADR 0093). */
  deletionRunning(input: DeletionWorkflowInput): boolean {
    return this.running.has(`deletion:${input.operation_id}#${input.attempt}`);
  }

  /** Whether the named import execution is in flight (the sweep's liveness check, ADR 0093). */
  importRunning(name: string): boolean {
    return this.running.has(`import:${name}`);
  }

  /** Whether the named harvest execution is in flight (the sweep's liveness check, ADR 0093). */
  harvestRunning(name: string): boolean {
    return this.running.has(`harvest:${name}`);
  }

  /** Whether the named tile cache job execution is in flight (the sweep's liveness check, ADR 0093). */
  tileCacheJobRunning(name: string): boolean {
    return this.running.has(`tile-cache:${name}`);
  }

  /** Starts every deletion, import, mosaic harvest and tile cache job under way when the host last stopped. */
  async resume(): Promise<{ deletions: number; imports: number; harvests: number; tileCacheJobs: number }> {
    let deletions = 0;
    let imports = 0;
    let harvests = 0;
    await deletionRepository().unfinished(async (op) => {
      await this.startDeletion(op.id, { operation_id: op.id, attempt: Number(op.attempt_count ?? 1) });
      deletions++;
    });
    await importRepository().working(async (job) => {
      await this.startImport(importExecutionName(job), {
        import_id: job.id,
        workspace_id: job.workspace_id,
        run: job.run,
      });
      imports++;
    });
    await harvestJobRepository().working(async (job) => {
      // Under its current run's name, the one the sweep checks (ADR 0093).
      await this.startHarvest(jobExecutionName(job), {
        job_id: job.id,
        workspace_id: job.workspace_id,
        service_id: job.service_id,
      });
      harvests++;
    });
    let tileCacheJobs = 0;
    await tileCacheJobRepository().working(async (job) => {
      await this.startTileCacheJob(jobExecutionName(job), { job_id: job.id, workspace_id: job.workspace_id });
      tileCacheJobs++;
    });
    return { deletions, imports, harvests, tileCacheJobs };
  }

  /** Waits for the executions in flight (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.result));
  }

  /** Stops the executions in flight; their work resumes on the next start. */
  close(): void {
    this.closed = true;
    for (const r of this.running.values()) r.abort();
    this.running.clear();
  }
}
