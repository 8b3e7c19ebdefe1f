import type { Operation } from '../api/operation.ts';
import { secretBox } from '../datasources/secret-box.ts';
import type { IdempotencyPorts } from '../http/idempotency.ts';
import { type HandlerRequest, makeHandler as makeHttpHandler } from '../http/make-handler.ts';
import type { HandlerResult } from '../http/responses.ts';
import { idempotencyStore } from '../store/repositories.ts';
import { accessPorts } from './access.ts';

/** The idempotency records and the secret box that seals their answers (ADR 0088). */
function idempotencyPorts(): IdempotencyPorts {
  return { store: idempotencyStore(), secretBox: secretBox() };
}

/**
 * THE handler factory of `functions/`: `shared/http`'s middy stack (DESIGN §4) with the wired
 * access ports (the workspace lookup, claim mappings, custom roles' policies) and, on POSTs, the
 * idempotency ports.
 */
export function makeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
) {
  return makeHttpHandler(op, fn, accessPorts, idempotencyPorts);
}
