import { describe, expect, it } from 'vitest';
import { WCSSettingsSchema, WFSSettingsSchema, WMTSSettingsSchema } from '#api/settings-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { describeCommonStatuses } from '../support/common-statuses.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

/*
 * The WFS, WCS and WMTS settings (issue #26, ADR 0133): the same document semantics as the WMS
 * settings — defaults at version 0, whole replacement, If-Match, admin to write — and their own
 * validation. Nothing serves these protocols yet, so only the management API is under test.
 */

type Kind = 'wfs' | 'wcs' | 'wmts';
const kinds: Kind[] = ['wfs', 'wcs', 'wmts'];

/** Every field of each document set (the response must echo each one). */
const full: Record<Kind, Record<string, unknown>> = {
  wfs: {
    enabled: true,
    public: true,
    title: 'Roads WFS',
    abstract: 'Features of the road network',
    max_features: 5000,
    default_count: 250,
    max_offset: 50_000,
    count_timeout_ms: 3000,
  },
  wcs: {
    enabled: true,
    public: false,
    title: 'Elevation',
    abstract: 'A digital elevation model',
    max_cells: 1_000_000,
    max_output_bytes: 4 * 1024 * 1024,
    processing_timeout_ms: 8000,
    max_dimensions: 3,
    max_axis_values: 500,
    max_source_granules: 20,
    max_temporary_bytes: 64 * 1024 * 1024,
    extensions: ['range-subsetting', 'scaling', 'crs', 'interpolation'],
    output_formats: ['image/tiff', 'application/netcdf'],
    interpolation_methods: ['nearest-neighbor', 'linear'],
    allowed_subsetting_crs: ['http://www.opengis.net/def/crs/EPSG/0/4326', 'CRS:84'],
    allowed_output_crs: ['EPSG:3857', 'http://www.opengis.net/def/crs/EPSG/0/25832'],
  },
  wmts: {
    enabled: true,
    public: true,
    title: 'Basemap tiles',
    abstract: 'Tiles of the basemap',
    feature_info_enabled: false,
    vector_tiles_enabled: true,
    provider_name: 'Region GIS',
    provider_site: 'https://gis.example.org/maps',
    contact_name: 'GIS desk',
    contact_position: 'Operator',
    contact_email: 'gis@example.org',
  },
};

/** The smallest document of each kind, and what the API stores for it (its defaults filled in). */
const minimal: Record<Kind, { sent: Record<string, unknown>; stored: Record<string, unknown> }> = {
  wfs: { sent: { enabled: false }, stored: { enabled: false, public: false } },
  wcs: { sent: { enabled: true }, stored: { enabled: true, public: false } },
  wmts: {
    sent: { enabled: false },
    stored: { enabled: false, public: false, feature_info_enabled: false },
  },
};

const defaults: Record<Kind, Record<string, unknown>> = {
  wfs: { enabled: false, public: false },
  wcs: { enabled: false, public: false },
  wmts: { enabled: false, public: false, feature_info_enabled: true },
};

const schemas = { wfs: WFSSettingsSchema, wcs: WCSSettingsSchema, wmts: WMTSSettingsSchema };
const pathOf = (ws: string, kind: Kind) => `/workspaces/${ws}/settings/${kind}`;

/** A feed event as the local host serves it. */
interface FeedEvent {
  'detail-type': string;
  detail: Record<string, any>;
}

