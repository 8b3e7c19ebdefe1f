import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '../../shared/api/routes.ts';

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
