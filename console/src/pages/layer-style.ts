/**
 * What the layer map draws, as plain data (no DOM, no MapLibre at run time): the OGC URLs of a
 * layer, the default style by geometry type, and the layers of a workspace style that draw one
 * collection, moved onto the map's own source.
 */
import type {
  FilterSpecification,
  LayerSpecification,
  StyleSpecification,
} from '@maplibre/maplibre-gl-style-spec';

/** The colour of a layer drawn without a style of its own (far from the base map's colours). */
export const LAYER_COLOUR = '#d7263d';

/** The base map's colours: water (the background), land, country borders. */
export const WATER = '#dce8f1';
export const LAND = '#f6f4ee';
export const BORDER = '#a9a398';

/** The id of the map source the layer's tiles (or an import's features) come from. */
export const DATA_SOURCE = 'data';

/** The tile matrix set the map reads (OGC 17-083r4's Web Mercator; MapLibre's own grid). */
export const TILE_MATRIX_SET = 'WebMercatorQuad';

const enc = encodeURIComponent;

/** The workspace's OGC API (DESIGN §8a): `{origin}/workspaces/{workspace}/ogc`. */
export function ogcApiUrl(origin: string, workspace: string): string {
  return `${origin}/workspaces/${enc(workspace)}/ogc`;
}

/** The OGC API URLs of one collection (a layer, by its public id). */
export interface CollectionUrls {
  api: string;
  collection: string;
  items: string;
  /** `{z}/{y}/{x}`: tileMatrix / tileRow / tileCol, as OGC API Tiles orders them. */
  tiles: string;
  tileJson: string;
}

export function collectionUrls(origin: string, workspace: string, publicId: string): CollectionUrls {
  const api = ogcApiUrl(origin, workspace);
  const collection = `${api}/collections/${enc(publicId)}`;
  return {
    api,
    collection,
    items: `${collection}/items`,
    tiles: `${collection}/tiles/${TILE_MATRIX_SET}/{z}/{y}/{x}`,
    tileJson: `${collection}/tiles/${TILE_MATRIX_SET}?f=tilejson`,
  };
}

/** A workspace style as Mapbox GL JSON, its sources pointing at this API's TileJSON. */
export function styleUrl(origin: string, workspace: string, style: string): string {
  return `${ogcApiUrl(origin, workspace)}/styles/${enc(style)}?f=mapbox`;
}

/** The GDAL command that reads the collection through OGC API Features. */
export function gdalCommand(urls: CollectionUrls, publicId: string): string {
  const quote = (value: string) =>
    /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
  return `ogrinfo ${quote(`OAPIF:${urls.api}`)} ${quote(publicId)}`;
}

type Kind = 'point' | 'line' | 'polygon';

const GEOMETRY_TYPES: Record<Kind, string[]> = {
  point: ['Point', 'MultiPoint'],
  line: ['LineString', 'MultiLineString'],
  polygon: ['Polygon', 'MultiPolygon'],
};

/**
 * The kinds a layer's geometry type stands for: one for `Point`, `MULTILINESTRING`, `Polygon`…,
 * all three when it is missing or generic (`Geometry`, `GeometryCollection`).
 */
export function geometryKinds(geometryType: string | undefined): Kind[] {
  const type = (geometryType ?? '').toLowerCase().replace(/[^a-z]/g, '');
  if (/^(multi)?point[zm]*$/.test(type)) return ['point'];
  if (/^(multi)?linestring[zm]*$/.test(type)) return ['line'];
  if (/^(multi)?polygon[zm]*$/.test(type)) return ['polygon'];
  return ['point', 'line', 'polygon'];
}

const only = (kind: Kind): FilterSpecification => [
  'match',
  ['geometry-type'],
  GEOMETRY_TYPES[kind],
  true,
  false,
];

/**
 * The layer drawn without a style: circles for points, lines for lines, a fill with an outline for
 * polygons; every kind when the geometry type is unknown. Each is filtered by its geometry type,
 * so a circle never marks a polygon's vertices.
 */
