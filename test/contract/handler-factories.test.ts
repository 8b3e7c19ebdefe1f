import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';

const root = join(import.meta.dirname, '../..');

describe('handler factories (ADR 0094; issue #15 bundle sizes)', () => {
  it.each(routes.map((op) => [op.operationId, op] as const))(
    '%s is made by the factory of its kind: makeHandler for a read, makeChangeHandler for a change',
    (_id, op) => {
      const text = readFileSync(join(root, op.handler), 'utf8');
      const read = /\bmakeHandler\(/.test(text);
      const change = /\bmakeChangeHandler\(/.test(text);
      expect([read, change]).toEqual(op.method === 'GET' ? [true, false] : [false, true]);
    },
  );
});

/**
 * Every handler makes one call (issue #28; ADR 0145): the use case, given its ports and the
 * request's command; around it only the answer's shaping (present, status, Location, cookies).
 * What the request names — `{workspace}`, `{service}` — the middleware stack resolved already. So
 * its body awaits at most once, and reads no repository itself besides the one call.
 */
describe('handlers make one call (issue #28)', () => {
  it.each(routes.map((op) => [op.operationId, op] as const))('%s awaits at most once', (_id, op) => {
    const text = readFileSync(join(root, op.handler), 'utf8');
    const body = text.slice(text.indexOf('export const handler'));
    expect(body.length, 'a handler made by its factory').toBeLessThan(text.length);
    expect(body.match(/\bawait\b/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});
