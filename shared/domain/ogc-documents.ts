/**
 * The JSON documents of the data plane's OGC API (OGC 17-069r4 Part 1, 18-058r1 Part 2, 20-057
 * Tiles, 17-083r4/2.0 TMS, TileJSON 3.0): pure builders over the catalog's records (ADR 0123).
 */
import { CRS84, type Crs, type Queryable } from './feature-query.ts';
import type { Layer } from './layers.ts';
import type { OGCAPISettings, OGCTilesSettings } from './settings.ts';
import type { Style } from './styles.ts';
import { crsUri, type TileMatrixSetRecord } from './tile-matrix-sets.ts';
import type { Workspace } from './workspaces.ts';

/** What a collection's data looks like (for its documents and its items query). */
export interface CollectionShape {
  crs: readonly Crs[];
  storageCrs: string;
  queryables: readonly Queryable[];
  temporal: boolean;
  /** Its extent in CRS84, when the data source computed one. */
  extent?: [number, number, number, number];
}

/** A link of an OGC API document. */
export interface OgcLink {
  href: string;
  rel: string;
  type?: string;
  title?: string;
  templated?: boolean;
}

/** Builds absolute links under the workspace's OGC API root (`…/workspaces/{workspace}/ogc`). */
export interface DataLinks {
  /** The API root, absolute, without a trailing slash. */
  readonly root: string;
  href(path: string, query?: Record<string, string>): string;
  link(path: string, rel: string, type: string, title?: string, templated?: boolean): OgcLink;
}

/** Links rooted at `root` (absolute URL of the workspace's OGC API). */
export function dataLinks(root: string): DataLinks {
  const href = (path: string, query: Record<string, string> = {}) => {
    const search = new URLSearchParams(query).toString();
    return `${root}${path}${search ? `?${search}` : ''}`;
  };
  return {
    root,
    href,
    link: (path, rel, type, title, templated) => ({
      href: href(path),
      rel,
      type,
      ...(title ? { title } : {}),
      ...(templated ? { templated: true } : {}),
    }),
  };
}

const JSON_TYPE = 'application/json';
const GEOJSON = 'application/geo+json';
const OPENAPI = 'application/vnd.oai.openapi+json;version=3.0';
const MVT = 'application/vnd.mapbox-vector-tile';
const REL = 'http://www.opengis.net/def/rel/ogc/1.0';

/** The conformance classes of OGC API Features this server implements (tests follow their ATS). */
export const featuresConformance = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30',
  'http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters',
] as const;

/** The conformance classes of OGC API Tiles (and TMS) this server implements. */
export const tilesConformance = [
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tilesets-list',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/geodata-tilesets',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/dataset-tilesets',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/oas30',
  'http://www.opengis.net/spec/tms/2.0/conf/tilematrixset',
  'http://www.opengis.net/spec/tms/2.0/conf/json-tilematrixset',
] as const;

/** OGC API Common's classes, declared whenever either protocol is served. */
export const commonConformance = [
  'http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/landing-page',
  'http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/json',
  'http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/oas30',
] as const;

/** The landing page: links to the API definition, conformance, data and tiling schemes. */
export function landingDocument(
  workspace: Workspace,
  ogcapi: OGCAPISettings,
  tiles: OGCTilesSettings,
  links: DataLinks,
) {
  const served = [
    ogcapi.enabled ? 'OGC API Features' : '',
    tiles.enabled ? 'OGC API Tiles (vector tiles)' : '',
  ]
    .filter(Boolean)
    .join(' and ');
  return {
    title: ogcapi.title ?? tiles.title ?? `GeoPlane — ${workspace.name}`,
    description: `${ogcapi.abstract ?? tiles.abstract ?? `The published layers of workspace '${workspace.name}'`}. Served here: ${served}. Raster mosaics and map images (WMS, map tiles) are not served by this API yet.`,
    links: [
      links.link('', 'self', JSON_TYPE, 'This document'),
      links.link('/api', 'service-desc', OPENAPI, 'The API definition'),
      links.link('/conformance', 'conformance', JSON_TYPE, 'Conformance classes'),
      links.link('/collections', 'data', JSON_TYPE, 'The collections'),
      ...(tiles.enabled
        ? [
            links.link('/tileMatrixSets', `${REL}/tiling-schemes`, JSON_TYPE, 'Tile matrix sets'),
            links.link('/tiles', `${REL}/tilesets-vector`, JSON_TYPE, 'Vector tilesets of every collection'),
            links.link('/styles', `${REL}/styles`, JSON_TYPE, 'Styles'),
          ]
        : []),
    ],
  };
}

