/**
 * The data plane's use cases (DESIGN §8a, issue #24, ADR 0123): one OGC API per workspace, driven
 * by the catalog as it is stored at this request — no cache, so a catalog change is served on the
 * next request. Access is ADR 0120's matrix; the documents are built by `ogc-documents.ts`; the
 * data itself comes through the {@link LayerData} port (PostGIS, `shared/datasources`).
 */
import {
  type DataCaller,
  type DataProtocol,
  dataNotFound,
  decideDataAccess,
  decideServiceAccess,
  mostPermissive,
  type ProtocolOperation,
  type ProtocolSwitches,
  readableCollections,
  requireDataAccess,
} from './data-access.ts';
import { InvalidInputError, NotFoundError } from './errors.ts';
import type { QueryParams } from './feature-query.ts';
import type { Layer } from './layers.ts';
import {
  type CollectionShape,
  collectionDocument,
  conformanceDocument,
  type DataLinks,
  landingDocument,
  queryablesDocument,
  styleDocument,
  styleSummary,
  tileJson,
  tileMatrixSetsDocument,
  tilesetDocument,
  tilesetsDocument,
} from './ogc-documents.ts';
import type { Service } from './services.ts';
import { defaultSettings, type OGCAPISettings, type OGCTilesSettings } from './settings.ts';
import type { Style } from './styles.ts';
import {
  type CachedTile,
  canonicalTile,
  type TileCachePorts,
  tileFingerprint,
  tileKey,
} from './tile-cache.ts';
import {
  type TileMatrixSetRecord,
  type TileMatrixSetRepository,
  tileMatrixSetsNamed,
} from './tile-matrix-sets.ts';
import type { Workspace } from './workspaces.ts';

/** The tile matrix set the data plane renders vector tiles in (the others are listed, not tiled). */
export const RENDERED_TILE_MATRIX_SET = 'WebMercatorQuad';

/** The most layers one workspace's `/collections` reads (the rest are left out and logged). */
export const MAX_COLLECTIONS = 1_000;

/** A layer with the service it reads from. */
export interface ServedLayer {
  layer: Layer;
  service: Service;
}

/** One page of items as the port reads it. */
export interface ItemsAnswer {
  body: Record<string, unknown>;
  contentCrs: string;
}

/** A rendered vector tile (several collections' layers concatenated). */
export interface TileAnswer {
  bytes: Uint8Array;
  features: number;
  truncated: boolean;
}

/** The tile budget the workspace's Tiles settings set. */
export interface TileBudget {
  maxFeatures?: number;
  maxBytes?: number;
}

/** Port: a layer's data in its PostGIS (`shared/datasources/layer-data.ts`). */
export interface LayerData {
  shape(served: ServedLayer): Promise<CollectionShape>;
  items(
    served: ServedLayer,
    params: QueryParams,
    settings: OGCAPISettings,
    nextHref: (cursor: string) => string,
    selfHref: string,
  ): Promise<ItemsAnswer>;
  item(served: ServedLayer, featureId: string, crsParam: string | undefined): Promise<ItemsAnswer>;
  tile(
    layers: readonly ServedLayer[],
    address: { z: string; x: string; y: string },
    budget: TileBudget,
  ): Promise<TileAnswer>;
}

/** The protocol settings as stored (absent: the workspace still has the defaults). */
export interface StoredSettings {
  ogcapi?: OGCAPISettings;
  tiles?: OGCTilesSettings;
}

/** What a collection request reads: the settings, the layer behind the public id, its service. */
export interface CollectionRecords {
  settings: StoredSettings;
  layer?: Layer;
  service?: Service;
}

/** Port: the catalog reads of the data plane (strongly consistent, batched where the keys allow). */
export interface DataCatalog {
  /** Both protocol settings of a workspace (one round trip). */
  protocolSettings(workspaceId: string): Promise<StoredSettings>;
  /**
   * The settings and the layer with that public id and its service: two round trips, one when the
   * id still points where it did at this instance's last read of it.
   */
  collection(workspaceId: string, publicId: string): Promise<CollectionRecords>;
  /** Every layer of the workspace (enabled or not), at most `limit`. */
  layers(workspaceId: string, limit: number): Promise<Layer[]>;
  service(workspaceId: string, serviceId: string): Promise<Service | undefined>;
  styles: {
    find(workspaceId: string, name: string): Promise<Style | undefined>;
    all(workspaceId: string): Promise<Omit<Style, 'body'>[]>;
  };
  tileMatrixSets: Pick<TileMatrixSetRepository, 'find'>;
}

