import { describe, expect, it } from 'vitest';
import { toApiKey, toApiKeyCredential } from '#store/api-keys-repository.ts';
import { readAuditRecord } from '#store/audit-records.ts';
import { toMapping } from '#store/claim-mappings-repository.ts';
import { StoredItemError } from '#store/decode.ts';
import { toOperation } from '#store/deletions-repository.ts';
import { toEvent, toJob as toImportJob } from '#store/imports-repository.ts';
import { withoutKeys } from '#store/items.ts';
import { entities, keys } from '#store/keys.ts';
import { toGroup } from '#store/layer-groups-repository.ts';
import { toLayer, toPublicIdMarker } from '#store/layers-repository.ts';
import { toJob as toHarvestJob } from '#store/mosaic-harvest-jobs-repository.ts';
import { toGranule } from '#store/mosaics-repository.ts';
import { toPolicy, toRole } from '#store/roles-repository.ts';
import { toService } from '#store/services-repository.ts';
import { toListed, toSession } from '#store/sessions-repository.ts';
import { toAsset } from '#store/style-assets-repository.ts';
import { toListedStyle, toStyle } from '#store/styles-repository.ts';
import { toJob as toTileCacheJob } from '#store/tile-cache-repository.ts';
import { toWorkspace } from '#store/workspaces-repository.ts';

type Item = Record<string, unknown>;

const WS = '0b9a4c4e-3f1e-4d7a-9c55-5a1b2c3d4e5f';
const SVC = '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const ID = '2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a';
const AT = '2026-11-29T10:00:00.000Z';
const HASH = 'a'.repeat(64);
const stamps = { version: 3, created_at: AT, updated_at: AT };

/** What the unchecked casts gave: the item without its keys and entity tag (and `extra`). */
const cast = (item: Item, ...extra: string[]) => withoutKeys(item, ...extra);
/** What the field-picking readers gave: the listed fields that are present. */
const pick = (item: Item, fields: string[]) =>
  Object.fromEntries(fields.filter((f) => item[f] !== undefined).map((f) => [f, item[f]]));

const layer: Item = {
  ...keys.layer(WS, SVC, ID),
  entity: entities.layer,
  id: ID,
  workspace_id: WS,
  service_id: SVC,
  source_layer: 'public.roads',
  public_id: 'roads',
  title: 'Roads',
  description: 'All roads',
  crs_default: 4326,
  enabled: true,
  public: false,
  allowed_roles: ['viewer', 'custom-role'],
  dimensions: [{ name: 'time', units: 'ISO8601', extent: '2020/2021', default: 'current' }],
  default_style: 'lines',
  styles: ['lines', 'dashes'],
  is_sql_view: true,
  sql_view: {
    sql: 'SELECT id, geom FROM roads',
    geometry_column: 'geom',
    srid: 4326,
    id_column: 'id',
    properties: [{ name: 'id', type: 'integer' }],
    read_only: true,
  },
  geometry_type: 'LineString',
  native_extent: { min_x: 0, min_y: 0, max_x: 1, max_y: 1, srid: 4326 },
  ...stamps,
};

const service: Item = {
  ...keys.service(WS, SVC),
  entity: entities.service,
  id: SVC,
  workspace_id: WS,
  name: 'roads-db',
  type: 'postgis',
  connection: {
    host: 'db',
    port: 5432,
    database: 'gis',
    user: 'reader',
    sslmode: 'require',
    schemas: ['public'],
  },
  password_enc: 'ENCRYPTED-SECRET-VALUE',
  enabled: true,
  status: 'active',
  ...stamps,
};

const session: Item = {
  ...keys.session(HASH),
  entity: entities.session,
  session_id: ID,
  token_hash: HASH,
  csrf_hash: 'b'.repeat(64),
  credential: { type: 'apikey', key_hash: 'c'.repeat(64), key_id: ID },
  expires_at: AT,
  idle_expires_at: AT,
  created_at: AT,
  expires_at_epoch: 1795000000,
};

