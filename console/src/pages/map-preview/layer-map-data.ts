/**
 * What the layer map draws, read from the data plane: the layer's own vector tiles (the workspace's
 * OGC API, DESIGN §8a) through their TileJSON, or a page of features when the workspace serves no
 * vector tiles; the layer's default Mapbox style or a default for its geometry type; its box.
 */
import type {
  LayerSpecification,
  SourceSpecification,
  VectorSourceSpecification,
} from '@maplibre/maplibre-gl-style-spec';
import { api } from '#console/api.ts';
import { getJson } from '#console/ogc-client.ts';
import {
  type Box,
  collectionBox,
  collectionLayers,
  collectionUrls,
  defaultLayers,
  geometryKinds,
  styleUrl,
  TILE_MATRIX_SET,
} from '../layer-style.ts';
import { type Extent, LON_LAT, lonLatBox, type MapData } from './data-map.tsx';

/** What the layer map needs of a layer (the management API's Layer). */
export interface MapLayer {
  public_id: string;
  enabled: boolean;
  geometry_type?: string;
  default_style?: string;
  native_extent?: Extent;
}

/** A TileJSON tile URL made absolute (the worker has no base URL), its `{z}/{x}/{y}` kept as they are. */
function absoluteTileUrl(template: string, base: string): string {
  return new URL(template.replace(/\{(\w+)\}/g, '__tile_$1__'), base).href.replace(/__tile_(\w+)__/g, '{$1}');
}

/** The vector source of a collection from its TileJSON 3.0 document. */
function tileJsonSource(tileJson: unknown, url: string): VectorSourceSpecification | undefined {
  const doc = tileJson as { tiles?: unknown; minzoom?: unknown; maxzoom?: unknown; bounds?: unknown };
  const tiles = Array.isArray(doc?.tiles) ? doc.tiles.filter((t): t is string => typeof t === 'string') : [];
  if (tiles.length === 0) return undefined;
  const bounds = Array.isArray(doc.bounds) && doc.bounds.length === 4 ? (doc.bounds as number[]) : undefined;
  return {
    type: 'vector',
    tiles: tiles.map((t) => absoluteTileUrl(t, url)),
    ...(typeof doc.minzoom === 'number' ? { minzoom: doc.minzoom } : {}),
    ...(typeof doc.maxzoom === 'number' ? { maxzoom: doc.maxzoom } : {}),
    ...(bounds?.every(Number.isFinite) ? { bounds: bounds as [number, number, number, number] } : {}),
  };
}

const KIND_WORDS = { point: 'points', line: 'lines', polygon: 'polygons' } as const;

/** How many features the map draws when it must read them from OGC API Features (tiles off). */
const ITEMS_LIMIT = 1000;

export type Prepared = { data: MapData; notes: string[]; tilesOff?: true };

/** Why the workspace serves no WebMercatorQuad vector tiles, or undefined when it does (or can't be told). */
async function tilesOffReason(workspace: string): Promise<string | undefined> {
  try {
    const { data } = await api.GET('/api/v1/workspaces/{workspace}/settings/ogc-tiles', {
      params: { path: { workspace } },
    });
    if (!data) return undefined;
    if (!data.enabled) return "OGC API Tiles is off in this workspace's settings";
    if (!data.settings.vector_tiles.enabled) return "vector tiles are off in this workspace's tiles settings";
    if (!data.settings.tile_matrix_sets.includes(TILE_MATRIX_SET))
      return `this workspace's tiles settings don't offer ${TILE_MATRIX_SET}`;
    return undefined;
  } catch {
    return undefined;
  }
}

/** A layer's style layers moved from its vector tiles to GeoJSON (which has no source layers). */
function onGeoJson(layers: LayerSpecification[]): LayerSpecification[] {
  return layers.map((layer) => {
    const { 'source-layer': _sourceLayer, ...rest } = layer as LayerSpecification & {
      'source-layer'?: string;
    };
    return rest as LayerSpecification;
  });
}

/** The extent of a draft: the box alone (the OGC API doesn't serve drafts). */
function draftMap(layer: MapLayer): Prepared {
  const box = layer.native_extent ? lonLatBox(layer.native_extent) : undefined;
  const ring = box && [
    [box[0], box[1]],
    [box[2], box[1]],
    [box[2], box[3]],
    [box[0], box[3]],
    [box[0], box[1]],
  ];
  return {
    data: {
      source: {
        type: 'geojson',
        data: {
          type: 'FeatureCollection',
          features: ring
            ? [{ type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [ring] } }]
            : [],
        },
      },
      layers: defaultLayers('Polygon', undefined, '#0b5cad'),
      ...(box ? { box } : {}),
    },
    notes: [
      'A draft (disabled) layer is not served by the OGC API, so the map shows only its extent. Enable it to see its features.',
    ],
  };
}

