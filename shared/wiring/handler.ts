import type { Operation } from '../api/operation.ts';
import { type HandlerRequest, makeHandler as makeHttpHandler } from '../http/make-handler.ts';
import type { HandlerResult } from '../http/responses.ts';
import { accessPorts } from './access.ts';

/**
 * THE handler factory of `functions/`: `shared/http`'s middy stack (DESIGN §4) with the wired
 * access ports (the workspace lookup, claim mappings, custom roles' policies).
 */
export function makeHandler<Op extends Operation>(
  op: Op,
  fn: (request: HandlerRequest<Op>) => Promise<HandlerResult>,
) {
  return makeHttpHandler(op, fn, accessPorts);
}
