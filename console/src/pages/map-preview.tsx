/**
 * The console's maps: MapLibre GL over an offline base map (Natural Earth land and borders, bundled;
 * no tile, glyph or sprite request leaves the console's origin). The layer page draws a layer from
 * its own vector tiles (the workspace's OGC API, DESIGN §8a), styled by the layer's default Mapbox
 * style or by a default for its geometry type, fitted to its extent; an import's preview draws its
 * staged features. MapLibre is imported only when a map is shown, so it isn't in the first load.
 * Without WebGL (some headless browsers, remote desktops) the page says so and the numbers stay.
 *
 * Workers: the console's CSP allows workers only from blob: URLs, so MapLibre's worker (bundled by
 * Vite as a same-origin script) is started through a tiny blob worker that imports it.
 *
 * The map element says how far it got, for people's assistive tools and for the browser tests:
 * `data-map-state` (loading | map | fallback), and once MapLibre is idle with the data source
 * loaded `data-map-idle="true"`, `data-rendered-features` (features of the data drawn in view) and
 * `data-data-box` (the data's box in CSS pixels of the map: left, top, right, bottom).
 */
import type {
  LayerSpecification,
  SourceSpecification,
  VectorSourceSpecification,
} from '@maplibre/maplibre-gl-style-spec';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { getJson } from '../ogc-client.ts';
import { paths } from '../routes.ts';
import { basemap } from './basemap.ts';
import {
  type Box,
  collectionBox,
  collectionLayers,
  collectionUrls,
  DATA_SOURCE,
  defaultLayers,
  featuresBox,
  geometryKinds,
  styleUrl,
  TILE_MATRIX_SET,
} from './layer-style.ts';
import './map.css';

export interface Extent {
  min_x: number;
  min_y: number;
  max_x: number;
  max_y: number;
  srid: number;
}

const R = 6378137;

/** Geographic CRSs whose axes the map can take as longitude/latitude. */
const LON_LAT = new Set([4326, 4258, 4269]);

/** The box in longitude/latitude, or undefined for a CRS the console can't place by itself. */
export function lonLatBox(extent: Extent): Box | undefined {
  const { min_x, min_y, max_x, max_y, srid } = extent;
  if (![min_x, min_y, max_x, max_y].every(Number.isFinite)) return undefined;
  if (LON_LAT.has(srid)) return [min_x, min_y, max_x, max_y];
  if (srid === 3857 || srid === 900913) {
    const lon = (x: number) => (x / R) * (180 / Math.PI);
    const lat = (y: number) => (2 * Math.atan(Math.exp(y / R)) - Math.PI / 2) * (180 / Math.PI);
    return [lon(min_x), lat(min_y), lon(max_x), lat(max_y)];
  }
  return undefined;
}

/** Why this browser can't draw the map, or undefined when it has WebGL. */
function webglMissing(): string | undefined {
  try {
    const canvas = document.createElement('canvas');
    if (canvas.getContext('webgl2') || canvas.getContext('webgl')) return undefined;
    return 'this browser offers no WebGL (a headless or GPU-less browser often has none), which the map needs';
  } catch (error) {
    return `WebGL could not start (${error instanceof Error ? error.message : String(error)})`;
  }
}

let workerBlobUrl: string | undefined;

/**
 * A blob: URL of a classic worker that loads MapLibre's worker (bundled by Vite as a classic
 * script) from the console's own origin. MapLibre starts a URL ending in `.cjs` as a classic
 * worker; the fragment says so without changing what the blob holds. (A module blob worker that
 * imports the script fails to start in Chromium under the console's CSP.)
 */
function workerUrl(scriptUrl: string): string {
  if (!workerBlobUrl) {
    const absolute = new URL(scriptUrl, location.href).href;
    const blob = new Blob([`importScripts(${JSON.stringify(absolute)});\n`], { type: 'text/javascript' });
    workerBlobUrl = `${URL.createObjectURL(blob)}#maplibre-worker.cjs`;
  }
  return workerBlobUrl;
}

const clampLat = (lat: number) => Math.max(-85, Math.min(85, lat));
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What one map draws above the base map: one data source, its layers, the box to fit. */
export interface MapData {
  source: SourceSpecification;
  layers: LayerSpecification[];
  box?: Box;
  /** The deepest zoom the fit may reach (a point's box has no size). */
  maxZoom?: number;
}