/** The ports of the data plane. */
export interface DataPlanePorts {
  catalog: DataCatalog;
  data: LayerData;
  /** The persistent tile cache (ADR 0139); absent, every tile is rendered. */
  tiles?: TileCachePorts;
}

/** One data-plane request, as the edge hands it over. */
export interface DataRequest {
  workspace: Workspace;
  caller: DataCaller;
  links: DataLinks;
  /** Query parameters, multi-valued. */
  query: Record<string, readonly string[]>;
}

/** What a use case answers: a JSON document or tile bytes, and how shared caches may keep it. */
export type DataAnswer =
  | { kind: 'json'; body: unknown; mediaType: string; headers?: Record<string, string>; cache: CacheClass }
  | {
      kind: 'bytes';
      body: Uint8Array;
      mediaType: string;
      headers?: Record<string, string>;
      cache: CacheClass;
    };

/** How an answer may be cached: its max-age for a public answer (the edge makes others `private`). */
export interface CacheClass {
  /** Seconds a client may keep a public answer. */
  maxAge: number;
}

interface Settings {
  ogcapi: OGCAPISettings;
  tiles: OGCTilesSettings;
  switches: Record<DataProtocol, ProtocolSwitches>;
}

/** The settings in force: the stored documents, else the defaults. */
function settingsFrom(stored: StoredSettings): Settings {
  const ogcapi = stored.ogcapi ?? structuredClone(defaultSettings.ogcapi);
  const tiles = stored.tiles ?? structuredClone(defaultSettings['ogc-tiles']);
  return { ogcapi, tiles, switches: { ogcapi, 'ogc-tiles': tiles } };
}

async function settingsOf(catalog: DataCatalog, workspaceId: string): Promise<Settings> {
  return settingsFrom(await catalog.protocolSettings(workspaceId));
}

/** Documents: short-lived (a catalog change shows within seconds even in a browser). */
const DOCUMENT_CACHE: CacheClass = { maxAge: 5 };
/** Items: as short as documents. */
const ITEMS_CACHE: CacheClass = { maxAge: 5 };
/** Tiles when the Tiles settings' `cache_enabled` is on; off, clients revalidate every time. */
const TILE_CACHE_SECONDS = 60;

function tileCache(tiles: OGCTilesSettings): CacheClass {
  return { maxAge: tiles.settings.cache_enabled ? TILE_CACHE_SECONDS : 0 };
}

function serviceGate(
  request: DataRequest,
  s: Settings,
  operation: 'GET' | 'LISTCOLLECTIONS' | 'GETTILE',
  only?: DataProtocol,
) {
  const protocols: DataProtocol[] = only ? [only] : ['ogcapi', 'ogc-tiles'];
  const decisions = protocols.map((protocol) =>
    decideServiceAccess({
      caller: request.caller,
      workspaceId: request.workspace.id,
      protocol,
      operation,
      settings: s.switches[protocol],
    } as ProtocolOperation & { caller: DataCaller; workspaceId: string; settings: ProtocolSwitches }),
  );
  const decision = mostPermissive(decisions);
  requireDataAccess(decision, only ?? 'ogcapi');
  return protocols.filter((_p, i) => decisions[i]?.outcome === 'allow');
}

/** The settings and the served layer behind a collection id the caller may read through `op`, or the refusal. */
async function readableCollection(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
  op: ProtocolOperation,
): Promise<{ s: Settings; served: ServedLayer }> {
  const records = await ports.catalog.collection(request.workspace.id, collectionId);
  const s = settingsFrom(records.settings);
  const { layer, service } = records;
  const decision = decideDataAccess({
    ...op,
    caller: request.caller,
    workspaceId: request.workspace.id,
    layer,
    settings: s.switches[op.protocol],
  });
  requireDataAccess(decision, op.protocol, collectionId);
  if (!layer || !service || !serves(service)) throw dataNotFound(op.protocol, collectionId);
  return { s, served: { layer, service } };
}

