import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { writeArrayBuffer } from 'geotiff';
import sqlite from 'node-sqlite3-wasm';
import { afterAll, describe, expect, inject, it } from 'vitest';
import * as z from 'zod/mini';
import { successWithSchema } from '#api/openapi.ts';
import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import { localIssuer } from '#infra/local/files.ts';
import { type ApiResponse, asSuperAdmin, call } from '../support/client.ts';
import { importsOf, upload } from '../support/imports.ts';
import { mosaicRoot } from '../support/mosaic-roots.ts';
import { hostDynamo } from '../support/store.ts';

/**
 * The route table's examples replayed against the local host (issue #14, ADR 0095), so an example
 * can't lie. Every operation of the route table is replayed (the last test fails when one is
 * neither replayed nor listed in `notReplayed` with its reason), in the order of the examples'
 * story — the tests run in order and build on each other: the workspace `roads-demo`, its key,
 * role and claim mappings, a sign-in with a token the mapping admits, the style asset, style, tile
 * matrix set and settings, the PostGIS service `roads-db` with its layer and group, the raster
 * mosaic `ortho`, the imports `parcels-2026`, the audit trail, a service's recursive deletion, and
 * the deletes of everything, the workspace last.
 *
 * Each request is the operation's example verbatim (path parameters, query, body), sent as the
 * bootstrap super_admin (public operations without credentials), except exactly these values,
 * which exist only at run time:
 *   - the ids the story's own creates answered: API key, claim mappings, role policy, layer,
 *     granule, deletion, import, and the browser session revokeBrowserSession ends;
 *   - the PostGIS connection's endpoint and credentials (host, port, database, user, password,
 *     sslmode — only those the example sets) in createService and updateService: the local host's
 *     embedded PostGIS (its demo role, without TLS) stands in for `db.internal.example`; the rest
 *     of the body (name, schemas, enabled) is the example's;
 *   - login's `token`: a JWT of the local issuer for the example's user (getAuthMe's principal),
 *     whose `groups` claim the createClaimMapping example maps to editor; and the caller of
 *     getAuthMe (that token), refreshSession and logout (its session cookie and CSRF header);
 *   - putStyleAsset's body: the 70-byte PNG the example describes (the operation takes raw bytes).
 * What no example creates the story builds itself: the roads of the demo database (seeded), the
 * raster mosaic `ortho` with its GeoTIFFs and a first granule, the uploaded `parcels.gpkg`, an
 * import plan with a wrong CRS (so retryImport has a failed import to retry), and a corrupt layer
 * item (so listDeletionOperations?status=failed lists the deletion and retryDeletionOperation resumes it).
 *
 * The answer must have a documented 2xx status (the one the story expects, where given), match
 * the handler's schema, have every field the example shows (with the same JSON type), echo the
 * fields the example request set, and — where the story is in the example's state — carry the
 * example's values of the fields named by `same`.
 */

const byId = new Map(routes.map((op) => [op.operationId, op]));
const op = (id: string) => byId.get(id) as Operation;
const example = (id: string) => (op(id).examples ?? {}) as Required<NonNullable<Operation['examples']>>;

/**
 * Operations the story cannot replay, each with its reason: this list only shrinks, and the last
 * test fails when an operation is neither replayed nor listed here.
 */
const notReplayed: Readonly<Record<string, string>> = {
  cancelTileCacheJob:
    "the story's seed job finishes before a cancel can land (a finished job is a 409); test/e2e/tile-cache.test.ts cancels a 349,525-tile job mid-way",
  cancelMosaicHarvestJob:
    "the story's two-file harvest job finishes before a cancel can land (a finished job is a 409); test/e2e/mosaic-harvest-jobs.test.ts cancels a 10,000-file job mid-way",
};

/** Every operation replayed so far. */
const replayed = new Set<string>();

/** The PNG the `marker` asset example describes (70 bytes; its sha256 is the example's). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

interface ReplayOptions {
  /** Run-time values of path parameters the example names (only those; see the header). */
  ids?: Record<string, string>;
  /** The example body with run-time values swapped in (only those the header names). */
  request?: unknown;
  /** Raw bytes instead of a JSON body (putStyleAsset). */
  body?: Buffer;
  contentType?: string;
  /** The caller's credentials instead of the super_admin key (`{}`: none). */
  as?: Record<string, string>;
  /** The status the story expects (one of the documented 2xx). */
  status?: number;
  /** Top-level fields whose value must equal the example's (the story is in the example's state). */
  same?: readonly string[];
}