/** `/conformance`: only the classes of the protocols the workspace serves. */
export function conformanceDocument(features: boolean, tiles: boolean) {
  return {
    conformsTo: [
      ...commonConformance,
      ...(features ? featuresConformance : []),
      ...(tiles ? tilesConformance : []),
    ],
  };
}

/** Half the side of the EPSG:3857 square. */
const HALF_WORLD = Math.PI * 6378137;

/** A layer's extent in CRS84, when its stored extent is geographic or Web Mercator; else undefined. */
export function crs84Extent(
  layer: Pick<Layer, 'native_extent'>,
): [number, number, number, number] | undefined {
  const e = layer.native_extent;
  if (!e || ![e.min_x, e.min_y, e.max_x, e.max_y].every(Number.isFinite)) return undefined;
  if (e.srid === 4326 || e.srid === 0) return [e.min_x, e.min_y, e.max_x, e.max_y];
  if (e.srid === 3857 || e.srid === 900913) {
    const lon = (x: number) => (x / HALF_WORLD) * 180;
    const lat = (y: number) => (Math.atan(Math.exp((y / HALF_WORLD) * Math.PI)) * 360) / Math.PI - 90;
    return [lon(e.min_x), lat(e.min_y), lon(e.max_x), lat(e.max_y)];
  }
  return undefined;
}

/** One collection: its extent, CRSs and links to items, queryables and tilesets. */
export function collectionDocument(
  layer: Layer,
  shape: CollectionShape | undefined,
  links: DataLinks,
  served: { features: boolean; tiles: readonly string[] },
) {
  const base = `/collections/${encodeURIComponent(layer.public_id)}`;
  const bbox = shape?.extent ?? crs84Extent(layer);
  const time = layer.dimensions.find((d) => d.name.toLowerCase() === 'time' && d.source_property);
  return {
    id: layer.public_id,
    title: layer.title,
    ...(layer.description ? { description: layer.description } : {}),
    ...(bbox || time
      ? {
          extent: {
            ...(bbox ? { spatial: { bbox: [bbox], crs: CRS84 } } : {}),
            ...(time
              ? {
                  temporal: {
                    interval: [temporalInterval(time.extent)],
                    trs: 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian',
                  },
                }
              : {}),
          },
        }
      : {}),
    itemType: 'feature',
    ...(shape ? { crs: shape.crs.map((c) => c.uri), storageCrs: shape.storageCrs } : {}),
    ...(layer.geometry_type ? { geometryType: layer.geometry_type } : {}),
    links: [
      links.link(base, 'self', JSON_TYPE, layer.title),
      ...(served.features
        ? [
            links.link(`${base}/items`, 'items', GEOJSON, 'The features'),
            links.link(`${base}/queryables`, `${REL}/queryables`, 'application/schema+json', 'Queryables'),
          ]
        : []),
      ...(served.tiles.length > 0
        ? [links.link(`${base}/tiles`, `${REL}/tilesets-vector`, JSON_TYPE, 'Vector tilesets')]
        : []),
    ],
  };
}

/**
 * The temporal extent of a time dimension from its `extent` (an ISO 8601 `start/end`, either end
 * open as `..` or empty); anything else — a list of values, a period — is an unknown interval.
 */
export function temporalInterval(extent: string | undefined): [string | null, string | null] {
  const parts = (extent ?? '').split('/');
  if (parts.length < 2) return [null, null];
  const instant = (text: string | undefined) => {
    const t = (text ?? '').trim();
    if (t === '' || t === '..' || Number.isNaN(Date.parse(t))) return null;
    return new Date(t).toISOString();
  };
  return [instant(parts[0]), instant(parts[1])];
}