/**
 * A service whose layers are served: active (one being deleted is not: its deletion is under way)
 * and enabled (a disabled service takes its layers off the data plane, as it refuses new ones).
 */
export function serves(service: Service | undefined): service is Service {
  return service?.status === 'active' && service.enabled && service.type === 'postgis';
}

/** The layers whose service serves them, each with it; one catalog read per distinct service. */
async function servedLayers(
  ports: DataPlanePorts,
  workspaceId: string,
  layers: Layer[],
): Promise<ServedLayer[]> {
  const ids = [...new Set(layers.map((l) => l.service_id))];
  const found = await Promise.all(ids.map((id) => ports.catalog.service(workspaceId, id)));
  const services = new Map(ids.map((id, i) => [id, found[i]]));
  return layers.flatMap((layer) => {
    const service = services.get(layer.service_id);
    return serves(service) ? [{ layer, service }] : [];
  });
}

/** The tile matrix sets the workspace's Tiles settings enable, built-ins and the catalog's custom ones. */
async function enabledTileMatrixSets(
  ports: DataPlanePorts,
  tiles: OGCTilesSettings,
): Promise<TileMatrixSetRecord[]> {
  return tileMatrixSetsNamed(ports.catalog.tileMatrixSets, tiles.settings.tile_matrix_sets);
}

/** The tile matrix sets tiles are rendered in: the enabled ones this server can render. */
function renderedSets(sets: readonly TileMatrixSetRecord[], tiles: OGCTilesSettings): TileMatrixSetRecord[] {
  if (!tiles.settings.vector_tiles.enabled) return [];
  return sets.filter((s) => s.id === RENDERED_TILE_MATRIX_SET);
}

function json(body: unknown, cache: CacheClass, mediaType = 'application/json'): DataAnswer {
  return { kind: 'json', body, mediaType, cache };
}

/** The landing page. */
export async function dataLanding(ports: DataPlanePorts, request: DataRequest): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET');
  return json(landingDocument(request.workspace, s.ogcapi, s.tiles, request.links), DOCUMENT_CACHE);
}

/** The conformance classes, of the protocols the workspace serves. */
export async function dataConformance(ports: DataPlanePorts, request: DataRequest): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET');
  return json(conformanceDocument(s.ogcapi.enabled, s.tiles.enabled), DOCUMENT_CACHE);
}

/** `/api`: the API definition (generated from the data route table by the caller). */
export async function dataApi(
  ports: DataPlanePorts,
  request: DataRequest,
  document: unknown,
): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET');
  return json(document, DOCUMENT_CACHE, 'application/vnd.oai.openapi+json;version=3.0');
}

/** `/collections`: the enabled layers the caller may read. */
export async function dataCollections(ports: DataPlanePorts, request: DataRequest): Promise<DataAnswer> {
  const [s, layers] = await Promise.all([
    settingsOf(ports.catalog, request.workspace.id),
    ports.catalog.layers(request.workspace.id, MAX_COLLECTIONS),
  ]);
  const served = await servedLayers(
    ports,
    request.workspace.id,
    layers.filter((l) => l.enabled),
  );
  const result = readableCollections({
    caller: request.caller,
    workspaceId: request.workspace.id,
    layers: served.map((x) => x.layer).sort((a, b) => a.public_id.localeCompare(b.public_id)),
    settings: s.switches,
  });
  if (result.outcome !== 'allow') {
    requireDataAccess(result, 'ogcapi');
    throw new Error('unreachable');
  }
  const tiled = renderedSets(await enabledTileMatrixSets(ports, s.tiles), s.tiles);
  const collections = result.collections.map((c) =>
    collectionDocument(c.layer, undefined, request.links, {
      features: c.protocols.includes('ogcapi'),
      tiles: c.protocols.includes('ogc-tiles') ? tiled.map((t) => t.id) : [],
    }),
  );
  return json(
    {
      links: [request.links.link('/collections', 'self', 'application/json', 'The collections')],
      collections,
    },
    DOCUMENT_CACHE,
  );
}

