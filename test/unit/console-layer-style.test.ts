/**
 * What the console's layer map draws, as data: the default style by geometry type (valid by the
 * MapLibre style spec), the layers of a workspace style that draw one collection, the boxes it fits
 * to, and the OGC URLs and GDAL command the layer page lists.
 */
import { validateStyleMin } from '@maplibre/maplibre-gl-style-spec';
import { describe, expect, it } from 'vitest';
import {
  collectionBox,
  collectionLayers,
  collectionUrls,
  DATA_SOURCE,
  defaultLayers,
  featuresBox,
  gdalCommand,
  geometryKinds,
  ogcApiUrl,
  styleUrl,
} from '../../console/src/pages/layer-style.ts';

const styleOf = (layers: unknown[]) => ({
  version: 8,
  sources: { [DATA_SOURCE]: { type: 'vector', tiles: ['https://h/{z}/{y}/{x}'] } },
  layers,
});

describe('the default style of a layer map', () => {
  it.each([
    ['Point', ['point']],
    ['MULTIPOINT', ['point']],
    ['LineString', ['line']],
    ['MultiLineString', ['line']],
    ['POLYGON', ['polygon']],
    ['MultiPolygonZ', ['polygon']],
    ['Geometry', ['point', 'line', 'polygon']],
    ['GeometryCollection', ['point', 'line', 'polygon']],
    [undefined, ['point', 'line', 'polygon']],
  ])('draws %s as %j', (type, kinds) => {
    expect(geometryKinds(type)).toEqual(kinds);
  });

  it.each([
    ['Point', ['circle']],
    ['LineString', ['line']],
    ['Polygon', ['fill', 'line']],
    [undefined, ['fill', 'line', 'line', 'circle']],
  ])('gives %s the layers %j, each filtered by geometry type and valid by the style spec', (type, types) => {
    const layers = defaultLayers(type, 'places');
    expect(layers.map((l) => l.type)).toEqual(types);
    for (const layer of layers) {
      expect(layer).toMatchObject({ source: DATA_SOURCE, 'source-layer': 'places' });
      expect(JSON.stringify((layer as { filter?: unknown }).filter)).toContain('geometry-type');
    }
    expect(validateStyleMin(styleOf(layers) as never)).toEqual([]);
  });
});

describe('the layers of a workspace style that draw one collection', () => {
  const style = {
    version: 8,
    sources: {
      api: { type: 'vector', url: 'https://h/workspaces/w/ogc/tiles/WebMercatorQuad?f=tilejson' },
      pictures: { type: 'raster', tiles: ['https://h/{z}/{x}/{y}.png'] },
    },
    glyphs: 'https://fonts.example/{fontstack}/{range}.pbf',
    layers: [
      { id: 'paper', type: 'background', paint: { 'background-color': '#fff' } },
      {
        id: 'fill',
        type: 'fill',
        source: 'api',
        'source-layer': 'parcels',
        filter: ['==', ['get', 'kind'], 'a'],
        paint: { 'fill-color': '#123456', 'fill-pattern': 'hatch' },
      },
      {
        id: 'label',
        type: 'symbol',
        source: 'api',
        'source-layer': 'parcels',
        layout: { 'text-field': 'x' },
      },
      { id: 'roads', type: 'line', source: 'api', 'source-layer': 'roads' },
      { id: 'photo', type: 'raster', source: 'pictures' },
    ],
  };

  it('keeps its fill, line and circle layers of the collection on the map source, without sprites or glyphs', () => {
    const layers = collectionLayers(style, 'parcels');
    expect(layers).toEqual([
      {
        id: 'style-0-fill',
        type: 'fill',
        source: DATA_SOURCE,
        'source-layer': 'parcels',
        filter: ['==', ['get', 'kind'], 'a'],
        paint: { 'fill-color': '#123456' },
      },
    ]);
    expect(validateStyleMin(styleOf(layers) as never)).toEqual([]);
  });

  it.each([
    ['no layer of the collection', style, 'places'],
    ['not a style', 'nonsense', 'parcels'],
    ['no layers', { version: 8, sources: {} }, 'parcels'],
  ])('draws nothing from %s', (_what, body, collection) => {
    expect(collectionLayers(body, collection)).toEqual([]);
  });
});

describe('the boxes a map fits to', () => {
  it("reads a collection's first CRS84 bbox, 2D or 3D", () => {
    expect(collectionBox({ extent: { spatial: { bbox: [[-10, 40, 10, 55]] } } })).toEqual([-10, 40, 10, 55]);
    expect(collectionBox({ extent: { spatial: { bbox: [[-10, 40, 0, 10, 55, 9]] } } })).toEqual([
      -10, 40, 10, 55,
    ]);
    expect(collectionBox({ extent: {} })).toBeUndefined();
    expect(collectionBox({ extent: { spatial: { bbox: [['a', 1, 2, 3]] } } })).toBeUndefined();
  });

  it('bounds GeoJSON features of every geometry type, and nothing without coordinates', () => {
    expect(
      featuresBox([
        { geometry: { type: 'Point', coordinates: [2, 48] } },
        {
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 40],
                [5, 40],
                [5, 45],
                [0, 40],
              ],
            ],
          },
        },
        {
          geometry: {
            type: 'GeometryCollection',
            geometries: [
              {
                type: 'LineString',
                coordinates: [
                  [-3, 50],
                  [-1, 52],
                ],
              },
            ],
          },
        },
        { geometry: null },
      ]),
    ).toEqual([-3, 40, 5, 52]);
    expect(featuresBox([{ geometry: null }])).toBeUndefined();
  });
});

describe('the OGC URLs a layer page lists', () => {
  it('names the collection, its items, tiles (z/y/x) and TileJSON, the style and the GDAL command', () => {
    const urls = collectionUrls('https://geo.example', 'my ws', 'parcels');
    expect(urls).toEqual({
      api: 'https://geo.example/workspaces/my%20ws/ogc',
      collection: 'https://geo.example/workspaces/my%20ws/ogc/collections/parcels',
      items: 'https://geo.example/workspaces/my%20ws/ogc/collections/parcels/items',
      tiles:
        'https://geo.example/workspaces/my%20ws/ogc/collections/parcels/tiles/WebMercatorQuad/{z}/{y}/{x}',
      tileJson:
        'https://geo.example/workspaces/my%20ws/ogc/collections/parcels/tiles/WebMercatorQuad?f=tilejson',
    });
    expect(ogcApiUrl('https://geo.example', 'ws')).toBe('https://geo.example/workspaces/ws/ogc');
    expect(styleUrl('https://geo.example', 'ws', 'red')).toBe(
      'https://geo.example/workspaces/ws/ogc/styles/red?f=mapbox',
    );
    expect(gdalCommand(urls, 'parcels')).toBe(
      'ogrinfo OAPIF:https://geo.example/workspaces/my%20ws/ogc parcels',
    );
    expect(gdalCommand(urls, "it's")).toBe(
      "ogrinfo OAPIF:https://geo.example/workspaces/my%20ws/ogc 'it'\\''s'",
    );
  });
});
