import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import type { Schema } from '#api/operation.ts';
import * as apiKeyOps from '#api/operations/api-keys.ts';
import * as claimMappingOps from '#api/operations/claim-mappings.ts';
import * as groupOps from '#api/operations/layer-groups.ts';
import * as layerOps from '#api/operations/layers.ts';
import * as roleOps from '#api/operations/roles.ts';
import * as serviceOps from '#api/operations/services.ts';
import * as settingsOps from '#api/operations/settings.ts';
import * as styleOps from '#api/operations/styles.ts';
import * as tmsOps from '#api/operations/tile-matrix-sets.ts';
import * as workspaceOps from '#api/operations/workspaces.ts';
import { MAX_SQL_BYTES } from '#api/schemas.ts';
import { AesGcmSecretBox } from '#datasources/local-secret-box.ts';
import { createApiKey } from '#domain/api-keys.ts';
import { createClaimMapping } from '#domain/claim-mappings.ts';
import type { DataSourceGateway } from '#domain/datasource.ts';
import { InvalidInputError } from '#domain/errors.ts';
import { createLayerGroup } from '#domain/layer-groups.ts';
import { createLayer, type LayerInput } from '#domain/layers.ts';
import { createRole } from '#domain/roles.ts';
import { createService, type Service } from '#domain/services.ts';
import { type SettingsKind, updateSettings } from '#domain/settings.ts';
import { createStyle, MAX_STYLE_TEXT_BYTES, type StyleInput } from '#domain/styles.ts';
import {
  MAX_DEFINITION_BYTES,
  putTileMatrixSet,
  type TileMatrixSetDefinition,
} from '#domain/tile-matrix-sets.ts';
import { createWorkspace } from '#domain/workspaces.ts';
import { DynamoApiKeyRepository } from '#store/api-keys-repository.ts';
import { DynamoClaimMappingRepository } from '#store/claim-mappings-repository.ts';
import { DynamoLayerGroupRepository } from '#store/layer-groups-repository.ts';
import { DynamoLayerRepository } from '#store/layers-repository.ts';
import { DynamoRoleRepository } from '#store/roles-repository.ts';
import { DynamoServiceRepository } from '#store/services-repository.ts';
import { DynamoSettingsRepository } from '#store/settings-repository.ts';
import { DynamoStyleRepository } from '#store/styles-repository.ts';
import { DynamoTileMatrixSetRepository } from '#store/tile-matrix-sets-repository.ts';
import { DynamoWorkspaceRepository } from '#store/workspaces-repository.ts';

/**
 * Every write the real repositories send is captured (no DynamoDB): the test measures the items
 * they would store for the largest bodies the API accepts (ADR 0073).
 */
const sent = vi.hoisted(() => [] as { name: string; input: Record<string, any> }[]);
vi.mock('#store/client.ts', () => ({
  documentClient: () => ({
    send: async (command: { constructor: { name: string }; input: Record<string, any> }) => {
      sent.push({ name: command.constructor.name, input: command.input });
      // BatchGet (tile matrix sets named by tiles settings): every requested key exists.
      if (command.constructor.name === 'BatchGetCommand') {
        const [table, request] = Object.entries(command.input.RequestItems)[0] as [string, { Keys: any[] }];
        const found = request.Keys.map((k: { PK: string }) => ({ ...k, id: k.PK.split('#').pop() }));
        return { Responses: { [table]: found } };
      }
      return {};
    },
  }),
  tableName: () => 'item-size-test',
}));

/** DynamoDB's 400 KB item limit. */
const ITEM_LIMIT = 400 * 1024;
/** What the budget promises: every item well under the limit (ADR 0073). */
const BUDGET = 340 * 1024;

/**
 * An upper bound of DynamoDB's size of a value (its "Item sizes and formats" rules): strings and
 * binaries by their UTF-8 bytes, numbers at their 21-byte maximum, 1 byte for booleans and null,
 * 3 bytes per list or map plus 1 per element, map keys by their UTF-8 bytes.
 */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return 21;
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((n: number, v) => n + sizeOf(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, v) => n + 1 + sizeOf(v), 0);
  if (value && typeof value === 'object') {
    return (
      3 +
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k, 'utf8') + sizeOf(v), 0)
    );
  }
  return 0;
}

/** An item's size: attribute names plus values (no outer map overhead). */
function itemSize(item: Record<string, unknown>): number {
  return Object.entries(item)
    .filter(([, v]) => v !== undefined)
    .reduce((n, [k, v]) => n + Buffer.byteLength(k, 'utf8') + sizeOf(v), 0);
}