/** `/queryables`: a JSON Schema of the properties that filter by equality (Part 3). */
export function queryablesDocument(layer: Layer, shape: CollectionShape, links: DataLinks) {
  const href = links.href(`/collections/${encodeURIComponent(layer.public_id)}/queryables`);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: href,
    type: 'object',
    title: layer.title,
    properties: Object.fromEntries(
      shape.queryables.map((q) => [q.name, { title: q.name, ...(jsonSchemaType(q.type) ?? {}) }]),
    ),
    additionalProperties: false,
  };
}

function jsonSchemaType(type: string): { type: string } | undefined {
  return ['integer', 'number', 'string', 'boolean'].includes(type) ? { type } : undefined;
}

/** `/tileMatrixSets`. */
export function tileMatrixSetsDocument(sets: readonly TileMatrixSetRecord[], links: DataLinks) {
  return {
    tileMatrixSets: sets.map((s) => ({
      id: s.id,
      ...(s.definition.title ? { title: s.definition.title } : {}),
      ...(s.definition.uri ? { uri: s.definition.uri } : {}),
      crs: crsUri(s.definition.crs),
      links: [
        links.link(`/tileMatrixSets/${encodeURIComponent(s.id)}`, 'self', JSON_TYPE, s.definition.title),
      ],
    })),
    links: [links.link('/tileMatrixSets', 'self', JSON_TYPE)],
  };
}

function tilesBase(collectionId: string | undefined): string {
  return collectionId === undefined ? '/tiles' : `/collections/${encodeURIComponent(collectionId)}/tiles`;
}

function tileTemplate(links: DataLinks, collectionId: string | undefined, set: TileMatrixSetRecord): string {
  return `${links.href(`${tilesBase(collectionId)}/${encodeURIComponent(set.id)}`)}/{tileMatrix}/{tileRow}/{tileCol}`;
}

function tilesetLinks(
  links: DataLinks,
  collectionId: string | undefined,
  set: TileMatrixSetRecord,
): OgcLink[] {
  const base = `${tilesBase(collectionId)}/${encodeURIComponent(set.id)}`;
  return [
    links.link(base, 'self', JSON_TYPE, 'This tileset'),
    {
      ...links.link(base, 'alternate', 'application/vnd.mapbox.tile+json', 'TileJSON'),
      href: links.href(base, { f: 'tilejson' }),
    },
    links.link(`/tileMatrixSets/${encodeURIComponent(set.id)}`, `${REL}/tiling-scheme`, JSON_TYPE, set.id),
    {
      href: tileTemplate(links, collectionId, set),
      rel: 'item',
      type: MVT,
      title: 'Vector tiles',
      templated: true,
    },
  ];
}

/** `/tiles` or `/collections/{id}/tiles`: the tilesets on offer. */
export function tilesetsDocument(
  sets: readonly TileMatrixSetRecord[],
  links: DataLinks,
  layers: readonly Layer[],
  dataset = false,
) {
  const collectionId = dataset ? undefined : layers[0]?.public_id;
  return {
    tilesets: sets.map((s) => ({
      title: dataset ? 'Every collection' : (layers[0]?.title ?? ''),
      dataType: 'vector',
      crs: crsUri(s.definition.crs),
      tileMatrixSetURI: s.definition.uri,
      links: tilesetLinks(links, collectionId, s),
    })),
    links: [links.link(tilesBase(collectionId), 'self', JSON_TYPE)],
  };
}

/** The deepest zoom tiles are served at (OGC 17-083r4 WebMercatorQuad goes to 24). */
const MAX_TILE_ZOOM = 24;

