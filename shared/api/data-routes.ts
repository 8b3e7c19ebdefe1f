/**
 * THE data plane's route table (DESIGN §8a, issue #24): one OGC API per workspace under
 * `/workspaces/{workspace}/ogc`. Like the management table it drives the local host, CDK (one
 * function serves every entry; one API Gateway method per entry) and an OpenAPI document — the
 * data API's own, served at `…/ogc/api`. Each entry names the protocol operations it is authorised
 * as (ADR 0120's mapping); the access decision itself is `shared/domain/data-access.ts`.
 */
import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import type { DataOperation } from '#domain/data-access.ts';
import { MVT } from '#domain/settings.ts';
import type { DataAction, Operation, ResponseSpec } from './operation.ts';
import { IdOrName } from './schemas.ts';

/** Where every data-plane path starts: the workspace's OGC API. */
export const DATA_PLANE_ROOT = '/workspaces/{workspace}/ogc';

/** Is this API Gateway resource (a path template, or a request path) one of the data plane's? */
export function isDataPlaneResource(resource: string | null | undefined): boolean {
  return typeof resource === 'string' && /^\/workspaces\/[^/]+\/ogc(\/|$)/.test(resource);
}

/** The one Lambda entry point of the data plane. */
export const DATA_PLANE_HANDLER = 'functions/ogc/data-plane.ts';

/** The protocol(s) and operation a route is authorised as (ADR 0120). */
export type DataRouteAccess =
  | { protocols: readonly ['ogcapi', 'ogc-tiles']; operation: 'GET' | 'LISTCOLLECTIONS' }
  | { protocols: readonly ['ogcapi']; operation: DataOperation<'ogcapi'> }
  | { protocols: readonly ['ogc-tiles']; operation: DataOperation<'ogc-tiles'> };

/** One entry of the data plane's route table: an Operation the local host and CDK route like any other. */
export interface DataRoute extends Operation {
  method: 'GET';
  permission: 'data';
  handler: typeof DATA_PLANE_HANDLER;
  access: DataRouteAccess;
}

/** Path segments: a collection id (a layer's public_id), a tile matrix set id, a style name, a feature id. */
const Segment = /* @__PURE__ */ shakable(() => z.string().check(z.minLength(1), z.maxLength(256)));
const TileIndex = /* @__PURE__ */ shakable(() => z.string().check(z.minLength(1), z.maxLength(32)));

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const CollectionParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, collectionId: Segment }),
);
const ItemParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, collectionId: Segment, featureId: Segment }),
);
const TmsParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, tileMatrixSetId: Segment }),
);
const CollectionTmsParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    workspace: IdOrName,
    collectionId: Segment,
    tileMatrixSetId: Segment,
  }),
);
const TileParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    workspace: IdOrName,
    tileMatrixSetId: Segment,
    tileMatrix: TileIndex,
    tileRow: TileIndex,
    tileCol: TileIndex,
  }),
);
const CollectionTileParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    workspace: IdOrName,
    collectionId: Segment,
    tileMatrixSetId: Segment,
    tileMatrix: TileIndex,
    tileRow: TileIndex,
    tileCol: TileIndex,
  }),
);
const StyleParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName, styleId: Segment }));

/**
 * What every data route does to the table: reads the workspace, settings, layers, services, styles,
 * sets and the caches' clear counters; updates one item, its workspace's tile cache usage, when
 * it stores a tile (ADR 0139). One function serves every entry, so every entry says so.
 */
const catalogReads: readonly DataAction[] = ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem'];

const json: ResponseSpec = { description: 'the document', mediaTypes: ['application/json'] };
const mvtTile: ResponseSpec = { description: 'the tile', mediaTypes: [MVT] };
const geojson = (description: string): ResponseSpec => ({
  description,
  mediaTypes: ['application/geo+json'],
});
const common = {
  400: { description: 'a parameter is malformed (OGC exception body)' },
  401: { description: 'a credential is required (WWW-Authenticate)' },
  404: { description: 'no such resource, or not served to this caller (OGC exception body)' },
};

interface RouteInput {
  operationId: string;
  path: string;
  summary: string;
  description?: string;
  access: DataRouteAccess;
  params: z.ZodMiniType;
  ok: ResponseSpec;
}

function dataRoute(input: RouteInput): DataRoute {
  return {
    operationId: input.operationId,
    method: 'GET',
    path: `${DATA_PLANE_ROOT}${input.path}`,
    handler: DATA_PLANE_HANDLER,
    permission: 'data',
    summary: input.summary,
    ...(input.description ? { description: input.description } : {}),
    tags: ['data'],
    request: { params: input.params },
    responses: { 200: input.ok, ...common },
    data: catalogReads,
    access: input.access,
    // One function serves every data route (ADR 0123), and it opens PostgreSQL connections with
    // decrypted service passwords: every entry says so, as every entry runs in that function.
    secrets: ['decrypt'],
    postgres: true,
  } as DataRoute;
}

const both = ['ogcapi', 'ogc-tiles'] as const;
const features = ['ogcapi'] as const;
const tiles = ['ogc-tiles'] as const;

export const getDataLanding = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataLanding',
    path: '',
    summary: "The landing page of the workspace's OGC API",
    access: { protocols: both, operation: 'GET' },
    params: WorkspaceParams,
    ok: json,
  }),
);

export const getDataConformance = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataConformance',
    path: '/conformance',
    summary: 'The conformance classes this API implements',
    access: { protocols: both, operation: 'GET' },
    params: WorkspaceParams,
    ok: json,
  }),
);

