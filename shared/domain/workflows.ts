/**
 * The workflow ports the domain needs. Adapters implement them: `shared/workflows/starter.ts`
 * (Step Functions, or the local host's in-process runner) starts executions; the store's
 * `DeletionSteps` runs the deletion's steps against the table. `shared/wiring` builds both.
 */

/** Input of the deletion workflow. */
export interface DeletionWorkflowInput {
  operation_id: string;
  /** The operation's attempt this execution runs; an execution of an older attempt stops. */
  attempt: number;
}

/**
 * Port: starts a workflow execution. `name` is the execution name — the operation id (plus the
 * attempt for a retry), so a start repeated after a lost answer can't run the work twice.
 * The API handlers don't know whether Step Functions or the in-process runner executes it.
 */
export interface WorkflowStarter {
  startDeletion(name: string, input: DeletionWorkflowInput): Promise<void>;
}

/**
 * Port: the steps of the deletion workflow, one per task of its state machine. Every step is
 * idempotent and fenced by the operation's attempt (ADR 0070).
 */
export interface DeletionWorkflowSteps {
  /** pending|running → running for this attempt (a completed operation is left alone). */
  begin(id: string, attempt: number): Promise<void>;
  /** Deletes pages of dependents until done or out of `budgetMs`. */
  runBatch(id: string, attempt: number, budgetMs: number): Promise<{ done: boolean }>;
  /** The operation becomes `failed` with `last_error` (retryable). */
  recordFailure(id: string, attempt: number, message: string): Promise<void>;
}

/**
 * A failure worth retrying (the store or a service briefly unavailable): the state machine retries
 * a task error of this name with backoff; every other error ends the operation `failed`.
 */
export class TransientError extends Error {
  override name = 'TransientError';
}