/** Every item Put by the captured writes (single Puts and Puts inside transactions). */
function putItems(): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (const { input } of sent) {
    if (input.Item) items.push(input.Item);
    for (const t of input.TransactItems ?? []) if (t.Put) items.push(t.Put.Item);
  }
  return items;
}

function largestPut(): number {
  const sizes = putItems().map(itemSize);
  expect(sizes.length).toBeGreaterThan(0);
  return Math.max(...sizes);
}

/** Checks a body against the operation's byte limit and schema: it is one the API accepts. */
function accepted<T>(
  op: { request: { body?: Schema }; maxBodyBytes?: number },
  body: unknown,
  text = JSON.stringify(body),
): T {
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(op.maxBodyBytes ?? 1024 * 1024);
  const parsed = (op.request.body as Schema).safeParse(body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues?.slice(0, 3))).toBe(true);
  return parsed.data as T;
}

type Json = Record<string, any>;

/** The maxLength (strings) or maxItems (arrays) the operation's body schema declares at a path. */
function limitOf(op: { request: { body?: Schema } }, ...path: (string | number)[]): number {
  const root = z.toJSONSchema(op.request.body as Schema, { unrepresentable: 'any', io: 'input' }) as Json;
  const resolve = (n: Json | undefined): Json | undefined =>
    n?.$ref ? resolve(root.$defs?.[String(n.$ref).split('/').pop() as string]) : n;
  const pick = (n: Json | undefined, fits: (o: Json) => boolean): Json | undefined => {
    const node = resolve(n);
    const options = (node?.anyOf ?? node?.oneOf) as Json[] | undefined;
    return options ? options.map(resolve).find((o) => o && fits(o)) : node;
  };
  let node: Json | undefined = root;
  for (const key of path) {
    node = pick(node, (o) => (typeof key === 'number' ? o.type === 'array' : key in (o.properties ?? {})));
    node = typeof key === 'number' ? node?.items : node?.properties?.[key];
  }
  node = pick(node, (o) => o.maxLength !== undefined || o.maxItems !== undefined);
  const limit = node?.maxLength ?? node?.maxItems;
  expect(typeof limit, `a limit at ${path.join('.')}`).toBe('number');
  return limit as number;
}

/** True when the operation's body schema accepts the body. */
function parses(op: { request: { body?: Schema } }, body: unknown): boolean {
  return (op.request.body as Schema).safeParse(body).success;
}

/** `n` UTF-16 units of the character with the most UTF-8 bytes per unit (3). */
const wide = (n: number) => '€'.repeat(n);
/** A string of `n` UTF-16 units, the widest characters after a two-digit prefix unique by `i`. */
const wideId = (n: number, i: number) => `${String(i).padStart(2, '0')}${wide(n - 2)}`;
/** An ASCII name matching `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$` of `n` characters, unique by `i`. */
const name = (n: number, i = 0) => `${i}`.padEnd(n, 'n');
const WS = '00000000-0000-4000-8000-000000000001';
const crsList = Array.from(
  { length: 64 },
  (_, i) => `http://www.opengis.net/def/crs/EPSG/0/${String(i).padStart(3, '0')}${'1'.repeat(210)}`,
);

beforeEach(() => {
  sent.length = 0;
});