/** `/collections/{id}`: one collection, with its CRSs and links. */
export async function dataCollection(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
): Promise<DataAnswer> {
  const { s, served } = await readableCollection(ports, request, collectionId, {
    protocol: 'ogcapi',
    operation: 'GET',
  });
  const tilesOpen =
    decideDataAccess({
      protocol: 'ogc-tiles',
      operation: 'GET',
      caller: request.caller,
      workspaceId: request.workspace.id,
      layer: served.layer,
      settings: s.switches['ogc-tiles'],
    }).outcome === 'allow';
  const tiled = tilesOpen ? renderedSets(await enabledTileMatrixSets(ports, s.tiles), s.tiles) : [];
  const shape = await ports.data.shape(served);
  return json(
    collectionDocument(served.layer, shape, request.links, { features: true, tiles: tiled.map((t) => t.id) }),
    DOCUMENT_CACHE,
  );
}

/** `/collections/{id}/queryables`: JSON Schema of the properties that filter by equality. */
export async function dataQueryables(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
): Promise<DataAnswer> {
  const { served } = await readableCollection(ports, request, collectionId, {
    protocol: 'ogcapi',
    operation: 'GET',
  });
  const shape = await ports.data.shape(served);
  return json(
    queryablesDocument(served.layer, shape, request.links),
    DOCUMENT_CACHE,
    'application/schema+json',
  );
}

/** `/collections/{id}/items`: a page of features (keyset paging by `next` links). */
export async function dataItems(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
): Promise<DataAnswer> {
  const { s, served } = await readableCollection(ports, request, collectionId, {
    protocol: 'ogcapi',
    operation: 'GETFEATURES',
  });
  const path = `/collections/${encodeURIComponent(collectionId)}/items`;
  const answer = await ports.data.items(
    served,
    request.query,
    s.ogcapi,
    (cursor) => request.links.href(path, { ...single(request.query), next: cursor }),
    request.links.href(path, single(request.query)),
  );
  return {
    kind: 'json',
    body: answer.body,
    mediaType: 'application/geo+json',
    headers: { 'Content-Crs': answer.contentCrs },
    cache: ITEMS_CACHE,
  };
}

/** `/collections/{id}/items/{featureId}`: one feature (`crs` the only parameter besides `f`). */
export async function dataItem(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
  featureId: string,
): Promise<DataAnswer> {
  const { served } = await readableCollection(ports, request, collectionId, {
    protocol: 'ogcapi',
    operation: 'GETITEM',
  });
  for (const [name, values] of Object.entries(request.query)) {
    if (name !== 'crs' && name !== 'f')
      throw new InvalidInputError(
        'invalid_parameter',
        `'${name.slice(0, 64)}' is not a parameter of a feature.`,
        {
          parameter: name.slice(0, 64),
        },
      );
    if (values.length > 1)
      throw new InvalidInputError('invalid_parameter', `'${name}' is given more than once.`, {
        parameter: name,
      });
  }
  const answer = await ports.data.item(served, featureId, request.query.crs?.[0]);
  const collection = `/collections/${encodeURIComponent(collectionId)}`;
  return {
    kind: 'json',
    body: {
      ...answer.body,
      links: [
        request.links.link(
          `${collection}/items/${encodeURIComponent(featureId)}`,
          'self',
          'application/geo+json',
        ),
        request.links.link(collection, 'collection', 'application/json', served.layer.title),
      ],
    },
    mediaType: 'application/geo+json',
    headers: { 'Content-Crs': answer.contentCrs },
    cache: ITEMS_CACHE,
  };
}

function single(query: Record<string, readonly string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (k !== 'next' && v[0] !== undefined) out[k] = v[0];
  return out;
}

/** `/tileMatrixSets`. */
export async function dataTileMatrixSets(ports: DataPlanePorts, request: DataRequest): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET', 'ogc-tiles');
  return json(
    tileMatrixSetsDocument(await enabledTileMatrixSets(ports, s.tiles), request.links),
    DOCUMENT_CACHE,
  );
}

