/** Section 2's cold requests of the import routes. */
import { short } from './cold-fixtures.ts';
import type { Case, Kit } from './cold-request-kit.ts';

/** The requests of these routes (see kit). */
export function importRequests(k: Kit): Record<string, Omit<Case, 'operation'>> {
  const { f, W, get, run, prepared, call } = k;
  return {
    // imports
    createImport: {
      request: call(
        'POST',
        () => W,
        () => ({
          body: {
            name: `cold-${short()}`,
            source: { kind: 'upload', filename: 'points.geojson', size_bytes: 1000 },
          },
        }),
      ),
    },
    getImport: { request: get({ ...W, import: f.waiting }) },
    getImportHistory: { request: get({ ...W, import: f.waiting }) },
    listImports: { request: get(W) },
    previewImport: {
      request: call(
        'GET',
        () => ({ ...W, import: prepared(f.staged) }),
        () => ({ query: { limit: '1' } }),
      ),
    },
    startImport: {
      request: call('POST', (r) => ({ ...W, import: run(r).imports.uploaded })),
    },
    setImportPlan: {
      request: call(
        'PUT',
        (r) => ({ ...W, import: run(r).imports.awaitingPlan }),
        () => ({ body: f.importPlan }),
      ),
    },
    publishImport: {
      request: call('POST', (r) => ({ ...W, import: prepared(run(r).imports.ready) })),
    },
    rollbackImport: {
      request: call('POST', (r) => ({ ...W, import: prepared(run(r).imports.published) })),
    },
    retryImport: {
      request: call('POST', (r) => ({ ...W, import: prepared(run(r).imports.failed) })),
    },
    cancelImport: {
      request: call('DELETE', (r) => ({ ...W, import: run(r).imports.created })),
    },
  };
}