export const getDataApi = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataApi',
    path: '/api',
    summary: "This OGC API's definition (OpenAPI 3.0)",
    access: { protocols: both, operation: 'GET' },
    params: WorkspaceParams,
    ok: { description: 'the OpenAPI document', mediaTypes: ['application/vnd.oai.openapi+json;version=3.0'] },
  }),
);

export const listDataCollections = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'listDataCollections',
    path: '/collections',
    summary: 'The collections (enabled layers) the caller may read',
    access: { protocols: both, operation: 'LISTCOLLECTIONS' },
    params: WorkspaceParams,
    ok: json,
  }),
);

export const getDataCollection = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataCollection',
    path: '/collections/{collectionId}',
    summary: 'One collection: extent, CRSs, links to its items and tiles',
    access: { protocols: features, operation: 'GET' },
    params: CollectionParams,
    ok: json,
  }),
);

export const getDataQueryables = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataQueryables',
    path: '/collections/{collectionId}/queryables',
    summary: "The collection's queryable properties (JSON Schema)",
    access: { protocols: features, operation: 'GET' },
    params: CollectionParams,
    ok: { description: 'the queryables', mediaTypes: ['application/schema+json'] },
  }),
);

export const getDataItems = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataItems',
    path: '/collections/{collectionId}/items',
    summary: "A page of the collection's features",
    description:
      'Parameters: limit, bbox, bbox-crs, crs, datetime (layers with a time dimension), a queryable property by equality, next (the cursor of `next` links).',
    access: { protocols: features, operation: 'GETFEATURES' },
    params: CollectionParams,
    ok: geojson('a FeatureCollection'),
  }),
);

export const getDataItem = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataItem',
    path: '/collections/{collectionId}/items/{featureId}',
    summary: 'One feature',
    access: { protocols: features, operation: 'GETITEM' },
    params: ItemParams,
    ok: geojson('a Feature'),
  }),
);

export const listDataTileMatrixSets = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'listDataTileMatrixSets',
    path: '/tileMatrixSets',
    summary: 'The tile matrix sets this API tiles with',
    access: { protocols: tiles, operation: 'GET' },
    params: WorkspaceParams,
    ok: json,
  }),
);

export const getDataTileMatrixSet = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataTileMatrixSet',
    path: '/tileMatrixSets/{tileMatrixSetId}',
    summary: 'One tile matrix set (OGC 17-083r4)',
    access: { protocols: tiles, operation: 'GET' },
    params: TmsParams,
    ok: json,
  }),
);

export const listDataTilesets = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'listDataTilesets',
    path: '/tiles',
    summary: 'The tilesets of every readable collection together (one MVT layer per collection)',
    access: { protocols: tiles, operation: 'GET' },
    params: WorkspaceParams,
    ok: json,
  }),
);

export const getDataTileset = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataTileset',
    path: '/tiles/{tileMatrixSetId}',
    summary: 'The tileset of every readable collection together (f=tilejson for TileJSON 3.0)',
    access: { protocols: tiles, operation: 'GET' },
    params: TmsParams,
    ok: json,
  }),
);

export const getDataTile = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataTile',
    path: '/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}',
    summary: 'A vector tile of every readable collection (one MVT layer each)',
    access: { protocols: tiles, operation: 'GETTILE' },
    params: TileParams,
    ok: mvtTile,
  }),
);

export const listCollectionTilesets = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'listCollectionTilesets',
    path: '/collections/{collectionId}/tiles',
    summary: "The collection's vector tilesets",
    access: { protocols: tiles, operation: 'GET' },
    params: CollectionParams,
    ok: json,
  }),
);

export const getCollectionTileset = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getCollectionTileset',
    path: '/collections/{collectionId}/tiles/{tileMatrixSetId}',
    summary: "The collection's tileset in one tile matrix set (f=tilejson for TileJSON 3.0)",
    access: { protocols: tiles, operation: 'GET' },
    params: CollectionTmsParams,
    ok: json,
  }),
);

export const getCollectionTile = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getCollectionTile',
    path: '/collections/{collectionId}/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}',
    summary: 'A vector tile of the collection',
    access: { protocols: tiles, operation: 'GETTILE' },
    params: CollectionTileParams,
    ok: mvtTile,
  }),
);

export const listDataStyles = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'listDataStyles',
    path: '/styles',
    summary: "The workspace's Mapbox GL styles",
    access: { protocols: tiles, operation: 'GET' },
    params: WorkspaceParams,
    ok: json,
  }),
);

export const getDataStyle = /* @__PURE__ */ shakable(() =>
  dataRoute({
    operationId: 'getDataStyle',
    path: '/styles/{styleId}',
    summary: 'A Mapbox GL style whose sources are this API’s TileJSON (f=mapbox)',
    access: { protocols: tiles, operation: 'GET' },
    params: StyleParams,
    ok: json,
  }),
);

/** THE data plane's route table. */
export const dataRoutes: readonly DataRoute[] = [
  getDataLanding,
  getDataConformance,
  getDataApi,
  listDataCollections,
  getDataCollection,
  getDataQueryables,
  getDataItems,
  getDataItem,
  listDataTileMatrixSets,
  getDataTileMatrixSet,
  listDataTilesets,
  getDataTileset,
  getDataTile,
  listCollectionTilesets,
  getCollectionTileset,
  getCollectionTile,
  listDataStyles,
  getDataStyle,
];