async function feedCursor(): Promise<string> {
  let cursor = '0';
  for (;;) {
    const res = await call('GET', `/events?limit=1000&cursor=${cursor}`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    if (res.body.next_cursor === cursor) return cursor;
    cursor = res.body.next_cursor;
  }
}

/** The events of the given request ids from `cursor` on, once `expected` of them arrived (or 20 s). */
async function eventsOf(cursor: string, ids: string[], expected: number): Promise<FeedEvent[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const events: FeedEvent[] = [];
    let at = cursor;
    for (;;) {
      const res = await call('GET', `/events?limit=1000&cursor=${at}`, { headers: asSuperAdmin() });
      events.push(...res.body.events);
      if (res.body.next_cursor === at) break;
      at = res.body.next_cursor;
    }
    const mine = events.filter((e) => ids.includes(e.detail.request_id));
    if (mine.length >= expected || Date.now() > deadline) return mine;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The newest records of a workspace's audit trail. */
async function trail(ws: string, query = '') {
  const res = await call('GET', `/workspaces/${ws}/audit${query}`, { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return res.body.records as Record<string, any>[];
}

describe('WFS, WCS and WMTS settings defaults', () => {
  it('returns the defaults of a fresh workspace at ETag "0", by id and by name, to a viewer', async () => {
    // Prepare
    const ws = await createWorkspace();
    const viewer = await createKey(ws.id, 'viewer');
    for (const kind of kinds) {
      // Act
      const byId = await call('GET', pathOf(ws.id, kind), { headers: withKey(viewer.key) });
      const byName = await call('GET', pathOf(ws.name, kind), { headers: withKey(viewer.key) });
      // Assess
      expect(byId.status, byId.text).toBe(200);
      expect(byId.body).toEqual(defaults[kind]);
      expect(byId.headers.etag).toBe('"0"');
      expect(byName.body).toEqual(byId.body);
      expect(schemas[kind].safeParse(byId.body).success).toBe(true);
    }
  });
});

describe.each(kinds)('%s settings', (kind) => {
  it('stores every field (200, ETag "1"), GET returns it, and a second PUT replaces the whole document', async () => {
    // Prepare
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const path = pathOf(ws.id, kind);
    // Act
    const put = await call('PUT', path, { headers: withKey(admin.key), body: full[kind] });
    const read = await call('GET', path, { headers: withKey(admin.key) });
    const replaced = await call('PUT', path, { headers: withKey(admin.key), body: minimal[kind].sent });
    const again = await call('GET', path, { headers: withKey(admin.key) });
    // Assess
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual(full[kind]);
    expect(put.headers.etag).toBe('"1"');
    expect(read.body).toEqual(full[kind]);
    expect(read.headers.etag).toBe('"1"');
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.headers.etag).toBe('"2"');
    // A replacement, not a merge: what the second PUT left out is gone.
    expect(again.body).toEqual(minimal[kind].stored);
    expect(again.headers.etag).toBe('"2"');
  });

  it('honours If-Match: 412 on a stale version (nothing written), 200 on the current one; without it the last writer wins', async () => {
    // Prepare
    const ws = await createWorkspace();
    const path = pathOf(ws.id, kind);
    // Act
    const stale = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"3"' },
      body: full[kind],
    });
    const untouched = await call('GET', path, { headers: asSuperAdmin() });
    const first = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"0"' },
      body: full[kind],
    });
    const staleAgain = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"0"' },
      body: minimal[kind].sent,
    });
    const unconditional = await call('PUT', path, { headers: asSuperAdmin(), body: minimal[kind].sent });
    // Assess
    expectError(stale, 412, 'version_mismatch');
    expect(untouched.headers.etag).toBe('"0"');
    expect(untouched.body).toEqual(defaults[kind]);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.etag).toBe('"1"');
    expectError(staleAgain, 412, 'version_mismatch');
    expect(unconditional.status, unconditional.text).toBe(200);
    expect(unconditional.headers.etag).toBe('"2"');
  });

  it('lets an admin write and a viewer or editor only read; 401 without a credential, 403 in another workspace, 404 for none', async () => {
    // Prepare
    const ws = await createWorkspace();
    const path = pathOf(ws.id, kind);
    const [viewer, editor, outsider] = await Promise.all([
      createKey(ws.id, 'viewer'),
      createKey(ws.id, 'editor'),
      createKey((await createWorkspace()).id, 'admin'),
    ]);
    // Act
    const byViewer = await call('PUT', path, { headers: withKey(viewer.key), body: full[kind] });
    const byEditor = await call('PUT', path, { headers: withKey(editor.key), body: full[kind] });
    const editorReads = await call('GET', path, { headers: withKey(editor.key) });
    // Assess
    expectError(byViewer, 403);
    expectError(byEditor, 403);
    expect(editorReads.status).toBe(200);
    expect(editorReads.headers.etag).toBe('"0"');
    expectError(await call('GET', path), 401, 'unauthenticated');
    expectError(await call('PUT', path, { body: full[kind] }), 401, 'unauthenticated');
    expectError(await call('GET', path, { headers: withKey(outsider.key) }), 403);
    expectError(await call('PUT', path, { headers: withKey(outsider.key), body: full[kind] }), 403);
    const missing = pathOf(uniqueName('missing'), kind);
    expectError(await call('GET', missing, { headers: asSuperAdmin() }), 404, 'workspace_not_found');
    expectError(
      await call('PUT', missing, { headers: asSuperAdmin(), body: full[kind] }),
      404,
      'workspace_not_found',
    );
  });

  it('audits the change and emits "Settings Created", then "Settings Updated", naming the document', async () => {
    // Prepare
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const path = pathOf(ws.id, kind);
    const cursor = await feedCursor();
    // Act
    const created = await call('PUT', path, { headers: withKey(admin.key), body: full[kind] });
    const updated = await call('PUT', path, {
      headers: { ...withKey(admin.key), 'If-Match': '"1"' },
      body: minimal[kind].sent,
    });
    const refused = await call('PUT', path, {
      headers: { ...withKey(admin.key), 'If-Match': '"1"' },
      body: full[kind],
    });
    // Assess
    expect(created.status, created.text).toBe(200);
    expect(updated.status, updated.text).toBe(200);
    expectError(refused, 412);
    const operation = `update${kind.toUpperCase()}Settings`;
    const records = await trail(ws.id);
    const byRequest = (res: { headers: Record<string, string> }) =>
      records.find((r) => r.request_id === res.headers['x-amzn-requestid']);
    expect(byRequest(created)).toMatchObject({
      operation,
      outcome: 'succeeded',
      principal: { id: `apikey:${admin.id}` },
      workspace_id: ws.id,
      changes: [{ type: 'settings', id: kind, action: 'created', version: 1 }],
    });
    expect(byRequest(updated)).toMatchObject({
      operation,
      outcome: 'succeeded',
      changes: [{ type: 'settings', id: kind, action: 'updated', version: 2 }],
    });
    expect(byRequest(refused)).toMatchObject({ operation, outcome: 'refused', status: 412, changes: [] });
    const ids = [created, updated, refused].map((r) => r.headers['x-amzn-requestid'] as string);
    const events = await eventsOf(cursor, ids, 2);
    expect(events.map((e) => [e['detail-type'], e.detail.request_id])).toEqual([
      ['Settings Created', ids[0]],
      ['Settings Updated', ids[1]],
    ]);
    for (const e of events)
      expect(e.detail).toMatchObject({ type: 'settings', id: kind, workspace_id: ws.id });
  });
});