const importJob: Item = {
  ...keys.importJob(WS, ID),
  entity: entities.importJob,
  id: ID,
  workspace_id: WS,
  name: 'roads.geojson',
  source_kind: 'upload',
  source_filename: 'roads.geojson',
  source_location: `uploads/${ID}`,
  status: 'awaiting_plan',
  phase: 'discover',
  plan: { layers: [] },
  discovery: { layers: [] },
  service_name: 'roads',
  clashes: [{ kind: 'public_id', name: 'roads', proposed: 'roads-2' }],
  auto_publish: false,
  max_bytes: 1000,
  processed_bytes: 10,
  processed_features: 2,
  processed_layers: 1,
  total_layers: 1,
  retry_count: 0,
  warnings: ['one'],
  run: 1,
  created_by: 'apikey:x',
  ...stamps,
};

/**
 * Every entity: a good item as the code writes it (keys, tag, a TTL, an attribute the type doesn't
 * name), what the old cast made of it, the optional fields an older item may lack, and a required one.
 */
const cases: {
  entity: string;
  decode: (item: Item) => unknown;
  item: Item;
  old: (item: Item) => unknown;
  optional: string[];
  required: string;
  wrong: [string, unknown];
}[] = [
  {
    entity: 'layer',
    decode: toLayer,
    item: { ...layer, unnamed_attribute: 1 },
    old: (i) => cast(i),
    optional: ['description', 'default_style', 'styles', 'sql_view', 'geometry_type', 'native_extent'],
    required: 'allowed_roles',
    wrong: ['enabled', 'yes'],
  },
  {
    entity: 'public id marker',
    decode: toPublicIdMarker,
    item: {
      ...keys.publicId(WS, 'roads'),
      entity: entities.publicId,
      kind: 'layer',
      target_id: ID,
      service_id: SVC,
      member_of_count: 2,
    },
    old: (i) => cast(i),
    optional: ['service_id'],
    required: 'target_id',
    wrong: ['member_of_count', '2'],
  },
  {
    entity: 'layer group',
    decode: toGroup,
    item: {
      ...keys.layerGroup(WS, ID),
      entity: entities.layerGroup,
      id: ID,
      workspace_id: WS,
      public_id: 'group',
      title: 'Group',
      members: [{ resource: 'roads', style: 'lines', opacity: 0.5 }, { resource: 'rivers' }],
      ...stamps,
    },
    old: (i) => cast(i),
    optional: [],
    required: 'members',
    wrong: ['members', [{ opacity: 1 }]],
  },
  {
    entity: 'service',
    decode: toService,
    item: service,
    old: (i) => cast(i),
    optional: ['password_enc', 'deletion_id'],
    required: 'connection',
    wrong: ['version', '3'],
  },
  {
    entity: 'workspace',
    decode: toWorkspace,
    item: {
      ...keys.workspace(WS),
      GSI1PK: 'WORKSPACES',
      GSI1SK: 'ws',
      entity: entities.workspace,
      id: WS,
      name: 'ws',
      description: 'A workspace',
      status: 'active',
      claim_mapping_count: 2,
      usage_slot: 3,
      usage_key: 'key-id',
      layer_count: 9,
      ...stamps,
    },
    old: (i) =>
      pick(i, [
        'claim_mapping_count',
        'deletion_id',
        'usage_slot',
        'usage_key',
        'id',
        'name',
        'description',
        'status',
        'version',
        'created_at',
        'updated_at',
      ]),
    optional: ['description', 'claim_mapping_count', 'usage_slot', 'usage_key'],
    required: 'name',
    wrong: ['usage_slot', 'three'],
  },
  {
    entity: 'API key',
    decode: toApiKey,
    item: {
      ...keys.apiKey(WS, ID),
      entity: entities.apiKey,
      id: ID,
      workspace_id: WS,
      name: 'ci',
      role_id: 'editor',
      key_prefix: 'gpk_abcdefgh',
      key_hash: HASH,
      revoked: false,
      expires_at: AT,
      owner_email: 'a@example.com',
      owner_name: 'A',
      expires_at_epoch: 1795000000,
      ...stamps,
    },
    old: (i) =>
      pick(i, [
        'id',
        'workspace_id',
        'name',
        'role_id',
        'key_prefix',
        'key_hash',
        'revoked',
        'expires_at',
        'owner_email',
        'owner_name',
        'version',
        'created_at',
        'updated_at',
      ]),
    optional: ['workspace_id', 'expires_at', 'owner_email', 'owner_name'],
    required: 'key_hash',
    wrong: ['revoked', 'false'],
  },
  {
    entity: 'API key credential',
    decode: toApiKeyCredential,
    item: {
      ...keys.apiKeyHash(HASH),
      entity: entities.apiKeyHash,
      key_id: ID,
      workspace_id: WS,
      role_id: 'viewer',
      revoked: false,
      expires_at: AT,
      name: 'ci',
      owner_name: 'A',
      usage_key: 'key-id',
      expires_at_epoch: 1795000000,
    },
    old: (i) => cast(i, 'expires_at_epoch'),
    optional: ['workspace_id', 'expires_at', 'owner_name', 'usage_key'],
    required: 'role_id',
    wrong: ['revoked', 'not-a-boolean'],
  },
  {
    entity: 'session',
    decode: toSession,
    item: session,
    old: (i) => cast(i, 'expires_at_epoch'),
    optional: ['rotated_at', 'grace_until', 'previous_token_hash', 'next_token_hash'],
    required: 'csrf_hash',
    wrong: ['credential', { type: 'apikey', key_id: ID }],
  },
  {
    entity: 'browser session',
    decode: toListed,
    item: {
      ...keys.browserSession(ID),
      ...keys.browserSessionListing(AT, ID),
      entity: entities.browserSession,
      session_id: ID,
      token_hash: HASH,
      principal: 'ci',
      principal_id: `apikey:${ID}`,
      auth_method: 'apikey',
      api_key_id: ID,
      super_admin: false,
      workspace_roles: [{ workspace: WS, role: 'editor' }],
      workspace_role_count: 1,
      rotations: 2,
      created_at: AT,
      refreshed_at: AT,
      expires_at: AT,
      idle_expires_at: AT,
      expires_at_epoch: 1795000000,
    },
    old: (i) => cast(i, 'expires_at_epoch', 'entity'),
    optional: ['api_key_id', 'issuer', 'refreshed_at'],
    required: 'workspace_roles',
    wrong: ['rotations', null],
  },
  {
    entity: 'claim mapping',
    decode: toMapping,
    item: {
      ...keys.claimMapping(WS, ID),
      entity: entities.claimMapping,
      id: ID,
      workspace_id: WS,
      claim_name: 'realm_access.roles',
      claim_value: 'gis',
      role_id: 'editor',
      priority: 10,
      custom_role: false,
      created_by: 'bootstrap',
      created_at: AT,
    },
    old: (i) => cast(i),
    optional: ['created_by'],
    required: 'priority',
    wrong: ['custom_role', 'no'],
  },
  {
    entity: 'role',
    decode: toRole,
    item: {
      ...keys.role('gis-editor'),
      GSI1PK: 'ROLES',
      GSI1SK: 'gis-editor',
      entity: entities.role,
      id: 'gis-editor',
      name: 'GIS editor',
      description: 'Edits',
      status: 'active',
      ref_count: 2,
      ...stamps,
    },
    old: (i) => cast(i),
    optional: ['description'],
    required: 'ref_count',
    wrong: ['status', 70707],
  },
  {
    entity: 'role policy',
    decode: toPolicy,
    item: {
      ...keys.rolePolicy('gis-editor', 'p1'),
      entity: entities.rolePolicy,
      id: 'p1',
      workspace: '*',
      service: 'management',
      // An operation id since renamed (ADR 0132) is still a policy's operation.
      operation: 'listLayersOld',
      action: 'read',
      created_at: AT,
    },
    old: (i) => cast(i),
    optional: [],
    required: 'action',
    wrong: ['service', 'ftp'],
  },
  {
    entity: 'style',
    decode: toStyle,
    item: {
      ...keys.style(WS, 'lines'),
      entity: entities.style,
      id: ID,
      workspace_id: WS,
      name: 'lines',
      format: 'mapbox',
      title: 'Lines',
      description: 'Line style',
      body: '{"version":8}',
      asset_refs: ['icon'],
      layer_ref_count: 4,
      ...stamps,
    },
    old: (i) => cast(i, 'layer_ref_count'),
    optional: ['title', 'description'],
    required: 'body',
    wrong: ['asset_refs', 'icon'],
  },
  {
    entity: 'style asset',
    decode: toAsset,
    item: {
      ...keys.styleAsset(WS, 'icon'),
      entity: entities.styleAsset,
      id: ID,
      workspace_id: WS,
      name: 'icon',
      content_type: 'image/png',
      size_bytes: 10,
      sha256: HASH,
      chunks: 1,
      ...stamps,
    },
    old: (i) =>
      pick(i, [
        'id',
        'workspace_id',
        'name',
        'content_type',
        'size_bytes',
        'sha256',
        'version',
        'created_at',
        'updated_at',
      ]),
    optional: [],
    required: 'sha256',
    wrong: ['size_bytes', '10'],
  },
  {
    entity: 'mosaic granule',
    decode: toGranule,
    item: {
      ...keys.mosaicGranule(WS, SVC, ID),
      entity: entities.mosaicGranule,
      id: ID,
      workspace_id: WS,
      service_id: SVC,
      source_uri: 's3://bucket/a.tif',
      time: AT,
      elevation: 10,
      added_generation: 2,
      removed_generation: 3,
      created_at: AT,
      crs: 'EPSG:4326',
      srid: 4326,
      bbox: [0, 0, 1, 1],
      width: 256,
      height: 256,
      band_count: 3,
      data_type: 'uint8',
      resolution_x: 0.1,
      resolution_y: 0.1,
    },
    old: (i) => cast(i),
    optional: ['time', 'elevation', 'removed_generation', 'srid'],
    required: 'added_generation',
    wrong: ['bbox', [0, 0, 1]],
  },
  {
    entity: 'deletion operation',
    decode: toOperation,
    item: {
      ...keys.deletion(ID),
      GSI1PK: 'DELETIONS',
      GSI1SK: AT,
      entity: entities.deletion,
      id: ID,
      scope: 'service',
      workspace_id: WS,
      workspace_name: 'ws',
      target_id: SVC,
      target_name: 'roads-db',
      status: 'running',
      phase: 'layers',
      progress: { total: 10, deleted: 4 },
      attempt_count: 1,
      last_error: 'timeout',
      created_at: AT,
      updated_at: AT,
      created_by: 'apikey:x',
      write_units: 12,
      checkpoint_from: 'LAYER#x',
    },
    old: (i) => cast(i),
    optional: ['last_error', 'completed_at', 'write_units', 'checkpoint_from'],
    required: 'progress',
    wrong: ['progress', { total: 10 }],
  },
  {
    entity: 'import job',
    decode: toImportJob,
    item: importJob,
    old: (i) => cast(i),
    optional: [
      'source_filename',
      'plan',
      'discovery',
      'clashes',
      'warnings',
      'requested_layers',
      'reserved_rows',
      'reserved_bytes',
      'reload',
    ],
    required: 'run',
    wrong: ['status', 'exploded'],
  },
  {
    entity: 'import event',
    decode: toEvent,
    item: {
      ...keys.importEvent(WS, ID, 3),
      entity: entities.importEvent,
      id: `${ID}.000003`,
      import_id: ID,
      status: 'failed',
      phase: 'transform',
      created_at: AT,
      processed_bytes: 1,
      processed_features: 1,
      processed_layers: 0,
      error_message: 'The file is not GeoJSON.',
      error_reason: 'unreadable_file',
    },
    old: (i) => cast(i),
    optional: ['warnings', 'clashes', 'error_message', 'error_reason'],
    required: 'phase',
    wrong: ['processed_bytes', '1'],
  },
  {
    entity: 'tile cache job',
    decode: toTileCacheJob,
    item: {
      ...keys.tileCacheJob(WS, ID),
      ...keys.tileCacheJobWorking(ID),
      entity: entities.tileCacheJob,
      id: ID,
      workspace_id: WS,
      type: 'seed',
      tile_matrix_set: 'WebMercatorQuad',
      layers: [{ id: ID, public_id: 'roads', service_id: SVC }],
      zoom_min: 0,
      zoom_max: 4,
      bbox: [-10, -10, 10, 10],
      status: 'running',
      cancel_requested: false,
      cursor: '3/1/1',
      tiles_total: 100,
      tiles_done: 10,
      tiles_rendered: 8,
      tiles_skipped: 2,
      tiles_removed: 0,
      bytes_written: 1000,
      bytes_removed: 0,
      started_at: AT,
      ...stamps,
    },
    old: (i) => cast(i),
    optional: ['bbox', 'cursor', 'tiles_total', 'started_at'],
    required: 'layers',
    wrong: ['zoom_max', '4'],
  },
  {
    entity: 'mosaic harvest job',
    decode: toHarvestJob,
    item: {
      ...keys.mosaicHarvestJob(WS, SVC, ID),
      entity: entities.mosaicHarvestJob,
      id: ID,
      workspace_id: WS,
      service_id: SVC,
      status: 'succeeded',
      phase: 'removing',
      pattern: '**/*.tif',
      remove_missing: true,
      cancel_requested: false,
      failures: [{ path: 'a.tif', reason: 'unreadable', message: 'Not a TIFF.' }],
      generation: 4,
      files_scanned: 3,
      files_total: 3,
      granules_added: 2,
      granules_removed: 1,
      files_skipped: 0,
      files_failed: 1,
      finished_at: AT,
      ...stamps,
    },
    old: (i) => cast(i),
    optional: ['cursor', 'generation', 'files_total', 'finished_at'],
    required: 'pattern',
    wrong: ['failures', [{ path: 'a.tif' }]],
  },
  {
    entity: 'audit record',
    decode: readAuditRecord,
    item: {
      ...keys.auditRecord(WS, AT, ID),
      entity: entities.auditRecord,
      id: ID,
      at: AT,
      workspace_id: WS,
      operation: 'createLayer',
      principal: { id: 'apikey:x', auth_method: 'apikey', subject: 'ci' },
      request_id: 'req-1',
      outcome: 'refused',
      status: 409,
      reason: 'public_id_taken',
      changes: [{ type: 'layer', id: ID, workspace_id: WS, parent_id: SVC, action: 'created', version: 1 }],
      count: 2,
      last_at: AT,
      last_request_id: 'req-2',
      expires_at_epoch: 1795000000,
    },
    old: (i) => cast(i, 'expires_at_epoch'),
    optional: ['workspace_id', 'status', 'reason', 'count', 'last_at', 'last_request_id'],
    required: 'changes',
    wrong: ['principal', 'apikey:x'],
  },
];