/**
 * Reads what the layer map needs from the data plane: the TileJSON (or, when the workspace serves
 * no vector tiles, a page of features), the default style, the collection's box.
 */
export async function prepareLayerMap(workspace: string, layer: MapLayer): Promise<Prepared> {
  if (!layer.enabled) return draftMap(layer);
  const origin = location.origin;
  const urls = collectionUrls(origin, workspace, layer.public_id);
  const notes: string[] = [];
  const native = layer.native_extent;
  const nativeBox = native && LON_LAT.has(native.srid) ? lonLatBox(native) : undefined;

  const tilesOff = await tilesOffReason(workspace);
  const [tileJson, items, style, collection] = await Promise.all([
    tilesOff ? undefined : getJson(urls.tileJson),
    tilesOff ? getJson(`${urls.items}?limit=${ITEMS_LIMIT}`) : undefined,
    layer.default_style ? getJson(styleUrl(origin, workspace, layer.default_style)) : undefined,
    nativeBox ? undefined : getJson(urls.collection),
  ]);

  let source: SourceSpecification;
  let maxZoom: number | undefined;
  if (tilesOff) {
    const features = items?.ok ? (items.body as { features?: unknown[] }).features : undefined;
    const count = Array.isArray(features) ? features.length : 0;
    notes.push(
      items?.ok
        ? `${tilesOff}, so the map draws ${count === ITEMS_LIMIT ? `the first ${count}` : `its ${count}`} features from OGC API Features instead.`
        : `${tilesOff}, and its features could not be read from OGC API Features (${items?.reason ?? 'not asked'}).`,
    );
    source = {
      type: 'geojson',
      data: { type: 'FeatureCollection', features: (features ?? []) as GeoJSON.Feature[] },
    };
  } else {
    let tiles = tileJson?.ok ? tileJsonSource(tileJson.body, urls.tileJson) : undefined;
    if (!tiles) {
      notes.push(
        `The TileJSON could not be read (${tileJson?.ok ? 'it lists no tiles' : tileJson?.reason}); the map reads the tiles from their URL template.`,
      );
      tiles = { type: 'vector', tiles: [urls.tiles], minzoom: 0, maxzoom: 16 };
    }
    source = tiles;
    if (tiles.maxzoom !== undefined) maxZoom = Math.max(tiles.maxzoom, 1);
  }

  let layers: LayerSpecification[] = [];
  if (layer.default_style && style) {
    if (style.ok) {
      layers = collectionLayers(style.body, layer.public_id);
      if (layers.length > 0) notes.push(`Drawn with its default style, ${layer.default_style}.`);
      else
        notes.push(
          `Its default style, ${layer.default_style}, draws nothing of ${layer.public_id} that the console can show (no fill, line or circle layer of it), so the default style is used.`,
        );
    } else
      notes.push(
        `Its default style, ${layer.default_style}, could not be read (${style.reason}), so the default style is used.`,
      );
  }
  if (layers.length === 0) {
    layers = defaultLayers(layer.geometry_type, layer.public_id);
    const kinds = geometryKinds(layer.geometry_type);
    if (!layer.default_style)
      notes.push(
        kinds.length === 1
          ? `Drawn with the default style for ${KIND_WORDS[kinds[0] as keyof typeof KIND_WORDS]}.`
          : 'Drawn with the default style (points, lines and polygons: the geometry type is not known).',
      );
  }
  if (source.type === 'geojson') layers = onGeoJson(layers);

  let box = nativeBox;
  if (!box && collection?.ok) box = collectionBox(collection.body);
  if (!box && native) box = lonLatBox(native);
  if (!box && source.type === 'vector' && source.bounds) box = source.bounds as Box;
  if (!box) notes.push('The extent is not known, so the map shows the whole world.');

  return {
    data: { source, layers, ...(box ? { box } : {}), ...(maxZoom ? { maxZoom } : {}) },
    notes,
    ...(tilesOff ? { tilesOff: true as const } : {}),
  };
}
