import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName } from '../schemas.ts';
import {
  OGCAPISettingsSchema,
  OGCTilesSettingsSchema,
  WCSSettingsSchema,
  WFSSettingsSchema,
  WMSSettingsSchema,
  WMTSSettingsSchema,
} from '../settings-schemas.ts';

const Etag = { ETag: 'the document version ("0" while the defaults apply)' };
const Params = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const notFound = { description: 'workspace not found' };
const mismatch = { description: 'If-Match does not match the current version' };

/** The summary, and a description that adds the note to it. */
function described(summary: string, note: string | undefined) {
  return note ? { summary, description: `${summary.replace(/\.$/, '')}. ${note}` } : { summary };
}

function pair<S extends z.ZodMiniType>(
  names: {
    get: string;
    update: string;
    path: string;
    file: string;
    what: string;
    /** The operations' description: a protocol whose settings nothing serves yet says so (ADR 0133). */
    note?: string;
  },
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
    ...described(`Read the ${names.what} settings of a workspace (defaults until first saved)`, names.note),
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
    ...described(
      `Replace the ${names.what} settings of a workspace (the whole document). Honours If-Match.`,
      names.note,
    ),
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

const wms = /* @__PURE__ */ shakable(() =>
  pair(
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
  ),
);
export const getWMSSettings = /* @__PURE__ */ shakable(() => wms[0]);
export const updateWMSSettings = /* @__PURE__ */ shakable(() => wms[1]);

const ogcApi = /* @__PURE__ */ shakable(() =>
  pair(
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
  ),
);
export const getOGCAPISettings = /* @__PURE__ */ shakable(() => ogcApi[0]);
export const updateOGCAPISettings = /* @__PURE__ */ shakable(() => ogcApi[1]);

const ogcTiles = /* @__PURE__ */ shakable(() =>
  pair(
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
  ),
);
export const getOGCTilesAPISettings = /* @__PURE__ */ shakable(() => ogcTiles[0]);
export const updateOGCTilesAPISettings = /* @__PURE__ */ shakable(() => ogcTiles[1]);

/** What the WFS, WCS and WMTS operations say: nothing serves these protocols yet (ADR 0133). */
const notServed = (what: string) =>
  `GeoPlane's data plane does not serve ${what} yet: these settings are stored, validated and returned, and change no response until it does (ADR 0133).`;

const wfs = /* @__PURE__ */ shakable(() =>
  pair(
    {
      get: 'getWFSSettings',
      update: 'updateWFSSettings',
      path: 'wfs',
      file: 'wfs',
      what: 'WFS',
      note: notServed('WFS'),
    },
    WFSSettingsSchema,
    'bad request: a limit above the server ceiling, or default_count above max_features',
    {
      enabled: true,
      public: false,
      title: 'Roads WFS',
      abstract: 'Road network of the demo region',
      max_features: 5000,
      default_count: 100,
      max_offset: 100000,
      count_timeout_ms: 2000,
    },
  ),
);
export const getWFSSettings = /* @__PURE__ */ shakable(() => wfs[0]);
export const updateWFSSettings = /* @__PURE__ */ shakable(() => wfs[1]);

const wcs = /* @__PURE__ */ shakable(() =>
  pair(
    {
      get: 'getWCSSettings',
      update: 'updateWCSSettings',
      path: 'wcs',
      file: 'wcs',
      what: 'WCS',
      note: notServed('WCS'),
    },
    WCSSettingsSchema,
    'bad request: a limit above the server ceiling, an unknown or repeated extension, format, interpolation method or CRS',
    {
      enabled: true,
      public: false,
      title: 'Elevation WCS',
      max_cells: 4194304,
      max_output_bytes: 8388608,
      processing_timeout_ms: 10000,
      extensions: ['range-subsetting', 'scaling', 'crs'],
      output_formats: ['image/tiff'],
      interpolation_methods: ['nearest-neighbor'],
      allowed_output_crs: ['http://www.opengis.net/def/crs/EPSG/0/4326', 'EPSG:3857'],
    },
  ),
);
export const getWCSSettings = /* @__PURE__ */ shakable(() => wcs[0]);
export const updateWCSSettings = /* @__PURE__ */ shakable(() => wcs[1]);

const wmts = /* @__PURE__ */ shakable(() =>
  pair(
    {
      get: 'getWMTSSettings',
      update: 'updateWMTSSettings',
      path: 'wmts',
      file: 'wmts',
      what: 'WMTS',
      note: `${notServed('WMTS')} Its tile matrix sets and tile formats would be the OGC API Tiles settings' (listWorkspaceTileMatrixSets).`,
    },
    WMTSSettingsSchema,
    'bad request: a provider_site that is not an absolute http(s) URL, a contact_email that is not an address, an empty or too long text',
    {
      enabled: true,
      public: true,
      title: 'Roads WMTS',
      feature_info_enabled: true,
      vector_tiles_enabled: false,
      provider_name: 'Demo Region GIS',
      provider_site: 'https://gis.example.org/',
      contact_name: 'GIS desk',
      contact_position: 'Operator',
      contact_email: 'gis@example.org',
    },
  ),
);
export const getWMTSSettings = /* @__PURE__ */ shakable(() => wmts[0]);
export const updateWMTSSettings = /* @__PURE__ */ shakable(() => wmts[1]);