describe.each(cases)('the $entity decoder', ({ entity, decode, item, old, optional, required, wrong }) => {
  it('decodes a good item to the object the cast it replaces gave', () => {
    expect(decode(item)).toStrictEqual(old(item));
  });

  it('decodes an older item without the optional fields', () => {
    // Prepare
    const older = Object.fromEntries(Object.entries(item).filter(([k]) => !optional.includes(k)));
    // Act + Assess
    expect(decode(older)).toStrictEqual(old(older));
  });

  it('refuses an item without a required field, naming the entity, the key and the field', () => {
    const { [required]: _gone, ...broken } = item;
    expect(() => decode(broken)).toThrow(StoredItemError);
    expect(() => decode(broken)).toThrow(
      new RegExp(`^Stored ${entity} item .+ is malformed: .*\\b${required}\\b`),
    );
  });

  it('refuses an item with a field of the wrong type, never quoting its value', () => {
    // Prepare
    const [field, value] = wrong;
    const broken = { ...item, [field]: value };
    // Act
    let error: unknown;
    try {
      decode(broken);
    } catch (e) {
      error = e;
    }
    // Assess
    expect(error).toBeInstanceOf(StoredItemError);
    const e = error as StoredItemError;
    expect(e.entity).toBe(entity);
    expect(e.problems.join(' ')).toContain(field);
    expect(e.message).not.toContain(JSON.stringify(value));
    expect(e.message).not.toContain(HASH);
  });
});

