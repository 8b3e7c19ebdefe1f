/**
 * The console's map: MapLibre GL over an offline base map (Natural Earth land and borders, bundled;
 * no tile, glyph or sprite request leaves the console's origin), one data source above it, fitted to
 * its box. MapLibre is imported only when a map is shown, so it isn't in the first load. Without
 * WebGL (some headless browsers, remote desktops) the page says so and the numbers stay.
 *
 * Workers: the console's CSP allows workers only from blob: URLs, so MapLibre's worker (bundled by
 * Vite as a same-origin script) is started through a tiny blob worker that imports it.
 *
 * The map element says how far it got, for people's assistive tools and for the browser tests:
 * `data-map-state` (loading | map | fallback), and once MapLibre is idle with the data source
 * loaded `data-map-idle="true"`, `data-rendered-features` (features of the data drawn in view) and
 * `data-data-box` (the data's box in CSS pixels of the map: left, top, right, bottom).
 */
import type { LayerSpecification, SourceSpecification } from '@maplibre/maplibre-gl-style-spec';
import { useEffect, useRef, useState } from 'preact/hooks';
import { basemap } from '../basemap.ts';
import { type Box, DATA_SOURCE } from '../layer-style.ts';
import '../map.css';

export interface Extent {
  min_x: number;
  min_y: number;
  max_x: number;
  max_y: number;
  srid: number;
}

const R = 6378137;

/** Geographic CRSs whose axes the map can take as longitude/latitude. */
export const LON_LAT = new Set([4326, 4258, 4269]);

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
export function DataMap({
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
