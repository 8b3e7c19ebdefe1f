import * as z from 'zod/mini';
import { defineOperation } from '../operation.ts';
import { IdOrName } from '../schemas.ts';
import { OGCAPISettingsSchema, OGCTilesSettingsSchema, WMSSettingsSchema } from '../settings-schemas.ts';

const Etag = { ETag: 'the document version ("0" while the defaults apply)' };
const Params = z.strictObject({ workspace: IdOrName });
const notFound = { description: 'workspace not found' };
const mismatch = { description: 'If-Match does not match the current version' };

function pair<S extends z.ZodMiniType>(
  names: { get: string; update: string; path: string; file: string; what: string },
  schema: S,
  badRequest: string,
  example: z.output<S>,
) {
  const get = defineOperation({
    operationId: names.get,
    method: 'GET',
    path: `/api/v1/workspaces/{workspace}/settings/${names.path}`,
    handler: `functions/settings/get-${names.file}-settings.ts`,
    permission: 'read',
    summary: `Read the ${names.what} settings of a workspace (defaults until first saved)`,
    tags: ['settings'],
    request: { params: Params },
    responses: { 200: { description: `${names.what} settings`, schema, headers: Etag }, 404: notFound },
    examples: { params: { workspace: 'roads-demo' }, response: example },
    data: ['GetItem'],
  });
  const update = defineOperation({
    operationId: names.update,
    method: 'PUT',
    path: `/api/v1/workspaces/{workspace}/settings/${names.path}`,
    handler: `functions/settings/update-${names.file}-settings.ts`,
    permission: 'manage',
    summary: `Replace the ${names.what} settings of a workspace (the whole document). Honours If-Match.`,
    tags: ['settings'],
    request: { params: Params, body: schema },
    responses: {
      200: { description: `updated ${names.what} settings`, schema, headers: Etag },
      400: { description: badRequest },
      404: notFound,
      409: { description: 'concurrent writers kept conflicting after retries; send it again' },
      412: mismatch,
    },
    examples: { params: { workspace: 'roads-demo' }, request: example, response: example },
    data:
      names.path === 'ogc-tiles'
        ? ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem']
        : ['GetItem', 'PutItem', 'ConditionCheckItem'],
  });
  return [get, update] as const;
}

export const [getWMSSettings, updateWMSSettings] = pair(
  { get: 'getWMSSettings', update: 'updateWMSSettings', path: 'wms', file: 'wms', what: 'WMS' },
  WMSSettingsSchema,
  'bad request: a limit above the server ceiling, an unknown or repeated extension',
  {
    enabled: true,
    public: false,
    title: 'Roads WMS',
    abstract: 'Road network of the demo region',
    default_style: 'roads-line',
    max_width: 4096,
    max_height: 4096,
    simplify_enabled: true,
    simplify_pixel_tolerance: 0.5,
    extensions: ['dynamic-style'],
  },
);

export const [getOGCAPISettings, updateOGCAPISettings] = pair(
  {
    get: 'getOGCAPISettings',
    update: 'updateOGCAPISettings',
    path: 'ogcapi',
    file: 'ogcapi',
    what: 'OGC API Features',
  },
  OGCAPISettingsSchema,
  'bad request: a limit above the server ceiling, or limit_default above limit_max',
  { enabled: true, public: true, title: 'Roads features', limit_default: 100, limit_max: 1000 },
);

export const [getOGCTilesAPISettings, updateOGCTilesAPISettings] = pair(
  {
    get: 'getOGCTilesAPISettings',
    update: 'updateOGCTilesAPISettings',
    path: 'ogc-tiles',
    file: 'ogc-tiles-api',
    what: 'OGC API Tiles',
  },
  OGCTilesSettingsSchema,
  'bad request: an unknown tile matrix set, a repeated value, missing formats, or a limit above the server ceiling',
  {
    enabled: true,
    public: false,
    title: 'Roads tiles',
    versions: ['1.0.0'],
    settings: {
      tile_matrix_sets: ['WebMercatorQuad'],
      vector_tiles: { enabled: true, formats: ['application/vnd.mapbox-vector-tile'] },
      map_tiles: { enabled: true, formats: ['image/png'] },
      cache_enabled: true,
      max_features: 10000,
    },
  },
);