/** `/tileMatrixSets/{id}`: one enabled set's definition. */
export async function dataTileMatrixSet(
  ports: DataPlanePorts,
  request: DataRequest,
  tileMatrixSetId: string,
): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET', 'ogc-tiles');
  const set = (await enabledTileMatrixSets(ports, s.tiles)).find((t) => t.id === tileMatrixSetId);
  if (!set) throw tileMatrixSetNotFound(tileMatrixSetId);
  return json(set.definition, DOCUMENT_CACHE);
}

function tileMatrixSetNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'tile_matrix_set_not_found',
    `Tile matrix set '${id.slice(0, 128)}' is not one this API tiles in.`,
  );
}

/** The collections a workspace-wide tile holds for this caller: readable through Tiles GETTILE. */
async function tiledLayers(ports: DataPlanePorts, request: DataRequest, s: Settings): Promise<ServedLayer[]> {
  const layers = (await ports.catalog.layers(request.workspace.id, MAX_COLLECTIONS))
    .filter((l) => l.enabled)
    .sort((a, b) => a.public_id.localeCompare(b.public_id));
  const readable = layers.filter(
    (layer) =>
      decideDataAccess({
        protocol: 'ogc-tiles',
        operation: 'GETTILE',
        caller: request.caller,
        workspaceId: request.workspace.id,
        layer,
        settings: s.switches['ogc-tiles'],
      }).outcome === 'allow',
  );
  return servedLayers(ports, request.workspace.id, readable);
}

/** Which tileset a request names: a rendered set, or 404. */
async function renderedSet(
  ports: DataPlanePorts,
  s: Settings,
  tileMatrixSetId: string,
): Promise<TileMatrixSetRecord> {
  const set = renderedSets(await enabledTileMatrixSets(ports, s.tiles), s.tiles).find(
    (t) => t.id === tileMatrixSetId,
  );
  if (!set) throw tileMatrixSetNotFound(tileMatrixSetId);
  return set;
}

/** `/collections/{id}/tiles`: the collection's tilesets. */
export async function collectionTilesets(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
): Promise<DataAnswer> {
  const { s, served } = await readableCollection(ports, request, collectionId, {
    protocol: 'ogc-tiles',
    operation: 'GET',
  });
  const sets = renderedSets(await enabledTileMatrixSets(ports, s.tiles), s.tiles);
  return json(tilesetsDocument(sets, request.links, [served.layer]), DOCUMENT_CACHE);
}

/** `/collections/{id}/tiles/{tms}` (TileJSON 3.0 with `f=tilejson`). */
export async function collectionTileset(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
  tileMatrixSetId: string,
): Promise<DataAnswer> {
  const { s, served } = await readableCollection(ports, request, collectionId, {
    protocol: 'ogc-tiles',
    operation: 'GET',
  });
  const set = await renderedSet(ports, s, tileMatrixSetId);
  return tilesetAnswer(request, set, [served.layer], collectionId);
}

function tilesetAnswer(
  request: DataRequest,
  set: TileMatrixSetRecord,
  layers: readonly Layer[],
  collectionId: string | undefined,
): DataAnswer {
  const f = request.query.f?.[0];
  if (f !== undefined && f !== 'json' && f !== 'tilejson')
    throw new InvalidInputError(
      'invalid_parameter',
      `f=${f.slice(0, 32)} is not offered; use json or tilejson.`,
      {
        parameter: 'f',
      },
    );
  if (f === 'tilejson')
    return json(tileJson(set, layers, request.links, collectionId, request.workspace), DOCUMENT_CACHE);
  return json(tilesetDocument(set, layers, request.links, collectionId), DOCUMENT_CACHE);
}

/** `/collections/{id}/tiles/{tms}/{z}/{y}/{x}`: a vector tile of one collection. */
export async function collectionTile(
  ports: DataPlanePorts,
  request: DataRequest,
  collectionId: string,
  tileMatrixSetId: string,
  address: { z: string; y: string; x: string },
): Promise<DataAnswer> {
  const { s, served } = await readableCollection(ports, request, collectionId, {
    protocol: 'ogc-tiles',
    operation: 'GETTILE',
  });
  await renderedSet(ports, s, tileMatrixSetId);
  return tileAnswer(await cachedTile(ports, request, [served], address, s.tiles), s.tiles);
}

