import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../support/client.ts';
import { bearer, expectError, token, withKey } from '../support/fixtures.ts';
import { type HostProcess, onSharedTable, startHostProcess } from '../support/host-process.ts';
import { freePort } from '../support/ports.ts';

/** Nothing about the server in an answer: no host, port, version, driver or error text. */
function expectNothingLeaked(text: string) {
  expect(text).not.toMatch(
    /127\.0\.0\.1|localhost|ECONN|dynamo|postgres|pglite|\bpg\b|0\.1\.2|stack|error:/i,
  );
}

describe('getHealth (GET /health)', () => {
  it('answers 200 {status: ok} without a credential, never cached', async () => {
    const res = await call('GET', '/health');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
    expectNothingLeaked(res.text);
  });

  it('ignores a rejected credential (it is public: no authorizer runs)', async () => {
    const res = await call('GET', '/health', { headers: withKey('gpk_not-a-real-key') });
    expect(res.status).toBe(200);
  });

  it('answers 426 when forwarded from plain HTTP, like every route', async () => {
    expectError(await call('GET', '/health', { headers: { 'X-Forwarded-Proto': 'http' } }), 426);
  });

  it('answers 404 for another method (the route table has GET only)', async () => {
    expectError(await call('POST', '/health', { body: {} }), 404);
  });
});

describe('getReadiness (GET /ready)', () => {
  it('answers 200 with both checks ok on the shared host (its import database is the embedded PostGIS)', async () => {
    const res = await call('GET', '/ready');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { catalog: 'ok', import_database: 'ok' } });
    expect(res.headers['cache-control']).toBe('no-store');
    expectNothingLeaked(res.text);
  });

  it('answers the same to anonymous, viewer and super_admin callers', async () => {
    const viewer = bearer(await token({ workspaces: { '00000000-0000-4000-8000-000000000000': 'viewer' } }));
    const admin = bearer(await token({ superAdmin: true }));
    for (const headers of [{}, viewer, admin]) {
      const res = await call('GET', '/ready', { headers });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ready');
    }
  });

  describe('with a dependency down', () => {
    let noImportDb: HostProcess;
    let noCatalog: HostProcess;

    beforeAll(async () => {
      const shared = inject('host');
      [noImportDb, noCatalog] = await Promise.all([
        // The shared catalog, an import database nobody listens for.
        startHostProcess({
          ...onSharedTable(shared),
          GEOPLANE_SKIP_BOOTSTRAP: '1',
          IMPORT_DATABASE: JSON.stringify({
            host: '127.0.0.1',
            port: await freePort(),
            database: 'imports',
            sslmode: 'disable',
            user: 'importer',
            password: 'secret-never-shown',
          }),
        }),
        // A catalog store nobody listens for, and no import database at all.
        startHostProcess({
          GEOPLANE_DYNAMODB_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
          GEOPLANE_SKIP_BOOTSTRAP: '1',
        }),
      ]);
    }, 180_000);
    afterAll(async () => {
      await Promise.all([noImportDb?.stop(), noCatalog?.stop()]);
      noImportDb?.cleanup();
      noCatalog?.cleanup();
    });

    const on = (host: HostProcess, path: string) =>
      call('GET', path, { baseUrl: host.url, dataDir: host.dataDir });

    it.each([
      ['the import database is unreachable', () => noImportDb],
      ['the catalog store is unreachable', () => noCatalog],
    ])('answers 503 not_ready with the standard body and nothing more when %s', async (_what, host) => {
      const res = await on(host(), '/ready');
      expectError(res, 503, 'not_ready');
      expect(Object.keys(res.body).sort()).toEqual(['code', 'detail', 'message', 'reason', 'request_id']);
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(res.text).not.toMatch(/import|catalog|secret-never-shown|importer/i);
      expectNothingLeaked(res.text);
    });

    it('logs which dependency failed (the operator sees it, the client does not)', async () => {
      await on(noImportDb, '/ready');
      expect(noImportDb.output()).toMatch(/import_database/);
    });

    it.each([
      ['the import database is unreachable', () => noImportDb],
      ['the catalog store is unreachable', () => noCatalog],
    ])('still answers 200 to /health when %s (liveness reads nothing)', async (_what, host) => {
      const res = await on(host(), '/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });
  });
});
