import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { harvestJobRepository } from '#wiring/mosaic-harvest-jobs.ts';
import { deletionRepository, importRepository } from '#wiring/repositories.ts';
import { tileCacheJobRepository } from '#wiring/tile-cache.ts';
import { withDataAccess } from './data-access.ts';
import './promise-with-resolvers.ts';
import type { DataAction } from '#api/operation.ts';
import { deletionInput, executionName } from '#domain/deletion-model.ts';
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
  nestedDeletionState,
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
/** Local stand-in for the deletion state machine's ARN, which the import's nested state names. */
const localDeletionMachineArn = 'arn:aws:states:us-east-1:000000000000:stateMachine:geoplane-local-deletion';

const importMachine = machine(
  (arns: Record<keyof typeof importTaskHandlers, string>) =>
    substitutedImportDefinition(arns, localDeletionMachineArn),
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

/** The key of a deletion attempt's execution (one at a time, as its execution name is one). */
const deletionKey = (input: DeletionWorkflowInput) => `deletion:${input.operation_id}#${input.attempt}`;

/** How long a Wait state waits locally (the imports' rollback polls): capped so tests stay quick. */
const LOCAL_WAIT_CAP_MS = 500;

/**
 * Runs the workflows in this process: the same ASL that CDK deploys, executed by
 * `aws-local-stepfunctions`, each task state mapped to the handler its Lambda runs (with its
 * function's grants only). One execution per name at a time; on start the host resumes every
 * deletion left pending or running and every import a workflow owned.
 */
export class LocalWorkflowRunner implements WorkflowStarters {
  /** The executions in flight by key; `result` is whether it succeeded. */
  private readonly running = new Map<string, { abort: () => void; result: Promise<boolean> }>();
  private closed = false;

  async startDeletion(name: string, input: DeletionWorkflowInput): Promise<void> {
    await this.run(deletionMachine, deletionKey(input), name, input);
  }

  /**
   * The import's nested "Delete the import's service" (`states:startExecution.sync:2`): starts the
   * deletion attempt — or joins its execution in flight, as StartExecution does for the same name
   * and input — and ends as it ends: a failed deletion fails the state (its Catch takes over).
   */
  private async runNestedDeletion(parameters: unknown): Promise<unknown> {
    const { Name, Input } = parameters as { Name: string; Input: DeletionWorkflowInput };
    const { result } = await this.run(deletionMachine, deletionKey(Input), Name, Input);
    if (!(await result)) {
      const error = new Error(`The nested deletion execution ${Name} failed.`);
      error.name = 'States.TaskFailed';
      throw error;
    }
    return {};
  }

  async startImport(name: string, input: ImportWorkflowInput): Promise<void> {
    await this.run(importMachine, `import:${name}`, name, input);
  }

  async startHarvest(name: string, input: HarvestWorkflowInput): Promise<void> {
    await this.run(harvestMachine, `harvest:${name}`, name, input);
  }

  async startTileCacheJob(name: string, input: TileCacheWorkflowInput): Promise<void> {
    await this.run(tileCacheMachine, `tile-cache:${name}`, name, input);
  }

  /**
   * Starts an execution, or joins the one in flight under `key`: resolves once it runs, with
   * `result`, whether it succeeded.
   */
  private async run(
    m: LocalMachine,
    key: string,
    name: string,
    input: unknown,
  ): Promise<{ result: Promise<boolean> }> {
    const inFlight = this.running.get(key);
    if (inFlight) return { result: inFlight.result };
    if (this.closed) return { result: Promise.resolve(false) };
    const { StateMachine } = await import('aws-local-stepfunctions');
    const handlers: Record<string, TaskHandler> = {};
    for (const [state, task] of Object.entries(m.states)) {
      const mod = (await import(pathToFileURL(resolve(root, m.handlers[task] as string)).href)) as {
        handler: TaskHandler;
      };
      const grants = (m.access[task] as { data: readonly DataAction[] }).data;
      handlers[state] = (taskInput) => withDataAccess(`task:${task}`, grants, () => mod.handler(taskInput));
    }
    if (m === importMachine)
      handlers[nestedDeletionState] = (parameters) => this.runNestedDeletion(parameters);
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
    const result = execution.result.then(
      () => true,
      (error: unknown) => {
        // A failed execution already recorded its reason (its Fail state).
        if ((error as Error)?.name !== 'ExecutionError')
          logger.error('workflow execution failed', { execution: name, ...errorFields(error) });
        return false;
      },
    );
    this.running.set(key, { abort: execution.abort, result });
    void result.finally(() => this.running.delete(key));
    return { result };
  }

  /** Whether the execution of this deletion attempt is in flight (the sweep's liveness check, ADR 0093). */
  deletionRunning(input: DeletionWorkflowInput): boolean {
    return this.running.has(deletionKey(input));
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
      // The name and input every starter gives this attempt (ADR 0146).
      await this.startDeletion(executionName(op), deletionInput(op));
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
