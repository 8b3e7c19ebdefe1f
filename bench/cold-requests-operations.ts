/** Section 2's cold requests of the audit, integrity, tile cache and cache routes. */

import type { Case, Kit } from './cold-request-kit.ts';

/** The requests of these routes (see kit). */
export function operationRequests(k: Kit): Record<string, Omit<Case, 'operation'>> {
  const { f, W, get, run, made, call } = k;
  return {
    // audit and integrity
    listAuditEvents: { request: get(null, { limit: '50' }) },
    listWorkspaceAudit: { request: get(W) },
    getCatalogIntegrity: { request: get(null, { workspace: f.ws }) },
    repairCatalogIntegrity: {
      request: call(
        'POST',
        () => null,
        () => ({ query: { workspace: f.ws, confirm: 'true' } }),
      ),
    },
    // the tile cache
    createTileCacheJob: {
      request: call(
        'POST',
        (r) => ({ workspace: run(r).jobWorkspace }),
        () => ({ body: { type: 'truncate' } }),
      ),
      keep: (body, m) => m.set('tileCacheJob', body.id),
    },
    getTileCacheJob: {
      request: call('GET', (r, m) => ({ workspace: run(r).jobWorkspace, job: made(m, 'tileCacheJob') })),
    },
    getTileCacheJobProgress: {
      request: call('GET', (r, m) => ({ workspace: run(r).jobWorkspace, job: made(m, 'tileCacheJob') })),
    },
    listTileCacheJobs: { request: get(W) },
    cancelTileCacheJob: {
      request: call('DELETE', (r, m) => ({ workspace: run(r).jobWorkspace, job: made(m, 'tileCacheJob') })),
    },
    getPersistentTileCacheStats: { request: get(W) },
    getCacheStats: { request: get() },
    clearAllCaches: { request: call('POST', () => null) },
    clearCacheByType: {
      request: call('POST', () => ({ cacheType: 'descriptions' })),
    },
    clearWorkspaceCache: { request: call('POST', () => W) },
  };
}