/**
 * The largest tile the data plane answers: a Lambda response is at most 6 MB, and a tile travels
 * base64-encoded (4/3), so a larger `max_tile_bytes` in the settings is lowered to this.
 */
export const MAX_TILE_RESPONSE_BYTES = 4 * 1024 * 1024;

export function tileBudgetOf(tiles: OGCTilesSettings): TileBudget {
  return {
    ...(tiles.settings.max_features ? { maxFeatures: tiles.settings.max_features } : {}),
    ...(tiles.settings.max_tile_bytes
      ? { maxBytes: Math.min(tiles.settings.max_tile_bytes, MAX_TILE_RESPONSE_BYTES) }
      : {}),
  };
}

/** How the persistent cache took part in a tile: every layer found, some, none, or not at all. */
type CacheOutcome = 'hit' | 'partial' | 'miss' | 'off';

function tileAnswer(
  answer: { tile: TileAnswer; outcome: CacheOutcome },
  tiles: OGCTilesSettings,
): DataAnswer {
  const { tile, outcome } = answer;
  return {
    kind: 'bytes',
    body: tile.bytes,
    mediaType: 'application/vnd.mapbox-vector-tile',
    headers: {
      'GeoPlane-Tile-Features': String(tile.features),
      ...(tile.truncated ? { 'GeoPlane-Tile-Truncated': 'true' } : {}),
      'GeoPlane-Tile-Cache': outcome,
    },
    cache: tileCache(tiles),
  };
}

/**
 * The fingerprint a layer's tiles are kept under now (ADR 0139): its and its service's versions,
 * the Tiles budget, the workspace's clear generation and the global tiles epoch. The data plane,
 * the seed jobs and the sweep all compute it here, so a seeded tile is a hit and a stale one is
 * recognised as such.
 */
export function currentFingerprint(
  served: ServedLayer,
  budget: TileBudget,
  state: { generation: number; tilesEpoch: number },
): string {
  return tileFingerprint({
    layerVersion: served.layer.version,
    serviceVersion: served.service.version,
    ...(budget.maxFeatures ? { maxFeatures: budget.maxFeatures } : {}),
    ...(budget.maxBytes ? { maxBytes: budget.maxBytes } : {}),
    workspaceGeneration: state.generation,
    tilesEpoch: state.tilesEpoch,
  });
}

/** Layers rendered at once when several miss the cache. */
const RENDER_PARALLELISM = 4;

/**
 * A tile of `layers` — the layers this caller may read, decided before this is called — each
 * layer's part from the persistent cache when it is there, else rendered (and stored, within the
 * workspace's quota). The parts, in the layers' order, are one tile (ADR 0139).
 */
async function cachedTile(
  ports: DataPlanePorts,
  request: DataRequest,
  layers: readonly ServedLayer[],
  address: { z: string; y: string; x: string },
  tiles: OGCTilesSettings,
): Promise<{ tile: TileAnswer; outcome: CacheOutcome }> {
  const budget = tileBudgetOf(tiles);
  const at = canonicalTile(address);
  const cache = ports.tiles;
  if (!cache || !tiles.settings.cache_enabled || !at || layers.length === 0)
    return { tile: await ports.data.tile(layers, address, budget), outcome: 'off' };
  const workspaceId = request.workspace.id;
  const state = await cache.state(workspaceId);
  const keyOf = (served: ServedLayer) =>
    tileKey(workspaceId, served.layer.id, currentFingerprint(served, budget, state), at);
  const keys = layers.map(keyOf);
  const parts: (CachedTile | undefined)[] = await Promise.all(keys.map((k) => cache.store.get(k)));
  const missing = parts.flatMap((part, i) => (part ? [] : [i]));
  const quota = tiles.settings.persistent_cache_quota_bytes;
  let room = quota ? quota - state.bytes : Number.POSITIVE_INFINITY;
  for (let i = 0; i < missing.length; i += RENDER_PARALLELISM) {
    const batch = missing.slice(i, i + RENDER_PARALLELISM);
    const rendered = await Promise.all(
      batch.map((index) => ports.data.tile([layers[index] as ServedLayer], address, budget)),
    );
    let entries = 0;
    let bytes = 0;
    for (const [j, index] of batch.entries()) {
      const tile = rendered[j] as TileAnswer;
      parts[index] = tile;
      if (tile.bytes.byteLength > room) continue;
      if (await cache.store.putNew(keys[index] as string, tile)) {
        entries++;
        bytes += tile.bytes.byteLength;
        room -= tile.bytes.byteLength;
      }
    }
    if (entries > 0) await cache.stored(workspaceId, entries, bytes);
  }
  const found = parts as CachedTile[];
  const all = Buffer.concat(found.map((p) => p.bytes));
  return {
    tile: {
      bytes: new Uint8Array(all.buffer, all.byteOffset, all.byteLength),
      features: found.reduce((n, p) => n + p.features, 0),
      truncated: found.some((p) => p.truncated),
    },
    outcome: missing.length === 0 ? 'hit' : missing.length === layers.length ? 'miss' : 'partial',
  };
}

