import { makeChangeHandler, makeIdempotentHandler, makeHandler as makeReadHandler } from '#entry/handler.ts';

/**
 * The wired handler factory of an operation's kind, as `functions/` picks it (ADR 0094; issue
 * #27): makeHandler for a read, makeIdempotentHandler for a POST, makeChangeHandler for a PUT or
 * a DELETE (test/contract/handler-factories.test.ts holds every handler to it).
 */
export const makeHandlerOfKind: typeof makeReadHandler = (op, fn) =>
  op.method === 'GET'
    ? makeReadHandler(op, fn)
    : op.method === 'POST'
      ? makeIdempotentHandler(op, fn)
      : makeChangeHandler(op, fn);
