import type { Operation } from '../api/operation.ts';
import type { Principal } from '../auth/principal.ts';
import { secretBox } from '../datasources/secret-box.ts';
import type { IdempotencyPorts } from '../http/idempotency.ts';
import { type HandlerRequest, makeHandler as makeHttpHandler } from '../http/make-handler.ts';
import type { HandlerResult } from '../http/responses.ts';
import { type ChangeContext, runInChange } from '../store/change-context.ts';
import { auditTrail, idempotencyStore } from '../store/repositories.ts';
import { accessPorts } from './access.ts';

/** The idempotency records and the secret box that seals their answers (ADR 0088). */
function idempotencyPorts(): IdempotencyPorts {
  return { store: idempotencyStore(), secretBox: secretBox() };
}

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

/**
 * THE handler factory of `functions/`: `shared/http`'s middy stack (DESIGN §4) with the wired
 * access ports (the workspace lookup, claim mappings, custom roles' policies) and, on POSTs, the
 * idempotency ports. The operation runs as the change of its caller (ADR 0094).
 */
export function makeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
) {
  return makeHttpHandler(
    op,
    (request) =>
      runInChange(changeContextOf(op.operationId, request.principal, request.requestId), () => fn(request)),
    accessPorts,
    idempotencyPorts,
    auditTrail,
  );
}
