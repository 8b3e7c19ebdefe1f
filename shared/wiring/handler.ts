import type { Operation } from '#api/operation.ts';
import type { Principal } from '#auth/principal.ts';
import { secretBox } from '#datasources/secret-box.ts';
import type { IdempotencyPorts } from '#http/idempotency.ts';
import { type HandlerRequest, makeHandler as makeHttpHandler } from '#http/make-handler.ts';
import type { HandlerResult } from '#http/responses.ts';
import { type ChangeContext, runInChange } from '#store/change-context.ts';
import { auditTrail, idempotencyStore } from '#store/repositories.ts';
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

/** The operation function, run as the change of its caller (ADR 0094). */
function asCallersChange<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
): (request: HandlerRequest<Op>) => Promise<HandlerResult> {
  return (request) =>
    runInChange(changeContextOf(op.operationId, request.principal, request.requestId), () => fn(request));
}

/**
 * THE handler factory of `functions/` for reads (GET): `shared/http`'s middy stack (DESIGN §4) with
 * the wired access ports (the workspace lookup, claim mappings, custom roles' policies). It names
 * neither the idempotency records nor the audit trail, so a read's bundle carries neither (nor the
 * KMS client that seals idempotent answers; issue #15).
 */
export function makeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
) {
  if (op.method !== 'GET') throw new Error(`${op.operationId} changes things: use makeChangeHandler`);
  return makeHttpHandler(op, asCallersChange(op, fn), accessPorts);
}

/**
 * THE handler factory of `functions/` for changes (POST, PUT, DELETE): the same stack with, on
 * POSTs, the idempotency ports (ADR 0088), and the audit trail that records a refused change
 * (ADR 0094).
 */
export function makeChangeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
) {
  if (op.method === 'GET') throw new Error(`${op.operationId} is a read: use makeHandler`);
  return makeHttpHandler(op, asCallersChange(op, fn), accessPorts, idempotencyPorts, auditTrail);
}