export function defaultLayers(
  geometryType: string | undefined,
  sourceLayer?: string,
  colour = LAYER_COLOUR,
): LayerSpecification[] {
  const from = { source: DATA_SOURCE, ...(sourceLayer ? { 'source-layer': sourceLayer } : {}) };
  const byKind: Record<Kind, LayerSpecification[]> = {
    point: [
      {
        id: 'data-point',
        type: 'circle',
        ...from,
        filter: only('point'),
        paint: {
          'circle-color': colour,
          'circle-radius': 5,
          'circle-stroke-color': '#ffffff',
          'circle-stroke-width': 1,
        },
      },
    ],
    line: [
      {
        id: 'data-line',
        type: 'line',
        ...from,
        filter: only('line'),
        layout: { 'line-cap': 'round', 'line-join': 'round' },
        paint: { 'line-color': colour, 'line-width': 2.5 },
      },
    ],
    polygon: [
      {
        id: 'data-fill',
        type: 'fill',
        ...from,
        filter: only('polygon'),
        paint: { 'fill-color': colour, 'fill-opacity': 0.3 },
      },
      {
        id: 'data-outline',
        type: 'line',
        ...from,
        filter: only('polygon'),
        paint: { 'line-color': colour, 'line-width': 1.5 },
      },
    ],
  };
  // Polygons first, so lines and points are drawn above them.
  const order: Kind[] = ['polygon', 'line', 'point'];
  const kinds = geometryKinds(geometryType);
  return order.filter((kind) => kinds.includes(kind)).flatMap((kind) => byKind[kind]);
}

/** Paint and layout properties that need a sprite (an image the map would have to fetch). */
const SPRITE_PROPERTIES = ['fill-pattern', 'line-pattern', 'fill-extrusion-pattern', 'background-pattern'];

/**
 * The layers of a Mapbox GL style that draw the collection (`source-layer` = its public id, from
 * a vector source), moved onto the map's own source. Symbol layers are left out: they need glyphs
 * or sprites, which the console never fetches (no request leaves the machine); so are patterns.
 */
export function collectionLayers(style: unknown, publicId: string): LayerSpecification[] {
  if (!style || typeof style !== 'object') return [];
  const { layers, sources } = style as Partial<StyleSpecification>;
  if (!Array.isArray(layers)) return [];
  const vectorSources = new Set(
    Object.entries(sources ?? {})
      .filter(([, source]) => source && typeof source === 'object' && source.type === 'vector')
      .map(([id]) => id),
  );
  const drawn: LayerSpecification[] = [];
  for (const layer of layers) {
    if (!layer || typeof layer !== 'object' || !('source' in layer)) continue;
    if (layer.type === 'symbol' || layer['source-layer'] !== publicId) continue;
    if (typeof layer.source !== 'string' || !vectorSources.has(layer.source)) continue;
    const { paint, ...rest } = layer as LayerSpecification & { paint?: Record<string, unknown> };
    const kept = paint
      ? Object.fromEntries(Object.entries(paint).filter(([key]) => !SPRITE_PROPERTIES.includes(key)))
      : undefined;
    drawn.push({
      ...rest,
      id: `style-${drawn.length}-${layer.id}`,
      source: DATA_SOURCE,
      ...(kept ? { paint: kept } : {}),
    } as LayerSpecification);
  }
  return drawn;
}

/** A west, south, east, north box in longitude/latitude. */
export type Box = [number, number, number, number];

/** The bounding box of GeoJSON features (longitude/latitude), or undefined when they have no coordinates. */
export function featuresBox(features: readonly { geometry?: unknown }[]): Box | undefined {
  const box: Box = [Infinity, Infinity, -Infinity, -Infinity];
  const visit = (value: unknown): void => {
    if (!Array.isArray(value)) return;
    if (typeof value[0] === 'number' && typeof value[1] === 'number') {
      const [x, y] = value as [number, number];
      if (!Number.isFinite(x) || !Number.isFinite(y)) return;
      box[0] = Math.min(box[0], x);
      box[1] = Math.min(box[1], y);
      box[2] = Math.max(box[2], x);
      box[3] = Math.max(box[3], y);
      return;
    }
    for (const item of value) visit(item);
  };
  const geometry = (g: unknown): void => {
    if (!g || typeof g !== 'object') return;
    const { coordinates, geometries } = g as { coordinates?: unknown; geometries?: unknown };
    visit(coordinates);
    if (Array.isArray(geometries)) for (const part of geometries) geometry(part);
  };
  for (const feature of features) geometry(feature.geometry);
  return box.every(Number.isFinite) ? box : undefined;
}

/** The first `extent.spatial.bbox` of an OGC API collection document (CRS84), if it has one. */
export function collectionBox(collection: unknown): Box | undefined {
  const bbox = (collection as { extent?: { spatial?: { bbox?: unknown } } } | undefined)?.extent?.spatial
    ?.bbox;
  const first = Array.isArray(bbox) ? bbox[0] : undefined;
  if (!Array.isArray(first) || (first.length !== 4 && first.length !== 6)) return undefined;
  const numbers = first as number[];
  const [w, s, e, n] =
    numbers.length === 6
      ? [numbers[0], numbers[1], numbers[3], numbers[4]]
      : [numbers[0], numbers[1], numbers[2], numbers[3]];
  const box = [w, s, e, n] as Box;
  return box.every((v) => typeof v === 'number' && Number.isFinite(v)) ? box : undefined;
}