/** Each invalid field of each document: the status 400 and the reason the API gives. */
const invalid: [Kind, string, Record<string, unknown>, string][] = [
  ['wfs', 'max_features above the ceiling', { enabled: true, max_features: 10_001 }, 'limit_exceeds_ceiling'],
  ['wfs', 'max_offset above the ceiling', { enabled: true, max_offset: 1_000_001 }, 'limit_exceeds_ceiling'],
  [
    'wfs',
    'count_timeout_ms above the ceiling',
    { enabled: true, count_timeout_ms: 10_001 },
    'limit_exceeds_ceiling',
  ],
  [
    'wfs',
    'default_count above max_features',
    { enabled: true, max_features: 100, default_count: 101 },
    'default_count_above_max',
  ],
  ['wfs', 'a zero limit', { enabled: true, default_count: 0 }, 'validation_failed'],
  ['wfs', 'a fractional limit', { enabled: true, max_features: 1.5 }, 'validation_failed'],
  ['wfs', 'a title of 257 characters', { enabled: true, title: 'x'.repeat(257) }, 'validation_failed'],
  ['wfs', 'enabled missing', { public: true }, 'validation_failed'],
  ['wfs', 'an unknown field', { enabled: true, output_format: 'GML3' }, 'validation_failed'],
  [
    'wcs',
    'max_cells above the ceiling',
    { enabled: true, max_cells: 4096 * 4096 + 1 },
    'limit_exceeds_ceiling',
  ],
  [
    'wcs',
    'max_output_bytes above the ceiling',
    { enabled: true, max_output_bytes: 10 * 1024 * 1024 + 1 },
    'limit_exceeds_ceiling',
  ],
  [
    'wcs',
    'processing_timeout_ms above the ceiling',
    { enabled: true, processing_timeout_ms: 15_001 },
    'limit_exceeds_ceiling',
  ],
  [
    'wcs',
    'max_temporary_bytes above the ceiling',
    { enabled: true, max_temporary_bytes: 512 * 1024 * 1024 + 1 },
    'limit_exceeds_ceiling',
  ],
  ['wcs', 'max_dimensions above the ceiling', { enabled: true, max_dimensions: 17 }, 'limit_exceeds_ceiling'],
  ['wcs', 'a negative limit', { enabled: true, max_source_granules: -1 }, 'validation_failed'],
  ['wcs', 'an unknown extension', { enabled: true, extensions: ['processing'] }, 'validation_failed'],
  ['wcs', 'a repeated extension', { enabled: true, extensions: ['crs', 'crs'] }, 'duplicate_value'],
  ['wcs', 'an unknown output format', { enabled: true, output_formats: ['image/png'] }, 'validation_failed'],
  [
    'wcs',
    'a non-canonical output format',
    { enabled: true, output_formats: ['IMAGE/TIFF'] },
    'validation_failed',
  ],
  [
    'wcs',
    'a repeated output format',
    { enabled: true, output_formats: ['image/tiff', 'image/tiff'] },
    'duplicate_value',
  ],
  [
    'wcs',
    'an unknown interpolation method',
    { enabled: true, interpolation_methods: ['cubic'] },
    'validation_failed',
  ],
  [
    'wcs',
    'a CRS that is no CRS name',
    { enabled: true, allowed_output_crs: ['web mercator'] },
    'validation_failed',
  ],
  ['wcs', 'an empty CRS', { enabled: true, allowed_subsetting_crs: [''] }, 'validation_failed'],
  [
    'wcs',
    'a repeated CRS',
    { enabled: true, allowed_subsetting_crs: ['EPSG:4326', 'EPSG:4326'] },
    'duplicate_value',
  ],
  [
    'wmts',
    'a relative provider_site',
    { enabled: true, provider_site: 'relative/path' },
    'validation_failed',
  ],
  [
    'wmts',
    'a provider_site of another scheme',
    { enabled: true, provider_site: 'ftp://gis.example.org/' },
    'validation_failed',
  ],
  [
    'wmts',
    'a contact_email that is no address',
    { enabled: true, contact_email: 'gis-desk' },
    'validation_failed',
  ],
  ['wmts', 'an empty provider_name', { enabled: true, provider_name: '' }, 'validation_failed'],
  [
    'wmts',
    'a contact_name of 257 characters',
    { enabled: true, contact_name: 'x'.repeat(257) },
    'validation_failed',
  ],
  [
    'wmts',
    'feature_info_enabled not a boolean',
    { enabled: true, feature_info_enabled: 'yes' },
    'validation_failed',
  ],
  [
    'wmts',
    'a tile matrix set list (the OGC API Tiles settings hold those)',
    { enabled: true, tile_matrix_sets: ['WebMercatorQuad'] },
    'validation_failed',
  ],
];