/** `/tiles`: the workspace's tilesets (every readable collection in one tile). */
export async function datasetTilesets(ports: DataPlanePorts, request: DataRequest): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET', 'ogc-tiles');
  const layers = (await tiledLayers(ports, request, s)).map((x) => x.layer);
  const sets = renderedSets(await enabledTileMatrixSets(ports, s.tiles), s.tiles);
  return json(tilesetsDocument(sets, request.links, layers, true), DOCUMENT_CACHE);
}

/** `/tiles/{tms}` (TileJSON with `f=tilejson`). */
export async function datasetTileset(
  ports: DataPlanePorts,
  request: DataRequest,
  tileMatrixSetId: string,
): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET', 'ogc-tiles');
  const set = await renderedSet(ports, s, tileMatrixSetId);
  const layers = (await tiledLayers(ports, request, s)).map((x) => x.layer);
  return tilesetAnswer(request, set, layers, undefined);
}

/** `/tiles/{tms}/{z}/{y}/{x}`: one MVT layer per readable collection. */
export async function datasetTile(
  ports: DataPlanePorts,
  request: DataRequest,
  tileMatrixSetId: string,
  address: { z: string; y: string; x: string },
): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GETTILE', 'ogc-tiles');
  await renderedSet(ports, s, tileMatrixSetId);
  const layers = await tiledLayers(ports, request, s);
  return tileAnswer(await cachedTile(ports, request, layers, address, s.tiles), s.tiles);
}

/** `/styles`: the workspace's Mapbox GL styles. */
export async function dataStyles(ports: DataPlanePorts, request: DataRequest): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET', 'ogc-tiles');
  const styles = (await ports.catalog.styles.all(request.workspace.id)).filter((x) => x.format === 'mapbox');
  return json({ styles: styles.map((x) => styleSummary(x, request.links)), links: [] }, DOCUMENT_CACHE);
}

/** `/styles/{id}?f=mapbox`: a style whose sources are this API's TileJSON, layers narrowed to what the caller reads. */
export async function dataStyle(
  ports: DataPlanePorts,
  request: DataRequest,
  styleId: string,
): Promise<DataAnswer> {
  const s = await settingsOf(ports.catalog, request.workspace.id);
  serviceGate(request, s, 'GET', 'ogc-tiles');
  const f = request.query.f?.[0];
  if (f !== undefined && f !== 'mapbox' && f !== 'json')
    throw new InvalidInputError('invalid_parameter', `f=${f.slice(0, 32)} is not offered; use mapbox.`, {
      parameter: 'f',
    });
  const style = await ports.catalog.styles.find(request.workspace.id, styleId);
  if (style?.format !== 'mapbox')
    throw new NotFoundError('style_not_found', `Style '${styleId.slice(0, 128)}' does not exist.`);
  const readable = new Set((await tiledLayers(ports, request, s)).map((x) => x.layer.public_id));
  return json(styleDocument(style, readable, request.links, request.workspace), DOCUMENT_CACHE);
}
