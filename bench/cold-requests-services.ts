/** Section 2's cold requests of the service, deletion, layer, layer group and raster mosaic routes. */
import { short } from './cold-fixtures.ts';
import type { Case, Kit } from './cold-request-kit.ts';

/** The requests of these routes (see kit). */
export function serviceRequests(k: Kit): Record<string, Omit<Case, 'operation'>> {
  const { f, W, S, M, get, run, made, call } = k;
  return {
    // services
    createService: {
      request: call(
        'POST',
        () => W,
        () => ({
          body: { name: `cold-new-${short()}`, type: 'postgis', connection: f.connection, enabled: true },
        }),
      ),
    },
    getService: { request: get(S) },
    getServiceDeletionPlan: { request: get(S) },
    listServices: { request: get(W) },
    discoverLayers: { request: call('POST', () => S) },
    testExistingServiceConnection: { request: call('POST', () => S) },
    testNewServiceConnection: {
      request: call(
        'POST',
        () => W,
        () => ({ body: { type: 'postgis', connection: f.connection } }),
      ),
    },
    updateService: {
      request: call(
        'PUT',
        () => ({ ...W, service: f.spare }),
        () => ({ body: { name: f.spareName, type: 'postgis', connection: f.connection, enabled: false } }),
      ),
    },
    validateSQLView: {
      request: call(
        'POST',
        () => S,
        () => ({ body: { sql: 'SELECT * FROM places' } }),
      ),
    },
    deleteService: {
      request: call('DELETE', (r) => ({ ...W, service: run(r).service })),
    },
    // deletions
    getDeletionOperation: { request: get({ id: f.deletion }) },
    listDeletionOperations: { request: get() },
    retryDeletionOperation: {
      request: call('POST', () => ({ id: f.deletion })),
    },
    // layers
    createLayer: {
      request: call(
        'POST',
        () => S,
        () => ({ body: { source_layer: 'places', public_id: `cold-${short()}`, enabled: true } }),
      ),
    },
    getLayer: { request: get({ ...S, layer: f.layer }) },
    listLayers: { request: get(S) },
    listWorkspaceLayers: { request: get(W) },
    updateLayer: {
      request: call(
        'PUT',
        () => ({ ...S, layer: f.layer }),
        () => ({ body: { title: `Cold ${short()}` } }),
      ),
    },
    deleteLayer: {
      request: call('DELETE', (r) => ({ ...S, layer: run(r).layer })),
    },
    // layer groups
    createLayerGroup: {
      request: call(
        'POST',
        () => W,
        () => ({
          body: { public_id: `cold-${short()}`, title: 'Cold', members: [{ resource: f.layerPublicId }] },
        }),
      ),
    },
    getLayerGroup: { request: get({ ...W, group: f.group }) },
    listLayerGroups: { request: get(W) },
    updateLayerGroup: {
      request: call(
        'PUT',
        () => ({ ...W, group: f.group }),
        () => ({
          body: { public_id: f.group, title: `Cold ${short()}`, members: [{ resource: f.layerPublicId }] },
        }),
      ),
    },
    deleteLayerGroup: {
      request: call('DELETE', (r) => ({ ...W, group: run(r).group })),
    },
    // the raster mosaic
    getMosaic: { request: get(M) },
    getMosaicGranule: { request: get({ ...M, granule: f.granule }) },
    listMosaicGranules: { request: get(M) },
    harvestMosaicGranules: {
      request: call(
        'POST',
        () => M,
        (r) => ({ body: { uris: [run(r).harvestFile] } }),
      ),
    },
    deleteMosaicGranule: {
      request: call('DELETE', (r) => ({ ...M, granule: run(r).granule })),
    },
    createMosaicHarvestJob: {
      request: call(
        'POST',
        (r) => ({ ...W, service: run(r).jobMosaic }),
        () => ({ body: { pattern: 'first.tif' } }),
      ),
      keep: (body, m) => m.set('harvestJob', body.id),
    },
    getMosaicHarvestJob: {
      request: call('GET', (r, m) => ({ ...W, service: run(r).jobMosaic, job: made(m, 'harvestJob') })),
    },
    listMosaicHarvestJobs: { request: get(M) },
    cancelMosaicHarvestJob: {
      request: call('DELETE', (r, m) => ({ ...W, service: run(r).jobMosaic, job: made(m, 'harvestJob') })),
    },
  };
}
