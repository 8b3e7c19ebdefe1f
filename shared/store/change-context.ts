import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who is changing the catalog, and in which request (ADR 0094). The handler wiring runs each
 * operation inside one; the workflow entry points inside theirs. Every transaction of the store
 * reads it to write the audit record of its change, so no repository passes it around.
 */
export interface ChangeContext {
  /** The principal's stable id (`apikey:<id>`, `jwt:<sub>`) or `system:<what>`. */
  principalId: string;
  /** `apikey`, `jwt`, `session` or `system`. */
  authMethod: string;
  /** The principal's display subject (a key's name, a token's `sub`); never a secret. */
  subject?: string;
  /** The operation (operationId, or a workflow's name). */
  operation: string;
  /** The API request id, or the workflow run the change belongs to. */
  requestId: string;
}

const storage = new AsyncLocalStorage<ChangeContext>();

/** What a change made outside any request or workflow is attributed to (a script, the CLI). */
const SYSTEM: ChangeContext = {
  principalId: 'system',
  authMethod: 'system',
  operation: 'system',
  requestId: 'none',
};

/** Runs `fn` with `context` as the author of every change it commits. */
export function runInChange<T>(context: ChangeContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** Runs `fn` outside the current change (a workflow the local host starts from a request). */
export function outsideChange<T>(fn: () => T): T {
  return storage.exit(fn);
}

/** The author of the changes being committed now (the system outside any request). */
export function currentChange(): ChangeContext {
  return storage.getStore() ?? SYSTEM;
}