describe('WFS, WCS and WMTS settings validation (400, nothing written)', () => {
  it.each(invalid)(
    '%s: refuses %s with 400 %s and keeps the stored document',
    async (kind, _what, body, reason) => {
      // Prepare: a saved document, so "nothing written" is a version and a body that stay.
      const ws = await createWorkspace();
      const path = pathOf(ws.id, kind);
      const saved = await call('PUT', path, { headers: asSuperAdmin(), body: full[kind] });
      expect(saved.status, saved.text).toBe(200);
      // Act
      const refused = await call('PUT', path, { headers: asSuperAdmin(), body });
      const after = await call('GET', path, { headers: asSuperAdmin() });
      // Assess
      expectError(refused, 400, reason);
      expect(refused.body.detail.length).toBeGreaterThan(0);
      expect(after.headers.etag).toBe('"1"');
      expect(after.body).toEqual(full[kind]);
    },
  );

  it('accepts every limit at its ceiling', async () => {
    const ws = await createWorkspace();
    const bodies: Record<Kind, Record<string, unknown>> = {
      wfs: {
        enabled: true,
        max_features: 10_000,
        default_count: 10_000,
        max_offset: 1_000_000,
        count_timeout_ms: 10_000,
      },
      wcs: {
        enabled: true,
        max_cells: 4096 * 4096,
        max_output_bytes: 10 * 1024 * 1024,
        processing_timeout_ms: 15_000,
        max_dimensions: 16,
        max_axis_values: 10_000,
        max_source_granules: 1_000,
        max_temporary_bytes: 512 * 1024 * 1024,
      },
      wmts: { enabled: true, provider_site: 'http://localhost:8080' },
    };
    for (const kind of kinds) {
      const res = await call('PUT', pathOf(ws.id, kind), { headers: asSuperAdmin(), body: bodies[kind] });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject(bodies[kind]);
    }
  });
});

describeCommonStatuses('protocol settings', [
  { operationId: 'getWFSSettings', method: 'GET', path: '/workspaces/{ws}/settings/wfs' },
  { operationId: 'updateWFSSettings', method: 'PUT', path: '/workspaces/{ws}/settings/wfs', body: full.wfs },
  { operationId: 'getWCSSettings', method: 'GET', path: '/workspaces/{ws}/settings/wcs' },
  { operationId: 'updateWCSSettings', method: 'PUT', path: '/workspaces/{ws}/settings/wcs', body: full.wcs },
  { operationId: 'getWMTSSettings', method: 'GET', path: '/workspaces/{ws}/settings/wmts' },
  {
    operationId: 'updateWMTSSettings',
    method: 'PUT',
    path: '/workspaces/{ws}/settings/wmts',
    body: full.wmts,
  },
]);