describe('the largest accepted body of every entity stays under its item budget', () => {
  it('a layer: 64 KiB of SQL, 1664 discovered columns and every other field at its maximum', async () => {
    // Prepare
    const sql = `SELECT * FROM t /*${'x'.repeat(MAX_SQL_BYTES - 20)}*/`;
    const max = (...path: (string | number)[]) => limitOf(layerOps.createLayer, ...path);
    const dimension = (...field: string[]) => max('dimensions', 0, ...field);
    const body = {
      public_id: name(64),
      title: wide(max('title')),
      description: wide(max('description')),
      crs_default: 999999,
      enabled: true,
      public: true,
      allowed_roles: Array.from({ length: max('allowed_roles') }, (_, i) =>
        wideId(max('allowed_roles', 0), i),
      ),
      dimensions: Array.from({ length: max('dimensions') }, (_, i) => ({
        name: wideId(dimension('name'), i),
        units: wide(dimension('units')),
        extent: wide(dimension('extent')),
        default: wide(dimension('default')),
        source_property: wide(dimension('source_property')),
        end_property: wide(dimension('end_property')),
        multiple_values: true,
        nearest_value: true,
        current: true,
      })),
      default_style: wideId(max('default_style'), 99),
      styles: Array.from({ length: max('styles') }, (_, i) => wideId(max('styles', 0), i)),
      sql_view: { sql, geometry_column: 'g'.repeat(63), id_column: 'i'.repeat(63), srid: 999999 },
    };
    // PostgreSQL's ceilings: 1664 result columns, names of at most 63 bytes.
    const columns = Array.from({ length: 1664 }, (_, i) => ({
      name: `${i}`.padEnd(63, 'c'),
      type: 'integer',
    }));
    columns[0] = { name: 'i'.repeat(63), type: 'integer' };
    const gateway = {
      guardSql: async () => ({ ok: true }),
      describeSql: async () => ({
        valid: true,
        discovered: {
          columns,
          geometry_column: 'g'.repeat(63),
          geometry_type: 'GEOMETRYCOLLECTION',
          srid: 999999,
          suggested_id_column: 'i'.repeat(63),
        },
      }),
      checkIdColumn: async () => true,
    } as unknown as DataSourceGateway;
    const service = {
      id: '00000000-0000-4000-8000-000000000002',
      workspace_id: WS,
      name: 'svc',
      type: 'postgis',
      enabled: true,
      connection: { host: 'h', port: 5432, database: 'd', user: 'u' },
    } as unknown as Service;
    // Act
    await createLayer(
      { layers: new DynamoLayerRepository(), gateway, secrets: new AesGcmSecretBox(randomBytes(32)) },
      { service, body: accepted<LayerInput>(layerOps.createLayer, body) },
    );
    // Assess
    expect(largestPut()).toBeLessThan(BUDGET);
  });

  it('refuses SQL of more than 64 KiB of UTF-8 in a layer and in validate-sql, counting bytes', () => {
    const body = (sql: string) => ({ sql_view: { sql, geometry_column: 'g' } });
    expect(parses(layerOps.createLayer, body('x'.repeat(MAX_SQL_BYTES)))).toBe(true);
    expect(parses(layerOps.createLayer, body('x'.repeat(MAX_SQL_BYTES + 1)))).toBe(false);
    // 21,846 characters are 65,538 bytes.
    expect(parses(layerOps.updateLayer, body(wide(21846)))).toBe(false);
    expect(parses(serviceOps.validateSQLView, { sql: wide(21846) })).toBe(false);
    expect(parses(serviceOps.validateSQLView, { sql: wide(21845) })).toBe(true);
    expect(MAX_SQL_BYTES).toBe(65536);
  });

  it.each([
    ['an SLD', 'sld_1.0.0' as const],
    ['a Mapbox style', 'mapbox' as const],
  ])('%s of the largest accepted size with the longest title and description', async (_, format) => {
    // Prepare: the request body itself is capped at MAX_STYLE_BODY_BYTES.
    const text =
      format === 'mapbox'
        ? JSON.stringify({ version: 8, sources: {}, layers: [], metadata: { pad: wide(82_500) } })
        : `<StyledLayerDescriptor version="1.0.0"><!--${wide(82_500)}--></StyledLayerDescriptor>`;
    const input = accepted<StyleInput>(styleOps.createStyle, {
      name: name(64),
      format,
      body: format === 'mapbox' ? JSON.parse(text) : text,
      title: wide(256),
      description: wide(4096),
    });
    // Act
    await createStyle({ styles: new DynamoStyleRepository() }, { workspaceId: WS, body: input });
    // Assess
    expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_STYLE_TEXT_BYTES - 20_000);
    expect(largestPut()).toBeLessThan(BUDGET);
  });

  it('refuses a Mapbox style whose stored JSON outgrows the limit (numbers written out in full)', async () => {
    // Prepare: a request within the byte limit; `1e20` is stored as 21 digits.
    const text = `{"name":"inflated","format":"mapbox","body":{"version":8,"sources":{},"layers":[],"metadata":{"a":[${Array.from({ length: 50_000 }, () => '1e20').join(',')}]}}}`;
    const input = accepted<StyleInput>(styleOps.createStyle, JSON.parse(text), text);
    // Act
    const error = await createStyle(
      { styles: new DynamoStyleRepository() },
      { workspaceId: WS, body: input },
    ).catch((e) => e);
    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.reason).toBe('style_too_large');
    expect(putItems()).toEqual([]);
  });

  it('a tile matrix set at the definition limit, filled with characters JSON escapes to 6 bytes', async () => {
    // Prepare
    const matrix = (i: number, description: string) => ({
      id: String(i),
      title: '\u0001'.repeat(256),
      description,
      scaleDenominator: 1e-300,
      cellSize: 1e-300,
      pointOfOrigin: [-1.7976931348623157e308, 1.7976931348623157e308],
      tileWidth: 2 ** 31 - 1,
      tileHeight: 2 ** 31 - 1,
      matrixWidth: 2 ** 31 - 1,
      matrixHeight: 2 ** 31 - 1,
    });
    const definition = (descriptionUnits: number) => ({
      id: 'Largest',
      title: '\u0001'.repeat(256),
      description: '\u0001'.repeat(4096),
      keywords: Array.from({ length: 32 }, () => '\u0001'.repeat(128)),
      crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
      tileMatrices: Array.from({ length: 64 }, (_, i) => matrix(i, '\u0001'.repeat(descriptionUnits))),
    });
    // The largest description per matrix that keeps the canonical JSON within the limit.
    let units = 0;
    while (Buffer.byteLength(JSON.stringify(definition(units + 8))) <= MAX_DEFINITION_BYTES) units += 8;
    // Act
    await putTileMatrixSet(
      { tileMatrixSets: new DynamoTileMatrixSetRepository() },
      {
        tileMatrixSet: 'Largest',
        body: accepted<TileMatrixSetDefinition>(tmsOps.putTileMatrixSet, definition(units)),
        ifMatch: undefined,
      },
    );
    // Assess
    expect(largestPut()).toBeLessThan(BUDGET);
    expect(tmsOps.putTileMatrixSet.maxBodyBytes).toBe(MAX_DEFINITION_BYTES);
  });

  it('refuses a tile matrix set whose canonical JSON outgrows the limit, before storing anything', async () => {
    // Prepare: a request within the byte limit whose numbers are written out in full when stored.
    const matrix = (i: number) =>
      `{"id":"${i}","description":"${'d'.repeat(3840)}","scaleDenominator":1e20,"cellSize":1e20,"pointOfOrigin":[1e20,1e20],"tileWidth":2e9,"tileHeight":2e9,"matrixWidth":2e9,"matrixHeight":2e9}`;
    const text = `{"id":"TooLarge","crs":"http://www.opengis.net/def/crs/EPSG/0/3857","keywords":[${Array.from({ length: 32 }, () => `"${'k'.repeat(128)}"`).join(',')}],"tileMatrices":[${Array.from({ length: 64 }, (_, i) => matrix(i)).join(',')}]}`;
    const definition = accepted<TileMatrixSetDefinition>(tmsOps.putTileMatrixSet, JSON.parse(text), text);
    // Act
    const error = await putTileMatrixSet(
      { tileMatrixSets: new DynamoTileMatrixSetRepository() },
      { tileMatrixSet: 'TooLarge', body: definition, ifMatch: undefined },
    ).catch((e) => e);
    // Assess
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.reason).toBe('definition_too_large');
    expect(putItems()).toEqual([]);
  });

  it('a layer group with 40 members of the longest names', async () => {
    const max = (...path: (string | number)[]) => limitOf(groupOps.createLayerGroup, ...path);
    const body = {
      public_id: name(64),
      title: wide(max('title')),
      members: Array.from({ length: max('members') }, (_, i) => ({
        resource: `${i}`.padEnd(64, 'r'),
        style: wide(max('members', 0, 'style')),
        opacity: 0.123456789,
      })),
    };
    await createLayerGroup(
      { groups: new DynamoLayerGroupRepository() },
      { workspaceId: WS, body: accepted(groupOps.createLayerGroup, body) },
    );
    expect(largestPut()).toBeLessThan(BUDGET);
  });

  it('a PostGIS service with the longest connection and password', async () => {
    const max = (...path: (string | number)[]) => limitOf(serviceOps.createService, 'connection', ...path);
    const body = {
      name: name(64),
      type: 'postgis',
      enabled: false,
      connection: {
        host: wide(max('host')),
        port: 65535,
        database: wide(max('database')),
        user: wide(max('user')),
        password: wide(max('password')),
        sslmode: 'verify-full',
        schemas: Array.from({ length: max('schemas') }, () => wide(max('schemas', 0))),
      },
    };
    // A disabled service is stored without connecting; whatever the gateway is asked, it agrees.
    const gateway = new Proxy({}, { get: () => async () => ({ ok: true }) }) as Parameters<
      typeof createService
    >[0]['gateway'];
    await createService(
      {
        services: new DynamoServiceRepository(),
        gateway,
        secrets: new AesGcmSecretBox(randomBytes(32)),
      },
      { workspaceId: WS, body: accepted(serviceOps.createService, body) },
    );
    expect(largestPut()).toBeLessThan(BUDGET);
  });

  it.each([
    [
      'wms',
      settingsOps.updateWMSSettings,
      {
        enabled: true,
        public: true,
        title: wide(256),
        abstract: wide(4096),
        default_style: wide(128),
        max_width: 4096,
        extensions: ['dynamic-raster', 'advanced-labels', 'compositing'],
      },
    ],
    ['ogcapi', settingsOps.updateOGCAPISettings, { enabled: true, title: wide(256), abstract: wide(4096) }],
    [
      'ogc-tiles',
      settingsOps.updateOGCTilesAPISettings,
      {
        enabled: true,
        title: wide(256),
        abstract: wide(4096),
        settings: {
          tile_matrix_sets: Array.from({ length: 16 }, (_, i) => name(64, i)),
          vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
          map_tiles: { enabled: true, formats: ['image/png', 'image/jpeg', 'image/webp'] },
          cache_enabled: true,
        },
      },
    ],
    [
      'wcs',
      settingsOps.updateWCSSettings,
      {
        enabled: true,
        title: wide(256),
        abstract: wide(4096),
        extensions: ['xml-post', 'range-subsetting', 'scaling', 'crs', 'interpolation', 'multidimensional'],
        output_formats: [
          'image/tiff',
          'application/gml+xml',
          'multipart/related',
          'application/netcdf',
          'image/jp2',
        ],
        interpolation_methods: ['nearest-neighbor', 'linear'],
        // 64 CRS URIs of 251 characters each, in both lists.
        allowed_subsetting_crs: crsList,
        allowed_output_crs: crsList,
      },
    ],
    [
      'wmts',
      settingsOps.updateWMTSSettings,
      {
        enabled: true,
        title: wide(256),
        abstract: wide(4096),
        provider_name: wide(256),
        provider_site: `https://gis.example.org/${'p'.repeat(2000)}`,
        contact_name: wide(256),
        contact_position: wide(256),
        contact_email: `${'m'.repeat(64)}@${'d'.repeat(60)}.${'e'.repeat(60)}.example.org`,
      },
    ],
  ] as const)('the %s settings document with every text at its maximum', async (kind, op, body) => {
    await updateSettings(
      { settings: new DynamoSettingsRepository() },
      { workspaceId: WS, kind: kind as SettingsKind, body: accepted(op, body), ifMatch: undefined },
    );
    expect(largestPut()).toBeLessThan(BUDGET);
  });

  it('a workspace, an API key, a role and a claim mapping with every text at its maximum', async () => {
    await createWorkspace(
      { workspaces: new DynamoWorkspaceRepository() },
      { body: accepted(workspaceOps.createWorkspace, { name: name(64), description: wide(1024) }) },
    );
    await createApiKey(
      { keys: new DynamoApiKeyRepository() },
      {
        workspaceId: WS,
        body: accepted(apiKeyOps.createAPIKey, {
          name: wide(128),
          role_id: 'admin',
          owner_email: `${'a'.repeat(64)}@${'b'.repeat(180)}.example`,
          owner_name: wide(256),
        }),
      },
    );
    await createRole(
      { roles: new DynamoRoleRepository() },
      {
        body: accepted(roleOps.createRole, {
          id: `r${'x'.repeat(63)}`,
          name: wide(128),
          description: wide(1024),
        }),
      },
    );
    await createClaimMapping(
      { mappings: new DynamoClaimMappingRepository(), roles: new DynamoRoleRepository() },
      {
        scope: WS,
        body: accepted(claimMappingOps.createClaimMapping, {
          claim_name: wide(256),
          claim_value: wide(1024),
          role_id: 'viewer',
          priority: 1000000,
        }),
      },
    );
    expect(putItems().length).toBeGreaterThanOrEqual(4);
    expect(largestPut()).toBeLessThan(16 * 1024);
  });

  it('refuses an owner_email longer than 254 characters', () => {
    const body = {
      name: 'k',
      role_id: 'viewer',
      owner_email: `${'a'.repeat(64)}@${'b'.repeat(250)}.example`,
    };
    expect(parses(apiKeyOps.createAPIKey, body)).toBe(false);
  });

  it('measures items the way DynamoDB does (the budget is below the real limit)', () => {
    expect(itemSize({ PK: 'ab', n: 1, l: ['é'], m: { k: true } })).toBe(
      2 + 2 + 1 + 21 + 1 + 3 + 1 + 2 + 1 + 3 + 1 + 1 + 1,
    );
    expect(BUDGET).toBeLessThan(ITEM_LIMIT);
  });
});
