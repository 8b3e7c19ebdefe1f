import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { withDataAccess } from './data-access.ts';
import './promise-with-resolvers.ts';
import { deletionRepository } from '../../shared/store/repositories.ts';
import type { DeletionWorkflowInput, WorkflowStarter } from '../../shared/workflows/starter.ts';
import {
  type DeletionTask,
  deletionTaskAccess,
  deletionTaskHandlers,
  deletionTaskStates,
  substitutedDeletionDefinition,
} from '../workflows/deletion-workflow.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
type TaskHandler = (input: unknown) => Promise<unknown>;

/** Local stand-ins for the task function ARNs (the state machine only needs well-formed ones). */
const localArns: Record<DeletionTask, string> = {
  begin: 'arn:aws:lambda:us-east-1:000000000000:function:geoplane-local-begin-deletion',
  deleteBatch: 'arn:aws:lambda:us-east-1:000000000000:function:geoplane-local-delete-next-batch',
  recordFailure: 'arn:aws:lambda:us-east-1:000000000000:function:geoplane-local-record-deletion-failure',
};

/**
 * Runs the deletion workflow in this process: the same ASL that CDK deploys, executed by
 * `aws-local-stepfunctions`, each task state mapped to the handler its Lambda runs. One execution
 * per operation at a time; on start the host resumes every operation left pending or running.
 */
export class LocalWorkflowRunner implements WorkflowStarter {
  private readonly running = new Map<string, { abort: () => void; result: Promise<unknown> }>();
  private closed = false;

  async startDeletion(_name: string, input: DeletionWorkflowInput): Promise<void> {
    const key = `${input.operation_id}#${input.attempt}`;
    if (this.closed || this.running.has(key)) return;
    const { StateMachine } = await import('aws-local-stepfunctions');
    const handlers: Record<string, TaskHandler> = {};
    for (const [state, task] of Object.entries(deletionTaskStates)) {
      const mod = (await import(pathToFileURL(resolve(root, deletionTaskHandlers[task])).href)) as {
        handler: TaskHandler;
      };
      // The task runs with its function's grants only, as its Lambda would.
      handlers[state] = (input) =>
        withDataAccess(`task:${task}`, deletionTaskAccess[task].data, () => mod.handler(input));
    }
    const machine = new StateMachine(substitutedDeletionDefinition(localArns) as never, {
      validationOptions: { checkArn: true, checkPaths: true },
    });
    const execution = machine.run(input as never, {
      overrides: { taskResourceLocalHandlers: handlers as never },
      noThrowOnAbort: true,
    });
    const result = execution.result.catch((error: unknown) => {
      // A failed execution already recorded its reason on the operation (the Fail state).
      if ((error as Error)?.name !== 'ExecutionError') console.error('deletion workflow:', error);
    });
    this.running.set(key, { abort: execution.abort, result });
    void result.finally(() => this.running.delete(key));
  }

  /** Starts every operation that was pending or running when the host last stopped. */
  async resume(): Promise<number> {
    let resumed = 0;
    await deletionRepository().unfinished(async (op) => {
      await this.startDeletion(op.id, { operation_id: op.id, attempt: Number(op.attempt_count ?? 1) });
      resumed++;
    });
    return resumed;
  }

  /** Waits for the executions in flight (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.result));
  }

  /** Stops the executions in flight; their operations resume on the next start. */
  close(): void {
    this.closed = true;
    for (const r of this.running.values()) r.abort();
    this.running.clear();
  }
}