/** `/tiles/{tms}` or `/collections/{id}/tiles/{tms}`: the tileset metadata (20-057 §tileset). */
export function tilesetDocument(
  set: TileMatrixSetRecord,
  layers: readonly Layer[],
  links: DataLinks,
  collectionId: string | undefined,
) {
  return {
    title: collectionId === undefined ? 'Every collection' : (layers[0]?.title ?? collectionId),
    dataType: 'vector',
    crs: crsUri(set.definition.crs),
    tileMatrixSetURI: set.definition.uri,
    links: tilesetLinks(links, collectionId, set),
    layers: layers.map((l) => ({
      id: l.public_id,
      title: l.title,
      dataType: 'vector',
      ...(l.geometry_type ? { geometryType: ogcGeometryType(l.geometry_type) } : {}),
    })),
    tileMatrixSetLimits: [],
    ...boundingBoxOf(layers),
  };
}

function boundingBoxOf(layers: readonly Layer[]) {
  const boxes = layers.map(crs84Extent).filter((b): b is [number, number, number, number] => b !== undefined);
  if (boxes.length === 0) return {};
  const b = [
    Math.min(...boxes.map((x) => x[0])),
    Math.min(...boxes.map((x) => x[1])),
    Math.max(...boxes.map((x) => x[2])),
    Math.max(...boxes.map((x) => x[3])),
  ];
  return { boundingBox: { lowerLeft: [b[0], b[1]], upperRight: [b[2], b[3]], crs: CRS84 } };
}

/** The OGC API Tiles geometry type of a stored (GeometryType()) one. */
function ogcGeometryType(type: string): string {
  const t = type.toUpperCase();
  if (t.includes('POINT')) return 'points';
  if (t.includes('LINE')) return 'lines';
  if (t.includes('POLYGON')) return 'polygons';
  return 'geometry';
}

/** TileJSON 3.0 of a tileset (what MapLibre and QGIS open by URL). */
export function tileJson(
  set: TileMatrixSetRecord,
  layers: readonly Layer[],
  links: DataLinks,
  collectionId: string | undefined,
  workspace: Workspace,
) {
  const template = tileTemplate(links, collectionId, set)
    .replace('{tileMatrix}', '{z}')
    .replace('{tileRow}', '{y}')
    .replace('{tileCol}', '{x}');
  const boxes = boundingBoxOf(layers).boundingBox;
  return {
    tilejson: '3.0.0',
    name: collectionId ?? workspace.name,
    scheme: 'xyz',
    tiles: [template],
    minzoom: 0,
    maxzoom: MAX_TILE_ZOOM,
    ...(boxes ? { bounds: [...boxes.lowerLeft, ...boxes.upperRight] } : {}),
    vector_layers: layers.map((l) => ({ id: l.public_id, description: l.title, fields: {} })),
  };
}

/** A style in the `/styles` list. */
export function styleSummary(style: Omit<Style, 'body'>, links: DataLinks) {
  return {
    id: style.name,
    ...(style.title ? { title: style.title } : {}),
    links: [
      {
        ...links.link(
          `/styles/${encodeURIComponent(style.name)}`,
          'stylesheet',
          'application/vnd.mapbox.style+json',
        ),
        href: links.href(`/styles/${encodeURIComponent(style.name)}`, { f: 'mapbox' }),
      },
    ],
  };
}

/**
 * A Mapbox GL style as served: every vector source points at this API's TileJSON of every
 * collection, and layers drawing a `source-layer` the caller may not read are left out.
 */
export function styleDocument(
  style: Style,
  readable: ReadonlySet<string>,
  links: DataLinks,
  workspace: Workspace,
) {
  const body = JSON.parse(style.body) as Record<string, unknown>;
  const sources = (body.sources ?? {}) as Record<string, Record<string, unknown>>;
  const tilejson = links.href('/tiles/WebMercatorQuad', { f: 'tilejson' });
  const rewritten: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(sources)) {
    rewritten[name] = source?.type === 'vector' ? { type: 'vector', url: tilejson } : source;
  }
  const layers = ((body.layers ?? []) as Record<string, unknown>[]).filter((l) => {
    const sourceLayer = l['source-layer'];
    return typeof sourceLayer !== 'string' || readable.has(sourceLayer);
  });
  return { ...body, name: body.name ?? `${workspace.name}/${style.name}`, sources: rewritten, layers };
}