describe('stored item errors', () => {
  it('name the item by its partition and sort key', () => {
    const { title: _t, ...broken } = layer;
    expect(() => toLayer(broken)).toThrow(
      `Stored layer item WS#${WS} / LAYER#${SVC}#${ID} is malformed: title:`,
    );
  });

  it('withhold a hash in the key, and name a session or credential by its public id instead', () => {
    const { csrf_hash: _c, ...brokenSession } = session;
    expect(() => toSession(brokenSession)).toThrow(`Stored session item of session ${ID} is malformed`);
    const credential = { ...keys.apiKeyHash(HASH), entity: entities.apiKeyHash, revoked: 'no' };
    expect(() => toApiKeyCredential(credential)).toThrow('APIKEYHASH#<hash> / APIKEYHASH');
  });

  it("never carry a secret field's value (an encrypted password, a token hash)", () => {
    const wrong = { ...service, password_enc: 42, port: 'x' };
    expect(() => toService(wrong)).toThrow(/password_enc: expected string/);
    try {
      toService({ ...service, version: 'x' });
    } catch (e) {
      expect((e as Error).message).not.toContain('ENCRYPTED-SECRET-VALUE');
    }
    try {
      toSession({ ...session, csrf_hash: 1 });
    } catch (e) {
      expect((e as Error).message).not.toContain(HASH);
      expect((e as Error).message).not.toContain('b'.repeat(64));
    }
  });

  it('are not domain errors: the request answers the generic 500, not a 4xx or a 503 (ADR 0144)', async () => {
    const { toErrorResponse } = await import('#http/errors.ts');
    const { title: _t, ...broken } = layer;
    let error: unknown;
    try {
      toLayer(broken);
    } catch (e) {
      error = e;
    }
    const answer = toErrorResponse(error, 'req-1');
    expect(answer.status).toBe(500);
    expect(answer.body.reason).toBe('internal_error');
    expect(JSON.stringify(answer.body)).not.toContain('LAYER#');
  });

  it('refuse an item of another entity where the reader checks the tag', () => {
    const item = {
      ...cases.find((c) => c.entity === 'tile cache job')?.item,
      entity: entities.mosaicHarvestJob,
    };
    expect(() => toTileCacheJob(item)).toThrow(/tile cache job .* entity: expected "TileCacheJob"/);
  });
});