type State = { kind: 'loading' } | { kind: 'map' } | { kind: 'fallback'; reason: string };

interface Idle {
  rendered: number;
  box?: string;
}

/**
 * A MapLibre map of `data` over the base map. It is made once per mount: give it a `key` that
 * changes with the data. `onTileError` hears each tile or source the map could not read.
 */
function DataMap({
  data,
  label,
  without,
  onTileError,
}: {
  data: MapData;
  /** The map's accessible name. */
  label: string;
  /** What the page still shows when there is no map ("The extent is shown as numbers above."). */
  without: string;
  onTileError?: (reason: string) => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [idle, setIdle] = useState<Idle>();
  const reportTileError = useRef(onTileError);
  reportTileError.current = onTileError;

  useEffect(() => {
    const missing = webglMissing();
    if (missing) {
      setState({ kind: 'fallback', reason: missing });
      return;
    }
    let cancelled = false;
    let map: import('maplibre-gl').Map | undefined;
    void (async () => {
      try {
        const [maplibre, worker, base] = await Promise.all([
          import('maplibre-gl'),
          import('maplibre-gl/dist/maplibre-gl-worker.mjs?worker&url'),
          basemap(),
          import('maplibre-gl/dist/maplibre-gl.css'),
        ]);
        const element = container.current;
        if (cancelled || !element) return;
        maplibre.setWorkerUrl(workerUrl(worker.default));
        const box = data.box;
        const created = new maplibre.Map({
          container: element,
          // Not compact: the compact button's icon (like every MapLibre control icon) is a data: URL,
          // which the console's CSP refuses; so the map has no controls (keyboard, drag, Ctrl+wheel).
          attributionControl: { compact: false, customAttribution: 'Base map: Natural Earth' },
          cooperativeGestures: true,
          locale: { 'Map.Title': label },
          style: {
            version: 8,
            sources: { ...base.sources, [DATA_SOURCE]: data.source },
            layers: [...base.layers, ...data.layers],
          },
          ...(box
            ? {
                bounds: [
                  [Math.max(-180, box[0]), clampLat(box[1])],
                  [Math.min(180, box[2]), clampLat(box[3])],
                ],
                fitBoundsOptions: { padding: 24, maxZoom: data.maxZoom ?? 14 },
              }
            : { center: [0, 20], zoom: 0.5 }),
        });
        map = created;
        const dataLayers = data.layers.map((layer) => layer.id);
        created.once('load', () => {
          if (!cancelled) setState({ kind: 'map' });
        });
        const busy = () => setIdle(undefined);
        created.on('movestart', busy);
        created.on('dataloading', busy);
        created.on('idle', () => {
          if (cancelled || !created.getSource(DATA_SOURCE) || !created.isSourceLoaded(DATA_SOURCE)) return;
          const rendered = created.queryRenderedFeatures({ layers: dataLayers }).length;
          let drawn: string | undefined;
          if (box) {
            const nw = created.project([box[0], clampLat(box[3])]);
            const se = created.project([box[2], clampLat(box[1])]);
            drawn = [nw.x, nw.y, se.x, se.y].map((v) => v.toFixed(1)).join(',');
          }
          setIdle({ rendered, ...(drawn ? { box: drawn } : {}) });
        });
        created.on('error', (event) => {
          if (cancelled) return;
          const { error, sourceId } = event as unknown as {
            error?: { message?: string; status?: number };
            sourceId?: string;
          };
          const reason = `${error?.status ? `HTTP ${error.status}: ` : ''}${error?.message ?? 'unknown error'}`;
          if (sourceId || created.loaded()) reportTileError.current?.(reason);
          else setState({ kind: 'fallback', reason: `the map failed: ${reason}` });
        });
      } catch (error) {
        if (!cancelled) setState({ kind: 'fallback', reason: `the map could not start (${message(error)})` });
      }
    })();
    return () => {
      cancelled = true;
      map?.remove();
    };
  }, []);

  return (
    <>
      {state.kind === 'fallback' ? (
        <p class="map-fallback" role="status">
          Map preview unavailable: {state.reason}. {without}
        </p>
      ) : state.kind === 'loading' ? (
        <p role="status">Loading the map preview…</p>
      ) : null}
      <div
        ref={container}
        class="map data-map"
        data-map-state={state.kind}
        data-map-idle={idle ? 'true' : 'false'}
        data-rendered-features={idle?.rendered}
        data-data-box={idle?.box}
        hidden={state.kind === 'fallback'}
      />
    </>
  );
}

/** The extent as numbers (west, south, east, north and the CRS). */
function ExtentFacts({ extent }: { extent: Extent }) {
  const f = (n: number) => (Math.abs(n) >= 1000 ? n.toFixed(1) : n.toFixed(5));
  return (
    <dl class="facts">
      <dt>West (min x)</dt>
      <dd>{f(extent.min_x)}</dd>
      <dt>South (min y)</dt>
      <dd>{f(extent.min_y)}</dd>
      <dt>East (max x)</dt>
      <dd>{f(extent.max_x)}</dd>
      <dt>North (max y)</dt>
      <dd>{f(extent.max_y)}</dd>
      <dt>CRS</dt>
      <dd>EPSG:{extent.srid}</dd>
    </dl>
  );
}

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

type Prepared = { data: MapData; notes: string[]; tilesOff?: true };

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
async function prepareLayerMap(workspace: string, layer: MapLayer): Promise<Prepared> {
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

/**
 * The layer drawn from its own vector tiles over the base map, fitted to its extent, with the
 * extent as numbers (which stay when the browser can't draw a map).
 */
export function LayerMap({ workspace, layer }: { workspace: string; layer: MapLayer }) {
  const [prepared, setPrepared] = useState<Prepared>();
  const [tileError, setTileError] = useState<string>();
  const key = [
    workspace,
    layer.public_id,
    layer.enabled,
    layer.geometry_type,
    layer.default_style,
    JSON.stringify(layer.native_extent ?? null),
  ].join('|');
  useEffect(() => {
    let cancelled = false;
    setPrepared(undefined);
    setTileError(undefined);
    void prepareLayerMap(workspace, layer).then((result) => {
      if (!cancelled) setPrepared(result);
    });
    return () => {
      cancelled = true;
    };
  }, [key]);

  return (
    <figure class="extent-preview">
      <figcaption>{`${layer.public_id} on the map`}</figcaption>
      {layer.native_extent ? <ExtentFacts extent={layer.native_extent} /> : null}
      {prepared ? (
        <>
          <DataMap
            key={key}
            data={prepared.data}
            label={`Map of ${layer.public_id}`}
            without={
              layer.native_extent
                ? 'The extent is shown as numbers above.'
                : 'The OGC API URLs below still serve the layer.'
            }
            onTileError={(reason) => setTileError((seen) => seen ?? reason)}
          />
          <ul class="map-notes">
            {prepared.notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
            {prepared.tilesOff ? (
              <li>
                <a href={paths.settings(workspace)}>Turn on OGC API Tiles in the workspace's settings</a> to
                draw the layer from its vector tiles.
              </li>
            ) : null}
            {tileError ? <li role="status">Some of the map's data could not be read: {tileError}.</li> : null}
          </ul>
        </>
      ) : (
        <p role="status">Loading the map preview…</p>
      )}
    </figure>
  );
}

/** GeoJSON features in longitude/latitude (an import's staged features) on the base map. */
export function FeaturesMap({
  features,
  label,
}: {
  features: readonly { geometry?: unknown; properties?: unknown }[];
  label: string;
}) {
  const box = featuresBox(features);
  const [tileError, setTileError] = useState<string>();
  const key = JSON.stringify(box ?? null) + features.length;
  return (
    <figure class="extent-preview">
      <figcaption>{label}</figcaption>
      <DataMap
        key={key}
        label={label}
        without="The features are listed in the table below."
        data={{
          source: {
            type: 'geojson',
            data: {
              type: 'FeatureCollection',
              features: features
                .filter((f) => f.geometry)
                .map((f) => ({
                  type: 'Feature',
                  properties: {},
                  geometry: f.geometry as GeoJSON.Geometry,
                })),
            },
          },
          layers: defaultLayers(undefined),
          ...(box ? { box } : {}),
        }}
        onTileError={(reason) => setTileError((seen) => seen ?? reason)}
      />
      {tileError ? <p role="status">The features could not be drawn: {tileError}.</p> : null}
    </figure>
  );
}
