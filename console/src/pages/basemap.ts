/**
 * The offline base map under every console map: land and country borders from Natural Earth
 * (1:110m, `world-atlas` 2.0.2, public domain data), bundled with the console and turned into
 * GeoJSON in the browser. Nothing is fetched from elsewhere: no tiles, glyphs or sprites.
 */
import type { LayerSpecification, SourceSpecification } from '@maplibre/maplibre-gl-style-spec';
import type { mesh as meshOf } from 'topojson-client';
import { BORDER, LAND, WATER } from './layer-style.ts';

type Topology = Parameters<typeof meshOf>[0];
type TopologyObject = NonNullable<Parameters<typeof meshOf>[1]>;

export interface Basemap {
  sources: Record<string, SourceSpecification>;
  layers: LayerSpecification[];
}

let loaded: Promise<Basemap> | undefined;

async function build(): Promise<Basemap> {
  const [{ feature, mesh }, world] = await Promise.all([
    import('topojson-client'),
    import('world-atlas/countries-110m.json'),
  ]);
  const topology = world.default as unknown as Topology;
  const countries = topology.objects.countries as TopologyObject;
  return {
    sources: {
      // The countries, not the merged `land` object: MapLibre's tiling of that one huge polygon
      // leaves holes in some tiles (seen west of Greenwich at zoom 3).
      'basemap-land': { type: 'geojson', data: feature(topology, countries) },
      'basemap-borders': {
        type: 'geojson',
        data: mesh(topology, countries, (a, b) => a !== b),
      },
    },
    layers: [
      { id: 'basemap-water', type: 'background', paint: { 'background-color': WATER } },
      { id: 'basemap-land', type: 'fill', source: 'basemap-land', paint: { 'fill-color': LAND } },
      {
        id: 'basemap-borders',
        type: 'line',
        source: 'basemap-borders',
        paint: { 'line-color': BORDER, 'line-width': 0.75 },
      },
    ],
  };
}

/** The base map's sources and layers (built once per page load). */
export function basemap(): Promise<Basemap> {
  loaded ??= build().catch((error) => {
    loaded = undefined;
    throw error;
  });
  return loaded;
}
