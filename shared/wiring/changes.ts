import type { Principal } from '#auth/principal.ts';
import { type ChangeContext, runInChange } from '#store/change-context.ts';

/** Who a request's changes are attributed to in the audit trail and the catalog events (ADR 0094). */
export function changeContextOf(operation: string, principal: Principal, requestId: string): ChangeContext {
  return {
    principalId: principal.id || 'anonymous',
    authMethod: principal.session ? 'session' : principal.authMethod,
    ...(principal.subject ? { subject: principal.subject } : {}),
    operation,
    requestId,
  };
}

/** A request's work, run as the change of its caller (ADR 0094): the store's change context. */
export function asCallersChange<R extends { principal: Principal; requestId: string }, T>(
  operation: string,
  fn: (request: R) => Promise<T>,
): (request: R) => Promise<T> {
  return (request) =>
    runInChange(changeContextOf(operation, request.principal, request.requestId), () => fn(request));
}
