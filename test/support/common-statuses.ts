import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GLOBAL_ROLE_CLAIM } from '#auth/authenticate.ts';
import { localIssuer } from '#infra/local/files.ts';
import { asSuperAdmin, call } from './client.ts';
import { expectError } from './fixtures.ts';
import { type HostProcess, onSharedTable, startHostProcess } from './host-process.ts';
import { freePort } from './ports.ts';

/** One request of an operation, as the common-status suite sends it. */
export interface Probe {
  operationId: string;
  method: string;
  /** Path under /api/v1; `{ws}` is replaced by a workspace that exists on the host asked. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

async function superAdminJwt(dataDir: string) {
  const jwt = await (await localIssuer(dataDir)).sign(
    { [GLOBAL_ROLE_CLAIM]: 'super_admin' },
    'common-statuses',
    600,
  );
  return { Authorization: `Bearer ${jwt}` };
}

/**
 * The statuses every operation documents besides its own (spec §4: 413, 426, 429, 503), checked
 * black-box per operation: 426 and 413 on the shared host, 429 on a host with a burst of one, 503 on
 * a host whose DynamoDB is unreachable.
 */
export function describeCommonStatuses(title: string, probes: Probe[]) {
  describe(`${title}: common statuses`, () => {
    let throttled: HostProcess;
    let outage: HostProcess;
    let ws = '';

    beforeAll(async () => {
      const res = await call('POST', '/workspaces', {
        headers: asSuperAdmin(),
        body: { name: `common-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}` },
      });
      expect(res.status, res.text).toBe(201);
      ws = res.body.id;
      const shared = inject('host');
      [throttled, outage] = await Promise.all([
        startHostProcess({
          ...onSharedTable(shared),
          GEOPLANE_SKIP_BOOTSTRAP: '1',
          GEOPLANE_RATE_LIMIT_RPS: '1',
          GEOPLANE_RATE_LIMIT_BURST: '1',
        }),
        startHostProcess({
          GEOPLANE_DYNAMODB_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
          GEOPLANE_SKIP_BOOTSTRAP: '1',
        }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([throttled?.stop(), outage?.stop()]);
      throttled?.cleanup();
      outage?.cleanup();
    });

    const path = (p: Probe) => p.path.replace('{ws}', ws);
    const ids = probes.map((p) => [p.operationId, p] as const);

    it.each(ids)('%s answers 426 when forwarded from plain HTTP', async (_id, p) => {
      const res = await call(p.method, path(p), {
        headers: { ...asSuperAdmin(), ...p.headers, 'X-Forwarded-Proto': 'http' },
        body: p.body,
      });
      expectError(res, 426, 'https_required');
      expect(res.headers.upgrade).toBe('TLS/1.2, HTTP/1.1');
    });

    it.each(ids)('%s answers 413 for a body over MAX_BODY_BYTES', async (_id, p) => {
      const res = await call(p.method, path(p), {
        // Content-Length, not chunked: Node's HTTP server refuses a chunked body on GET with a bare 400.
        headers: {
          ...asSuperAdmin(),
          'Content-Type': 'application/json',
          'Content-Length': String(1024 * 1024 + 1),
        },
        body: Buffer.alloc(1024 * 1024 + 1, 0x20),
      });
      expectError(res, 413, 'body_too_large');
    });

    it.each(ids)('%s answers 429 with Retry-After once the burst is spent', async (_id, p) => {
      const headers = { ...(await superAdminJwt(throttled.dataDir)), ...p.headers };
      const on = () =>
        call(p.method, path(p), {
          headers,
          body: p.body,
          baseUrl: throttled.url,
          dataDir: throttled.dataDir,
        });
      const results = await Promise.all([on(), on(), on()]);
      const limited = results.find((r) => r.status === 429);
      expect(limited, results.map((r) => r.status).join(',')).toBeDefined();
      if (limited) {
        expectError(limited, 429, 'rate_limited');
        expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      }
    });

    it.each(ids)('%s answers 503 when the catalog store is unreachable', async (_id, p) => {
      const res = await call(p.method, path(p), {
        headers: { ...(await superAdminJwt(outage.dataDir)), ...p.headers },
        body: p.body,
        baseUrl: outage.url,
        dataDir: outage.dataDir,
      });
      expectError(res, 503);
      // A workspace route may fail in the authorizer (claim lookups) before the handler reaches the store.
      expect(['auth_unavailable', 'store_unavailable']).toContain(res.body.reason);
      if (res.body.reason === 'store_unavailable') expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|dynamo/i);
    });
  });
}
