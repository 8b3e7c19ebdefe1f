import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { successWithSchema } from '#api/openapi.ts';
import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';

/**
 * The examples of the route table (issue #14, ADR 0095): every operation declares example path
 * parameters (when it has any), an example request body (when it takes a JSON body) and an example
 * of its success answer (when that answer has a schema), each valid against the very zod schema the
 * handler parses with; query examples are checked the same way. docs/openapi.json publishes them (and Spectral's
 * oas3-valid-media-example checks them again against the published JSON Schema).
 */

/**
 * Operations whose examples are still to be written: this list only shrinks (an operation listed
 * here that has its examples fails the test, so the entry must be removed).
 */
const pending: readonly string[] = [];

const document = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));

const needsRequest = (op: Operation) => op.request.body !== undefined;
const needsResponse = (op: Operation) => successWithSchema(op) !== undefined;
const complete = (op: Operation) =>
  (op.request.params === undefined || op.examples?.params !== undefined) &&
  (!needsRequest(op) || op.examples?.request !== undefined) &&
  (!needsResponse(op) || op.examples?.response !== undefined);

function problems(schema: z.ZodMiniType, value: unknown): string[] {
  const result = z.safeParse(schema, value);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('route table examples', () => {
  it.each(routes.map((op) => [op.operationId, op] as const))('%s: its examples are valid', (_id, op) => {
    const examples = op.examples ?? {};
    if (examples.request !== undefined) {
      expect(op.request.body, 'a request example needs a JSON body schema').toBeDefined();
      expect(problems(op.request.body as z.ZodMiniType, examples.request)).toEqual([]);
    }
    if (examples.params !== undefined) {
      expect(op.request.params, 'params example without path parameters').toBeDefined();
      expect(problems(op.request.params as z.ZodMiniType, examples.params)).toEqual([]);
    }
    if (examples.query !== undefined) {
      expect(op.request.query, 'query example without query parameters').toBeDefined();
      expect(problems(op.request.query as z.ZodMiniType, examples.query)).toEqual([]);
    }
    if (examples.response !== undefined) {
      const status = successWithSchema(op);
      expect(status, 'a response example needs a 2xx answer with a schema').toBeDefined();
      const schema = op.responses[status as number]?.schema as z.ZodMiniType;
      expect(problems(schema, examples.response)).toEqual([]);
    }
  });

  it('every operation has its examples, except the pending ones', () => {
    const missing = routes.filter((op) => !complete(op)).map((op) => op.operationId);
    expect(missing.sort()).toEqual([...pending].sort());
  });

  it('publishes the examples in docs/openapi.json', () => {
    for (const op of routes) {
      const published = document.paths[op.path][op.method.toLowerCase()];
      if (op.examples?.request !== undefined)
        expect(published.requestBody.content['application/json'].example, op.operationId).toEqual(
          op.examples.request,
        );
      if (op.examples?.response !== undefined)
        expect(
          published.responses[String(successWithSchema(op))].content['application/json'].example,
          op.operationId,
        ).toEqual(op.examples.response);
    }
  });
});
