/**
 * Port: where a long-running workflow says what it does (ADR 0090) — start, progress, the end.
 * The domain imports no logger; the wiring hands it one (Powertools Logger), tests a recorder.
 * Fields are plain data: ids, phases, counts, a failure's message; never a secret.
 */
export interface WorkflowLog {
  info(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
  /**
   * The end of a run, once, when its last write committed: `workflow` is `deletion` or `import`
   * (the wiring counts it as `WorkflowSucceeded` / `WorkflowFailed`, ADR 0092).
   */
  outcome?(workflow: WorkflowKind, outcome: WorkflowOutcome): void;
}

/** A workflow whose runs end in an outcome. */
export type WorkflowKind = 'deletion' | 'import';
/** How a run ended: its work done, or failed (a failed run may be retried as a new attempt). */
export type WorkflowOutcome = 'succeeded' | 'failed';

/** A log that says nothing (the default of a workflow built without one). */
export const silentLog: WorkflowLog = { info: () => {}, warn: () => {} };

/** Progress lines at most this often (ADR 0090). */
export const PROGRESS_EVERY_MS = 5000;

/**
 * A progress reporter that speaks at most every `everyMs`: `report(fields)` logs when the last
 * line is at least that old (the first call waits a full interval: the start was just logged).
 */
export function throttledProgress(
  log: WorkflowLog,
  message: string,
  now: () => number = Date.now,
  everyMs: number = PROGRESS_EVERY_MS,
): (fields: () => Record<string, unknown>) => void {
  let last = now();
  return (fields) => {
    const t = now();
    if (t - last < everyMs) return;
    last = t;
    log.info(message, fields());
  };
}
