/**
 * A small MapLibre map of a bounding box: the box as a polygon on a blank style (no tiles, no
 * network). MapLibre is imported only when a preview is shown, so it isn't in the first load.
 * Without WebGL (headless browsers, some remote desktops) the page says so and the numbers stay.
 *
 * Workers: the console's CSP allows workers only from blob: URLs, so MapLibre's worker (bundled by
 * Vite as a same-origin script) is started through a tiny blob worker that imports it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Extent {
  min_x: number;
  min_y: number;
  max_x: number;
  max_y: number;
  srid: number;
}

type Box = [number, number, number, number];

const R = 6378137;

/** The box in longitude/latitude, or undefined for a CRS the preview can't place. */
export function lonLatBox(extent: Extent): Box | undefined {
  const { min_x, min_y, max_x, max_y, srid } = extent;
  if (![min_x, min_y, max_x, max_y].every(Number.isFinite)) return undefined;
  if (srid === 4326 || srid === 4258 || srid === 4269) return [min_x, min_y, max_x, max_y];
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

type State = { kind: 'loading' } | { kind: 'map' } | { kind: 'fallback'; reason: string };

/** The extent as numbers, and as a map when the browser can draw one. */
export function ExtentPreview({ extent, label }: { extent: Extent; label: string }) {
  const container = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<State>({ kind: 'loading' });
  const box = lonLatBox(extent);
  const key = box?.join(',');

  useEffect(() => {
    if (!box) {
      setState({
        kind: 'fallback',
        reason: `the extent is in EPSG:${extent.srid}, and the preview places only EPSG:4326 and EPSG:3857 boxes`,
      });
      return;
    }
    const missing = webglMissing();
    if (missing) {
      setState({ kind: 'fallback', reason: missing });
      return;
    }
    let cancelled = false;
    let map: { remove(): void } | undefined;
    setState({ kind: 'loading' });
    void (async () => {
      try {
        const [maplibre, worker] = await Promise.all([
          import('maplibre-gl'),
          import('maplibre-gl/dist/maplibre-gl-worker.mjs?worker&url'),
          import('maplibre-gl/dist/maplibre-gl.css'),
        ]);
        const element = container.current;
        if (cancelled || !element) return;
        maplibre.setWorkerUrl(workerUrl(worker.default));
        const [minX, minY, maxX, maxY] = box;
        const ring = [
          [minX, minY],
          [maxX, minY],
          [maxX, maxY],
          [minX, maxY],
          [minX, minY],
        ];
        const created = new maplibre.Map({
          container: element,
          attributionControl: false,
          style: {
            version: 8,
            sources: {
              extent: {
                type: 'geojson',
                data: { type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [ring] } },
              },
            },
            layers: [
              { id: 'background', type: 'background', paint: { 'background-color': '#f4f6f8' } },
              {
                id: 'extent-fill',
                type: 'fill',
                source: 'extent',
                paint: { 'fill-color': '#0b5cad', 'fill-opacity': 0.2 },
              },
              {
                id: 'extent-line',
                type: 'line',
                source: 'extent',
                paint: { 'line-color': '#0b5cad', 'line-width': 2 },
              },
            ],
          },
          bounds: [
            [Math.max(-180, minX), clampLat(minY)],
            [Math.min(180, maxX), clampLat(maxY)],
          ],
          fitBoundsOptions: { padding: 24, maxZoom: 14 },
        });
        map = created;
        created.once('load', () => {
          if (!cancelled) setState({ kind: 'map' });
        });
        created.on('error', (event) => {
          if (!cancelled)
            setState({
              kind: 'fallback',
              reason: `the map failed: ${event.error?.message ?? 'unknown error'}`,
            });
        });
      } catch (error) {
        if (!cancelled)
          setState({
            kind: 'fallback',
            reason: `the map could not start (${error instanceof Error ? error.message : String(error)})`,
          });
      }
    })();
    return () => {
      cancelled = true;
      map?.remove();
    };
  }, [key, extent.srid]);

  const f = (n: number) => (Math.abs(n) >= 1000 ? n.toFixed(1) : n.toFixed(5));
  return (
    <figure class="extent-preview">
      <figcaption>{label}</figcaption>
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
      {state.kind === 'fallback' ? (
        <p class="map-fallback" role="status">
          Map preview unavailable: {state.reason}. The extent is shown as numbers above.
        </p>
      ) : state.kind === 'loading' ? (
        <p role="status">Loading the map preview…</p>
      ) : null}
      <div ref={container} class="map" data-map-state={state.kind} hidden={state.kind === 'fallback'} />
    </figure>
  );
}