/** Sends an operation's example request, with the run-time values of `options`. */
function send(operation: Operation, options: ReplayOptions): Promise<ApiResponse> {
  const examples = operation.examples ?? {};
  const params = { ...(examples.params ?? {}) };
  for (const [name, value] of Object.entries(options.ids ?? {})) {
    expect(params, `${operation.operationId}: the example names {${name}}`).toHaveProperty(name);
    params[name] = value;
  }
  const path = operation.path
    .replace('/api/v1', '')
    .replace(/\{([^}]+)\}/g, (_m, name: string) => encodeURIComponent(params[name] as string));
  const query = new URLSearchParams(examples.query ?? {}).toString();
  return call(operation.method, `${path}${query ? `?${query}` : ''}`, {
    headers: {
      ...(options.as ?? asSuperAdmin()),
      ...(options.contentType ? { 'Content-Type': options.contentType } : {}),
    },
    body: options.body ?? options.request ?? examples.request,
  });
}

/** Replays one operation's example and checks the answer against the example response. */
async function replay(operationId: string, options: ReplayOptions = {}): Promise<ApiResponse> {
  const operation = op(operationId);
  expect(operation, `${operationId} is in the route table`).toBeDefined();
  const res = await send(operation, options);
  replayed.add(operationId);
  const documented = Object.keys(operation.responses)
    .map(Number)
    .filter((s) => s < 300);
  expect(documented, `${operationId}: ${res.status} ${res.text}`).toContain(res.status);
  if (options.status !== undefined) expect(res.status, `${operationId}: ${res.text}`).toBe(options.status);
  const schema =
    operation.responses[res.status]?.schema ??
    (operation.responses[res.status]?.mediaTypes
      ? undefined
      : operation.responses[successWithSchema(operation) as number]?.schema);
  if (!schema || res.status === 204) return res;
  const parsed = z.safeParse(schema as z.ZodMiniType, res.body);
  expect(parsed.success, `${operationId} answer: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
  const exampleResponse = operation.examples?.response as Record<string, unknown> | undefined;
  expect(exampleResponse, `${operationId} has a response example`).toBeDefined();
  const actual = res.body as Record<string, unknown>;
  for (const [key, value] of Object.entries(exampleResponse ?? {})) {
    // A nullable field may be null for this caller and not for the example's (the schema checked it).
    if (value === undefined || value === null || actual[key] === null) continue;
    expect(jsonType(actual[key]), `${operationId}: field ${key} of the example`).toBe(jsonType(value));
  }
  const request = options.request ?? operation.examples?.request;
  if (request && typeof request === 'object' && !Array.isArray(request)) {
    for (const [key, value] of Object.entries(request)) {
      if (exampleResponse && key in exampleResponse && typeof value !== 'object')
        expect(actual[key], `${operationId}: echoes ${key} like the example`).toEqual(exampleResponse[key]);
    }
  }
  for (const key of options.same ?? [])
    expect(actual[key], `${operationId}: ${key} as in the example`).toEqual(exampleResponse?.[key]);
  return res;
}

/** What the story created: the run-time values the replays substitute. */
const story = {
  apiKey: '',
  policy: '',
  mapping: '',
  globalMapping: '',
  layer: '',
  granule: '',
  harvestJob: '',
  deletion: '',
  import: '',
  failedImport: '',
  /** alice's token (the claim mapping example maps her `groups` claim to editor). */
  token: '',
};

const superAdmin = () => ({ headers: asSuperAdmin() });
const temp = mkdtempSync(join(tmpdir(), 'geoplane-examples-'));
const roots: string[] = [];
afterAll(() => {
  rmSync(temp, { recursive: true, force: true });
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The embedded PostGIS as its demo role (bootstrap.json): the endpoint the service examples stand for. */
function demoDatabase() {
  const boot = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8'));
  const { host, port, database, user, password } = boot.postgis as Record<string, string | number>;
  return { host, port, database, user, password, sslmode: 'disable' };
}

/** A service example's body with the connection's endpoint and credentials (only those it sets) swapped. */
function onDemoDatabase(operationId: string) {
  const body = example(operationId).request as { connection: Record<string, unknown> };
  const demo = demoDatabase() as Record<string, unknown>;
  const connection = Object.fromEntries(
    Object.entries(body.connection).map(([key, value]) => [key, key in demo ? demo[key] : value]),
  );
  return { ...body, connection };
}

/** Polls a deletion operation until `until` holds. */
async function deletion(id: string, until: (op: { status: string }) => boolean, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const res = await call('GET', `/deletions/${id}`, superAdmin());
    expect(res.status, res.text).toBe(200);
    if (until(res.body) || Date.now() > end) return res.body as { id: string; status: string };
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Cookie name → value from a response's Set-Cookie headers. */
function jar(res: ApiResponse): Record<string, string> {
  return Object.fromEntries(res.cookies.map((c) => c.split(';')[0]?.split('=') as [string, string]));
}

/** The headers of a browser session: its cookies and the CSRF header unsafe methods need. */
function session(cookies: Record<string, string>): Record<string, string> {
  return {
    Cookie: `__Host-session=${cookies['__Host-session']}; csrf_token=${cookies.csrf_token}`,
    'X-CSRF-Token': cookies.csrf_token as string,
  };
}

/**
 * The example's `parcels.gpkg`: a GeoPackage with the layer `parcels` (fields PARCEL_NO and
 * AREA_M2) of MultiPolygons in LV95 defined without an EPSG code, so the import waits for a plan
 * naming the CRS.
 */
function parcelsGpkg(): Buffer {
  const path = join(temp, 'parcels.gpkg');
  copyFileSync(join(import.meta.dirname, '../fixtures/imports/sample.gpkg'), path);
  const db = new sqlite.Database(path);
  try {
    db.exec(`
      DROP TRIGGER trigger_insert_feature_count_places; DROP TRIGGER trigger_delete_feature_count_places;
      DROP TRIGGER trigger_insert_feature_count_notes; DROP TRIGGER trigger_delete_feature_count_notes;
      DROP TABLE places; DROP TABLE notes;
      DELETE FROM gpkg_geometry_columns WHERE table_name <> 'parcels';
      DELETE FROM gpkg_ogr_contents WHERE table_name <> 'parcels';
      DELETE FROM gpkg_contents WHERE table_name <> 'parcels';
      ALTER TABLE parcels RENAME COLUMN code TO "PARCEL_NO";
      ALTER TABLE parcels ADD COLUMN "AREA_M2" DOUBLE;
      UPDATE parcels SET "AREA_M2" = 812.5 * fid;
      INSERT INTO gpkg_spatial_ref_sys (srs_name, srs_id, organization, organization_coordsys_id, definition)
        VALUES ('CH1903+ / LV95 (custom)', 100000, 'NONE', 100000, 'undefined');
      UPDATE gpkg_contents SET srs_id = 100000 WHERE table_name = 'parcels';
      UPDATE gpkg_geometry_columns SET srs_id = 100000 WHERE table_name = 'parcels';
    `);
    // The first parcel is a Polygon: wrapped as a MultiPolygon after its GeoPackage header (40 bytes).
    const { geom } = db.get('SELECT geom FROM parcels WHERE fid = 1') as { geom: Uint8Array };
    const multi = Buffer.concat([
      geom.subarray(0, 40),
      Buffer.from('010600000001000000', 'hex'),
      geom.subarray(40),
    ]);
    db.run('UPDATE parcels SET geom = ? WHERE fid = 1', [multi]);
  } finally {
    db.close();
  }
  return readFileSync(path);
}

/** A single-band EPSG:2056 GeoTIFF of 4×4 pixels of 250 m whose upper-left corner is (x, y). */
function lv95Tiff(x: number, y: number): Buffer {
  return Buffer.from(
    writeArrayBuffer(new Array(16).fill(1), {
      width: 4,
      height: 4,
      ModelPixelScale: [250, 250, 0],
      ModelTiepoint: [0, 0, 0, x, y, 0],
      ProjectedCSTypeGeoKey: 2056,
      GTModelTypeGeoKey: 1,
      GTRasterTypeGeoKey: 1,
    } as never),
  );
}

describe('the route table examples, replayed against the local host', { timeout: 180_000 }, () => {
  it('the OpenAPI document and the console configuration', async () => {
    const doc = await replay('getOpenAPI', { as: {}, status: 200 });
    expect(doc.body.openapi).toMatch(/^3\.1\./);
    for (const route of routes)
      expect(doc.body.paths[route.path]?.[route.method.toLowerCase()]).toBeDefined();
    await replay('getConsoleConfig', { as: {} });
    await replay('getHealth', { as: {}, status: 200 });
    await replay('getReadiness', { as: {}, status: 200 });
  });

  it('workspace, API key, role and policy, claim mappings', async () => {
    await replay('createWorkspace', { status: 201, same: ['name', 'description', 'version'] });
    await replay('getWorkspace', { same: ['name'] });
    await replay('updateWorkspace', { same: ['description', 'version'] });
    await replay('listWorkspaces');

    const key = await replay('createAPIKey', { status: 201, same: ['name', 'role_id', 'revoked'] });
    story.apiKey = key.body.id;
    await replay('listAPIKeys');
    const got = await replay('getAPIKey', { ids: { keyId: story.apiKey }, same: ['name', 'role_id'] });
    expect(got.body.id).toBe(story.apiKey);

    await replay('createRole', { status: 201, same: ['id', 'name', 'is_system'] });
    await replay('getRole', { same: ['id', 'is_system'] });
    const roles = await replay('listRoles');
    await replay('listWorkspaceRoles');
    // The four built-ins first, then the custom roles — the story's and those other test files made.
    expect(roles.body.roles.slice(0, 4)).toEqual(
      (example('listRoles').response as { roles: unknown[] }).roles.slice(0, 4),
    );
    expect(roles.body.roles.slice(4)).toContainEqual(
      expect.objectContaining({ id: 'publisher', is_system: false }),
    );
    const granted = await replay('addRolePolicy', { status: 201 });
    story.policy = granted.headers.location?.split('/').at(-1) as string;
    const policies = await replay('listRolePolicies');
    expect(policies.body.policies.map((p: { id: string }) => p.id)).toEqual([story.policy]);
    const rolePlan = await replay('getRoleDeletionPlan');
    expect(rolePlan.body.policies.map((p: { id: string }) => p.id)).toEqual([story.policy]);

    const mapping = await replay('createClaimMapping', { status: 201, same: ['claim_value', 'role_id'] });
    story.mapping = mapping.body.id;
    const mappings = await replay('listClaimMappings');
    expect(mappings.body.claim_mappings.map((m: { id: string }) => m.id)).toEqual([story.mapping]);
    await replay('getClaimMapping', { ids: { mappingId: story.mapping }, same: ['claim_value', 'role_id'] });
    const global = await replay('createGlobalClaimMapping', { status: 201, same: ['workspace_id'] });
    story.globalMapping = global.body.id;
    const globals = await replay('listGlobalClaimMappings');
    expect(globals.body.claim_mappings.map((m: { id: string }) => m.id)).toContain(story.globalMapping);
  });

  it("sign-in: the example user's token, mapped to editor, and its browser session", async () => {
    const issuer = await localIssuer(inject('host').dataDir);
    const me = example('getAuthMe').response as { principal: string };
    story.token = await issuer.sign({ groups: ['gis-editors'] }, me.principal, 600);
    const editor = [{ id: expect.any(String), name: 'roads-demo', role: 'editor' }];
    const who = await replay('getAuthMe', {
      as: { Authorization: `Bearer ${story.token}` },
      same: ['principal', 'auth_method', 'super_admin', 'global_role', 'session_id'],
    });
    expect(who.body.workspaces).toEqual(editor);

    const login = await replay('login', {
      as: {},
      request: { ...(example('login').request as object), token: story.token },
      status: 201,
      same: ['principal', 'auth_method', 'super_admin'],
    });
    expect(login.body.workspaces).toEqual(editor);
    const refreshed = await replay('refreshSession', { as: session(jar(login)), same: ['principal'] });
    expect(jar(refreshed)['__Host-session']).not.toBe(jar(login)['__Host-session']);
    // Newest first: this run's sign-in leads unless another test signed in meanwhile.
    const sessions = await replay('listBrowserSessions');
    const listedIds = sessions.body.sessions.map((s: { id: string }) => s.id);
    if (!sessions.body.next_cursor) expect(listedIds).toContain(login.body.session_id);
    const out = await replay('logout', { as: session(jar(refreshed)), status: 204 });
    expect(out.cookies.some((c) => c.startsWith('__Host-session=;') || /Max-Age=0/.test(c))).toBe(true);
    // Not an example: a second sign-in of the user, for the revocation to end.
    const again = await call('POST', '/auth/login', { body: { token: story.token } });
    expect(again.status, again.text).toBe(201);
    await replay('revokeBrowserSession', { ids: { session: again.body.session_id }, status: 204 });
    expect((await call('GET', '/auth/me', { headers: session(jar(again)) })).status).toBe(401);
  });

  it('style asset, style, tile matrix set, settings', async () => {
    const created = await replay('putStyleAsset', { body: PNG, contentType: 'image/png', status: 201 });
    expect(created.body.version).toBe(1);
    const replaced = await replay('putStyleAsset', {
      body: PNG,
      contentType: 'image/png',
      status: 200,
      same: ['name', 'content_type', 'size_bytes', 'sha256', 'version'],
    });
    expect(replaced.body.id).toBe(created.body.id);
    const bytes = await replay('getStyleAsset', { status: 200 });
    expect(bytes.raw).toEqual(PNG);
    await replay('listStyleAssets');
    await replay('createStyle', { status: 201, same: ['name', 'format', 'asset_refs'] });
    await replay('getStyle', { same: ['asset_refs', 'body'] });
    await replay('updateStyle', { same: ['title', 'version'] });
    await replay('listStyles');
    await replay('putTileMatrixSet', {
      status: 201,
      same: ['id', 'built_in', 'definition', 'revision', 'digest'],
    });
    await replay('getTileMatrixSet', { same: ['id', 'definition', 'digest'] });
    await replay('listTileMatrixSets');
    await replay('listWorkspaceTileMatrixSets');
    for (const [update, get] of [
      ['updateWMSSettings', 'getWMSSettings'],
      ['updateOGCAPISettings', 'getOGCAPISettings'],
      ['updateOGCTilesAPISettings', 'getOGCTilesAPISettings'],
      ['updateWFSSettings', 'getWFSSettings'],
      ['updateWCSSettings', 'getWCSSettings'],
      ['updateWMTSSettings', 'getWMTSSettings'],
    ] as const) {
      const written = await replay(update);
      expect(written.body).toEqual(example(update).response);
      expect((await replay(get)).body).toEqual(example(get).response);
    }
  });

  it('a PostGIS service, its layer and its layer group', async () => {
    await replay('createService', {
      request: onDemoDatabase('createService'),
      status: 201,
      same: ['name', 'type', 'enabled', 'configured_secrets', 'version'],
    });
    await replay('listServices');
    await replay('getService', { same: ['name', 'type'] });
    await replay('updateService', {
      request: onDemoDatabase('updateService'),
      same: ['name', 'configured_secrets', 'version'],
    });
    await replay('testExistingServiceConnection', { same: ['ok'] });
    await replay('testNewServiceConnection', { request: onDemoDatabase('testNewServiceConnection') });
    const discovered = await replay('discoverLayers');
    expect(discovered.body.layers.map((l: { name: string }) => l.name)).toContain('roads');
    await replay('validateSQLView', { same: ['valid'] });

    const layer = await replay('createLayer', {
      status: 201,
      same: ['source_layer', 'public_id', 'title', 'default_style', 'styles', 'enabled', 'public'],
    });
    story.layer = layer.body.id;
    await replay('listLayers');
    await replay('listWorkspaceLayers');
    await replay('getLayer', { ids: { layer: story.layer }, same: ['public_id'] });
    await replay('updateLayer', { ids: { layer: story.layer }, same: ['title', 'public', 'version'] });

    await replay('createLayerGroup', { status: 201, same: ['public_id', 'title', 'members'] });
    await replay('listLayerGroups');
    await replay('getLayerGroup', { same: ['public_id', 'members'] });
    await replay('updateLayerGroup', { same: ['title', 'members', 'version'] });
    const plan = await replay('getServiceDeletionPlan', {
      same: ['mosaic_granules', 'style_references', 'role_references', 'total'],
    });
    expect(plan.body.target).toMatchObject({ scope: 'service', name: 'roads-db', type: 'postgis' });
    expect(plan.body.layers.items).toEqual([{ id: story.layer, public_id: 'roads' }]);
    expect(plan.body.layer_groups.items.map((g: { public_id: string }) => g.public_id)).toEqual(['basemap']);
  });

  it('a raster mosaic: harvest, read, list, remove a granule', async () => {
    const root = mosaicRoot('ortho-');
    roots.push(root);
    mkdirSync(join(root, '2025'), { recursive: true });
    writeFileSync(join(root, '2025/tile_0_0.tif'), lv95Tiff(2600000, 1201000));
    writeFileSync(join(root, '2025/tile_0_1.tif'), lv95Tiff(2601000, 1201000));
    // No example creates a mosaic (createService's is the PostGIS one): the story does, with a first granule.
    const svc = await call('POST', '/workspaces/roads-demo/services', {
      ...superAdmin(),
      body: { name: 'ortho', type: 'raster_mosaic', connection: { root_uri: root } },
    });
    expect(svc.status, svc.text).toBe(201);
    const first = await call('POST', '/workspaces/roads-demo/services/ortho/mosaic/harvest', {
      ...superAdmin(),
      body: { uris: ['2025/tile_0_1.tif'] },
    });
    expect(first.status, first.text).toBe(200);

    const harvested = await replay('harvestMosaicGranules', { same: ['skipped'] });
    expect(harvested.body.added).toHaveLength(1);
    story.granule = harvested.body.added[0].id;
    expect(harvested.body.added[0]).toMatchObject({
      source_uri: `${root}/2025/tile_0_0.tif`,
      crs: 'EPSG:2056',
      srid: 2056,
      bbox: [2600000, 1200000, 2601000, 1201000],
      time: '2025-06-01T00:00:00.000Z',
    });
    const mosaic = await replay('getMosaic');
    expect(mosaic.body).toMatchObject({ generation: 2, granule_count: 2 });
    const listed = await replay('listMosaicGranules');
    expect(listed.body.granules.map((g: { id: string }) => g.id)).toEqual([story.granule]);
    await replay('getMosaicGranule', {
      ids: { granule: story.granule },
      same: ['crs', 'srid', 'bbox', 'time'],
    });
    await replay('deleteMosaicGranule', { ids: { granule: story.granule }, status: 204 });

    // The removed file comes back through a harvest job (ADR 0136); the other one is skipped.
    const job = await replay('createMosaicHarvestJob', {
      status: 202,
      same: ['status', 'pattern', 'progress'],
    });
    story.harvestJob = job.body.id;
    await expect
      .poll(async () => {
        const res = await call(
          'GET',
          `/workspaces/roads-demo/services/ortho/mosaic/harvest-jobs/${story.harvestJob}`,
          superAdmin(),
        );
        return res.body.status;
      })
      .toBe('succeeded');
    const done = await replay('getMosaicHarvestJob', {
      ids: { job: story.harvestJob },
      same: ['pattern', 'phase'],
    });
    expect(done.body.progress).toMatchObject({ files_scanned: 2, granules_added: 1, files_skipped: 1 });
    const jobs = await replay('listMosaicHarvestJobs');
    expect(jobs.body.jobs.map((j: { id: string }) => j.id)).toEqual([story.harvestJob]);
  });

  it('an import: upload, plan, preview, publish, history, roll back', async () => {
    const imports = importsOf('roads-demo');
    const created = await replay('createImport', {
      status: 201,
      same: ['name', 'source_kind', 'source_filename', 'status', 'phase', 'service_name', 'auto_publish'],
    });
    story.import = created.body.id;
    const ids = { import: story.import };
    const sent = await upload(created.body.upload, parcelsGpkg(), 'parcels.gpkg');
    expect(sent.status, sent.text).toBe(204);
    await replay('startImport', { ids, status: 202, same: ['status', 'phase'] });
    const waiting = await imports.until(story.import, ['awaiting_plan', 'failed', 'ready_to_publish']);
    expect(waiting.body.status, waiting.text).toBe('awaiting_plan');

    await replay('getImport', { ids, same: ['status', 'phase', 'plan', 'warnings', 'total_layers'] });
    const listed = await replay('listImports');
    expect(listed.body.imports.map((i: { id: string }) => i.id)).toEqual([story.import]);
    const history = await replay('getImportHistory', { ids });
    const steps = (events: { status: string; phase: string }[]) =>
      events.map((e) => `${e.status}/${e.phase}`);
    const documented = example('getImportHistory').response as {
      events: { status: string; phase: string }[];
    };
    expect(steps(history.body.events)).toEqual(steps(documented.events));
    await replay('setImportPlan', { ids, same: ['status', 'phase', 'plan'] });
    const ready = await imports.until(story.import, ['ready_to_publish', 'failed']);
    expect(ready.body.status, ready.text).toBe('ready_to_publish');
    const preview = await replay('previewImport', { ids });
    expect(preview.body.features).toHaveLength(1);
    const feature = (example('previewImport').response as { features: Record<string, any>[] }).features[0];
    expect(preview.body.features[0]).toMatchObject({
      type: 'Feature',
      geometry: { type: feature?.geometry.type },
    });
    expect(Object.keys(preview.body.features[0].properties)).toEqual(Object.keys(feature?.properties));
    await replay('publishImport', { ids, status: 202, same: ['status', 'phase'] });
    const published = await imports.until(story.import, ['published', 'failed']);
    expect(published.body.status, published.text).toBe('published');
    await replay('rollbackImport', { ids, status: 202, same: ['status', 'phase'] });
    const rolledBack = await imports.until(story.import, ['rolled_back', 'failed'], 120_000);
    expect(rolledBack.body.status, rolledBack.text).toBe('rolled_back');
  });

  it('an import whose plan names the wrong CRS: it fails, the right plan and a retry load it, it is cancelled', async () => {
    const imports = importsOf('roads-demo');
    const created = await replay('createImport', { status: 201 });
    story.failedImport = created.body.id;
    const ids = { import: story.failedImport };
    const sent = await upload(created.body.upload, parcelsGpkg(), 'parcels.gpkg');
    expect(sent.status, sent.text).toBe(204);
    await replay('startImport', { ids, status: 202 });
    expect((await imports.until(story.failedImport, ['awaiting_plan', 'failed'])).body.status).toBe(
      'awaiting_plan',
    );
    // Not an example: a plan naming a CRS PostGIS doesn't know makes the load fail.
    const plan = example('setImportPlan').request as { layers: Record<string, unknown>[] };
    const wrong = await imports.plan(story.failedImport, {
      layers: plan.layers.map((l) => ({ ...l, source_srid: 998999 })),
    });
    expect(wrong.status, wrong.text).toBe(200);
    const failed = await imports.until(story.failedImport, ['failed', 'ready_to_publish']);
    expect(failed.body.status, failed.text).toBe('failed');
    // The example's plan, stored for the retry (the import stays failed).
    const right = await imports.plan(story.failedImport, plan);
    expect([right.status, right.body.status], right.text).toEqual([200, 'failed']);
    await replay('retryImport', { ids, status: 202, same: ['status', 'phase', 'retry_count'] });
    const ready = await imports.until(story.failedImport, ['ready_to_publish', 'failed']);
    expect(ready.body.status, ready.text).toBe('ready_to_publish');
    await replay('cancelImport', { ids, status: 202, same: ['status'] });
    expect((await imports.until(story.failedImport, ['cancelled'])).body.status).toBe('cancelled');
  });

  it('the audit trail', async () => {
    const all = await replay('listAuditEvents');
    expect(all.body.records.length).toBeGreaterThan(0);
    const trail = await replay('listWorkspaceAudit');
    expect(trail.body.records.map((r: { operation: string }) => r.operation)).toContain('updateLayer');
  });

  it("a service's recursive deletion: it fails, is listed as failed, is retried and completes", async () => {
    // The fault no example shows: a layer item the workflow can't interpret (no public_id).
    const ws = (await call('GET', '/workspaces/roads-demo', superAdmin())).body;
    const svc = (await call('GET', '/workspaces/roads-demo/services/roads-db', superAdmin())).body;
    const broken = { PK: `WS#${ws.id}`, SK: `LAYER#${svc.id}#zz-broken`, entity: 'Layer', id: 'zz-broken' };
    const db = hostDynamo();
    await db.send(new PutCommand({ TableName: inject('host').tableName, Item: broken }));

    const started = await replay('deleteService', {
      status: 202,
      same: ['scope', 'target_name', 'status'],
    });
    story.deletion = started.body.id;
    expect(
      (await deletion(story.deletion, (o) => o.status !== 'pending' && o.status !== 'running')).status,
    ).toBe('failed');
    const failed = await replay('listDeletionOperations');
    expect(failed.body.deletions.map((d: { id: string }) => d.id)).toContain(story.deletion);

    await db.send(
      new PutCommand({ TableName: inject('host').tableName, Item: { ...broken, public_id: 'zz-broken' } }),
    );
    await replay('retryDeletionOperation', {
      ids: { id: story.deletion },
      status: 202,
      same: ['status', 'scope'],
    });
    expect((await deletion(story.deletion, (o) => o.status === 'completed')).status).toBe('completed');
    await replay('getDeletionOperation', {
      ids: { id: story.deletion },
      same: ['status', 'phase', 'scope', 'target_name'],
    });
  });

  it('the deletes: group, layer, style, asset, service, tile matrix set, key, policy, role, mappings, workspace', async () => {
    // The service is published again (the same examples), then taken apart piece by piece.
    await replay('createService', { request: onDemoDatabase('createService'), status: 201 });
    story.layer = (await replay('createLayer', { status: 201 })).body.id;
    await replay('createLayerGroup', { status: 201 });

    // The tile cache (ADR 0139): the layer seeded as the example says, the job read, the caches cleared.
    const seeded = await replay('createTileCacheJob', {
      status: 202,
      same: ['type', 'layers', 'zoom_min', 'zoom_max', 'bbox', 'status', 'tile_matrix_set'],
    });
    await expect
      .poll(async () => {
        const res = await call(
          'GET',
          `/workspaces/roads-demo/tile-cache/jobs/${seeded.body.id}`,
          superAdmin(),
        );
        return res.body.status;
      })
      .toBe('succeeded');
    await replay('getTileCacheJob', {
      ids: { job: seeded.body.id },
      same: ['type', 'layers', 'zoom_min', 'zoom_max', 'bbox'],
    });
    await replay('getTileCacheJobProgress', { ids: { job: seeded.body.id }, same: ['type'] });
    const jobs = await replay('listTileCacheJobs');
    expect(jobs.body.jobs.map((j: { id: string }) => j.id)).toEqual([seeded.body.id]);
    const stats = await replay('getPersistentTileCacheStats', { same: ['store', 'cache_enabled'] });
    expect(stats.body.entries).toBe(seeded.body.tiles_total);
    await replay('clearWorkspaceCache', { same: ['cleared'] });
    await replay('getCacheStats');
    await replay('clearCacheByType', { same: ['cleared'] });
    await replay('clearAllCaches', { same: ['cleared'] });

    await replay('deleteLayerGroup', { status: 204 });
    await replay('deleteLayer', { ids: { layer: story.layer }, status: 204 });
    await replay('deleteStyle', { status: 204 });
    await replay('deleteStyleAsset', { status: 204 });
    // Empty now: deleted at once.
    await replay('deleteService', { status: 204 });
    await replay('deleteTileMatrixSet', { status: 204 });

    await replay('revokeAPIKey', { ids: { keyId: story.apiKey }, status: 204 });
    await replay('deleteAPIKey', { ids: { keyId: story.apiKey }, status: 204 });
    await replay('removeRolePolicy', { ids: { policyId: story.policy }, status: 204 });
    await replay('deleteRole', { status: 204 });
    await replay('deleteClaimMapping', { ids: { mappingId: story.mapping }, status: 204 });
    await replay('deleteGlobalClaimMapping', { ids: { mappingId: story.globalMapping }, status: 204 });
    expect(
      (await call('GET', '/auth/me', { headers: { Authorization: `Bearer ${story.token}` } })).body
        .workspaces,
    ).toEqual([]);

    await replay('getWorkspaceSummary');
    // The integrity check and repair of the story's workspace (its example narrows to it: the
    // catalog is shared with other test files, whose planted damage is theirs to keep).
    await replay('getCatalogIntegrity');
    await replay('repairCatalogIntegrity');
    await replay('getWorkspaceDeletionPlan');
    const gone = await replay('deleteWorkspace', { status: 202, same: ['scope', 'target_name', 'status'] });
    expect((await deletion(gone.body.id, (o) => o.status === 'completed')).status).toBe('completed');
    expect((await call('GET', '/workspaces/roads-demo', superAdmin())).status).toBe(404);
  });

  it('replays every operation of the route table, or says why not', () => {
    const missing = routes
      .map((r) => r.operationId)
      .filter((id) => !replayed.has(id) && !(id in notReplayed));
    expect(missing, 'operations neither replayed nor listed in notReplayed').toEqual([]);
    for (const id of Object.keys(notReplayed)) {
      expect(byId.has(id), `${id} (notReplayed) is in the route table`).toBe(true);
      expect(replayed.has(id), `${id} is replayed: remove it from notReplayed`).toBe(false);
    }
  });
});
