import type { Operation } from '#api/operation.ts';
import { type HandlerRequest, makeHandler as makeHttpHandler } from '#http/make-handler.ts';
import type { HandlerResult } from '#http/responses.ts';
import { accessPorts } from '#wiring/access.ts';
import { asCallersChange } from '#wiring/changes.ts';
import { idempotencyPorts } from '#wiring/idempotency.ts';
import { auditTrail } from '#wiring/repositories.ts';

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
  return makeHttpHandler(op, asCallersChange(op.operationId, fn), accessPorts);
}

/**
 * THE handler factory of `functions/` for changes that take no Idempotency-Key (PUT, DELETE): the
 * same stack with the audit trail that records a refused change (ADR 0094). It names no
 * idempotency records, so their bundles carry neither them nor the KMS client that seals a kept
 * answer (issue #27: 33 KB of each).
 */
export function makeChangeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
) {
  if (op.method === 'GET') throw new Error(`${op.operationId} is a read: use makeHandler`);
  if (op.method === 'POST') throw new Error(`${op.operationId} is a POST: use makeIdempotentHandler`);
  return makeHttpHandler(op, asCallersChange(op.operationId, fn), accessPorts, undefined, auditTrail);
}

/**
 * THE handler factory of `functions/` for POSTs: a change's stack with the idempotency ports
 * (ADR 0088), which keep a POST's answer under its Idempotency-Key.
 */
export function makeIdempotentHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
) {
  if (op.method !== 'POST') throw new Error(`${op.operationId} is not a POST: use makeChangeHandler`);
  return makeHttpHandler(op, asCallersChange(op.operationId, fn), accessPorts, idempotencyPorts, auditTrail);
}
