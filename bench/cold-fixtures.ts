/** What the cold requests' preparation makes things from: files, bodies, and the shapes of what it made. */
import { randomUUID } from 'node:crypto';
import { writeArrayBuffer } from 'geotiff';
import { mapboxStyleBody } from '#api/examples.ts';
import { routes } from '#api/routes.ts';

export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** A single-band EPSG:4326 GeoTIFF of 4×2 pixels of 0.5° whose upper-left corner is (x, y). */
export function tiff(x: number, y: number): Buffer {
  return Buffer.from(
    writeArrayBuffer(new Array(8).fill(1), {
      width: 4,
      height: 2,
      ModelPixelScale: [0.5, 0.5, 0],
      ModelTiepoint: [0, 0, 0, x, y, 0],
      GeographicTypeGeoKey: 4326,
      GTModelTypeGeoKey: 2,
      GTRasterTypeGeoKey: 1,
    } as never),
  );
}

/** A GeoJSON FeatureCollection of `n` points (an import's file). */
export function points(n: number): Buffer {
  const features = Array.from({ length: n }, (_, i) => ({
    type: 'Feature',
    properties: { name: `P${i}`, rank: i },
    geometry: { type: 'Point', coordinates: [6 + i / 100, 46 + i / 100] },
  }));
  return Buffer.from(JSON.stringify({ type: 'FeatureCollection', features }));
}

export const short = () => randomUUID().slice(0, 8);

export interface Fixed {
  ws: string;
  wsName: string;
  service: string;
  /** A second PostGIS service of the workspace (updateService changes it). */
  spare: string;
  spareName: string;
  layer: string;
  layerPublicId: string;
  group: string;
  style: string;
  asset: string;
  apiKey: string;
  role: string;
  mapping: string;
  mosaic: string;
  granule: string;
  deletion: string;
  /** An import in ready_to_publish (preview, get, history). */
  /** An import awaiting its plan (get, history). */
  waiting: string;
  /** An import loaded, ready to publish (preview); an Error when the host could not load one. */
  staged: string | Error;
  importPlan: unknown;
  sessionToken: string;
  /** The embedded PostGIS as a service's connection (its demo role, no TLS). */
  connection: Record<string, unknown>;
}

/** Throwaway items of one run: each is used up (deleted, revoked, ended, moved on) by its request. */
export interface PerRun {
  workspace: string;
  service: string;
  layer: string;
  group: string;
  style: string;
  asset: string;
  apiKey: string;
  apiKeyRevoked: string;
  role: string;
  policy: string;
  mapping: string;
  globalMapping: string;
  tileMatrixSet: string;
  granule: string;
  harvestFile: string;
  /** A mosaic and a workspace of this run's own: a cancelled job stays "cancelling" (its workflow never runs), one per mosaic or workspace may be unfinished. */
  jobMosaic: string;
  jobWorkspace: string;
  /** Browser sessions: their headers (cookie and CSRF) and ids. */
  logout: Record<string, string>;
  refresh: Record<string, string>;
  revoke: string;
  imports: {
    created: string;
    uploaded: string;
    awaitingPlan: string;
    ready: string | Error;
    published: string | Error;
    failed: string | Error;
  };
}

export function sessionHeaders(cookies: string[]): Record<string, string> {
  const jar = Object.fromEntries(cookies.map((c) => c.split(';')[0]?.split('=') as [string, string]));
  return {
    Cookie: `__Host-session=${jar['__Host-session']}; csrf_token=${jar.csrf_token}`,
    'X-CSRF-Token': jar.csrf_token as string,
  };
}

/** The tile matrix set example's shape under another id. */
export function tileMatrixSet(id: string) {
  const example = routes.find((r) => r.operationId === 'putTileMatrixSet')?.examples?.request as Record<
    string,
    unknown
  >;
  return { ...example, id };
}

/** A style of the Mapbox example with only its line layers, named `name`. */
export const styleBody = (name: string) => ({
  name,
  format: 'mapbox',
  body: { ...mapboxStyleBody, layers: mapboxStyleBody.layers.filter((l) => l.type === 'line') },
});