describe('defaults an older item gets', () => {
  it('reads a public id marker without member_of_count as listed by no group', () => {
    const marker = { ...keys.publicId(WS, 'ghost'), entity: entities.publicId, kind: 'layer', target_id: ID };
    expect(toPublicIdMarker(marker)).toStrictEqual({ kind: 'layer', target_id: ID, member_of_count: 0 });
  });

  it('reads a harvest job without failures as one with none', () => {
    const job = cases.find((c) => c.entity === 'mosaic harvest job')?.item as Item;
    const { failures: _f, ...older } = job;
    expect(toHarvestJob(older)).toStrictEqual({ ...cast(older), failures: [] });
  });

  it('reads a service of either type, and refuses an unknown type', () => {
    const mosaic = { ...service, type: 'raster_mosaic', connection: { root_uri: 's3://b/p' } };
    expect(toService(mosaic)).toStrictEqual(cast(mosaic));
    expect(() => toService({ ...service, type: 'wms' })).toThrow(StoredItemError);
  });

  it('reads a style as listed (projected without its body)', () => {
    const style = cases.find((c) => c.entity === 'style')?.item as Item;
    const { body: _b, layer_ref_count: _n, ...listed } = style;
    expect(toListedStyle(listed)).toStrictEqual(cast(listed));
  });
});
