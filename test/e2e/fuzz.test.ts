import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { routes } from '../../shared/api/routes.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';

/** A small seeded PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const PER_ROUTE = Number(process.env.FUZZ_PER_ROUTE ?? 12);

const strings = [
  '',
  ' ',
  'x'.repeat(300),
  '../../etc/passwd',
  '%00',
  '%ZZ',
  '😀',
  "'; DROP TABLE x; --",
  '<script>',
  '00000000-0000-0000-0000-000000000000',
  'DEMO',
  'null',
  '-1',
  '1e309',
  '\u0000',
];

function value(rand: () => number, depth = 0): unknown {
  const pick = Math.floor(rand() * (depth > 2 ? 6 : 9));
  switch (pick) {
    case 0:
      return strings[Math.floor(rand() * strings.length)];
    case 1:
      return Math.floor(rand() * 2 ** 40) * (rand() < 0.5 ? -1 : 1);
    case 2:
      return rand() < 0.5;
    case 3:
      return null;
    case 4:
      return rand() * 1e308;
    case 5:
      return 'a'.repeat(Math.floor(rand() * 2000));
    case 6:
      return Array.from({ length: Math.floor(rand() * 4) }, () => value(rand, depth + 1));
    default: {
      const keys = [
        'name',
        'id',
        'sql',
        'role_id',
        'members',
        'connection',
        'workspace',
        'service',
        'token',
        'x',
      ];
      return Object.fromEntries(
        Array.from({ length: Math.floor(rand() * 4) }, () => [
          keys[Math.floor(rand() * keys.length)],
          value(rand, depth + 1),
        ]),
      );
    }
  }
}

function body(rand: () => number): string | undefined {
  const r = rand();
  if (r < 0.1) return undefined;
  if (r < 0.2) return '{"unterminated": ';
  if (r < 0.25) return '\u0000\u0001binary';
  return JSON.stringify(value(rand));
}

/** A service with a layer, and a deletion operation of another one (the recursive-deletion routes' objects). */
async function deletionFixtures(wsId: string) {
  const postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
  const serviceWithLayer = async (name: string) => {
    const svc = await call('POST', `/workspaces/${wsId}/services`, {
      headers: asSuperAdmin(),
      body: { name, type: 'postgis', enabled: false, connection: postgis },
    });
    expect(svc.status, svc.text).toBe(201);
    const layer = await call('POST', `/workspaces/${wsId}/services/${name}/layers`, {
      headers: asSuperAdmin(),
      body: { source_layer: `${name}_t`, public_id: `${name}-l`, enabled: false },
    });
    expect(layer.status, layer.text).toBe(201);
  };
  await serviceWithLayer('fz');
  await serviceWithLayer('fz-gone');
  const op = await call('DELETE', `/workspaces/${wsId}/services/fz-gone?recurse=true`, {
    headers: asSuperAdmin(),
  });
  expect(op.status, op.text).toBe(202);
  return { service: 'fz', deletion: op.body.id as string };
}

describe('fuzzing every route as super_admin', () => {
  it(`answers no 5xx to ${PER_ROUTE} random requests per route (seed ${SEED})`, async () => {
    const ws = await createWorkspace();
    const fixtures = await deletionFixtures(ws.id);
    const rand = prng(SEED);
    const failures: string[] = [];
    for (const op of routes) {
      for (let i = 0; i < PER_ROUTE; i++) {
        const path = op.path.replace('/api/v1', '').replace(/\{(\w+)\}/g, (_m, name: string) => {
          if (name === 'workspace' && rand() < 0.7) return ws.id;
          // Existing objects now and then, so the handlers get past their lookups.
          if (name === 'service' && rand() < 0.5) return fixtures.service;
          if (name === 'id' && op.path.startsWith('/api/v1/deletions/') && rand() < 0.5)
            return fixtures.deletion;
          return encodeURIComponent(String(value(rand, 3)).slice(0, 200)) || 'x';
        });
        const r = rand();
        const query =
          r < 0.3
            ? `?limit=${encodeURIComponent(String(value(rand, 3)))}&cursor=${encodeURIComponent(String(value(rand, 3)))}`
            : r < 0.4
              ? `?recurse=${encodeURIComponent(String(value(rand, 3)))}&status=${encodeURIComponent(String(value(rand, 3)))}`
              : r < 0.45
                ? '?recurse=true'
                : '';
        const payload = body(rand);
        const res = await call(op.method, `${path}${query}`, {
          headers: asSuperAdmin(),
          ...(payload === undefined ? {} : { body: payload }),
        });
        if (res.status >= 500)
          failures.push(
            `${op.operationId} ${op.method} ${path}${query} ${payload?.slice(0, 120)} → ${res.status} ${res.text.slice(0, 200)}`,
          );
        if (res.status >= 400 && res.body?.code !== res.status) {
          failures.push(
            `${op.operationId} ${op.method} ${path}${query} ${payload?.slice(0, 80)} → ${res.status} without the error body: ${res.text.slice(0, 120)}`,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
