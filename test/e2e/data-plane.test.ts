/**
 * The data plane end to end on the shared local host (issue #24, ADRs 0120, 0121, 0123): OGC API
 * Features and Tiles of every enabled layer, under the catalog's access rules, live, with OGC
 * exception bodies for bad input. Test names carry the abstract test suite ids they follow
 * (OGC 17-069r4 Annex A `/ats/core/...`, 18-058r1 `/ats/crs/...`, 20-057 `/ats/...`).
 */
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { beforeAll, describe, expect, it } from 'vitest';
import { asSuperAdmin, call } from '../support/client.ts';
import {
  changeLayer,
  expectException,
  hostPostgis,
  ogc,
  publishLayer,
  servedWorkspace,
  setSettings,
} from '../support/data-plane.ts';
import { bearer, createKey, token, withKey } from '../support/fixtures.ts';

interface Served {
  ws: { id: string; name: string };
  service: { id: string; name: string };
  places: { id: string; public_id: string };
  roads: { id: string; public_id: string };
  parcels: { id: string; public_id: string };
  viewer: string;
}

let s: Served;

beforeAll(async () => {
  const { ws, service } = await servedWorkspace();
  const places = await publishLayer(ws.id, service.id, { source_layer: 'public.places', public: true });
  const roads = await publishLayer(ws.id, service.id, { source_layer: 'public.roads' });
  const parcels = await publishLayer(ws.id, service.id, { source_layer: 'public.parcels', public: true });
  await setSettings(ws.id, 'ogc-tiles', { enabled: true });
  const viewer = (await createKey(ws.id, 'viewer')).key;
  s = { ws, service, places, roads, parcels, viewer };
}, 120_000);

describe('OGC API Features: core (17-069r4 Annex A)', () => {
  it('/ats/core/root-op, /ats/core/root-success: the landing page links self, service-desc, conformance, data', async () => {
    const res = await ogc(s.ws.name, '', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    const rels = (res.body.links as { rel: string; href: string }[]).map((l) => l.rel);
    expect(rels).toEqual(expect.arrayContaining(['self', 'service-desc', 'conformance', 'data']));
    for (const link of res.body.links) expect(link.href).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/workspaces\//);
    expect(res.body.description).toMatch(/not served/);
  });

  it('/ats/core/api-definition-op, /ats/oas30/oas-definition-1: /api is an OpenAPI 3.0 document of the data routes', async () => {
    const res = await ogc(s.ws.id, '/api', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/vnd\.oai\.openapi\+json/);
    expect(res.body.openapi).toMatch(/^3\.0\./);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/', '/conformance', '/collections', '/collections/{collectionId}/items']),
    );
  });

  it('/ats/core/conformance-op, /ats/core/conformance-success: declares core, geojson, oas30, crs and tiles classes', async () => {
    const res = await ogc(s.ws.id, '/conformance', withKey(s.viewer));
    expect(res.status).toBe(200);
    expect(res.body.conformsTo).toEqual(
      expect.arrayContaining([
        'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
        'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
        'http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs',
        'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core',
        'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt',
      ]),
    );
  });

  it('/ats/core/fc-md-op, /ats/core/fc-md-success, /ats/core/sfc-md-extent: collections with ids, extents and links', async () => {
    const res = await ogc(s.ws.id, '/collections', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    const ids = (res.body.collections as { id: string }[]).map((c) => c.id);
    expect(ids).toEqual(['parcels', 'places', 'roads']);
    const places = res.body.collections.find((c: { id: string }) => c.id === 'places');
    const [w, south, e, n] = places.extent.spatial.bbox[0];
    expect(w).toBeLessThan(e);
    expect(south).toBeLessThan(n);
    expect(places.links.map((l: { rel: string }) => l.rel)).toEqual(
      expect.arrayContaining(['self', 'items']),
    );
  });

  it('/ats/core/sfc-md-op, /ats/crs/crs-collection: one collection lists CRS84, EPSG:4326, EPSG:3857 and its storageCrs', async () => {
    const res = await ogc(s.ws.id, '/collections/roads', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    expect(res.body.crs).toEqual(
      expect.arrayContaining([
        'http://www.opengis.net/def/crs/OGC/1.3/CRS84',
        'http://www.opengis.net/def/crs/EPSG/0/4326',
        'http://www.opengis.net/def/crs/EPSG/0/3857',
      ]),
    );
    expect(res.body.storageCrs).toBe('http://www.opengis.net/def/crs/EPSG/0/4326');
  });

  it('/ats/core/fc-op, /ats/core/fc-limit-response-1, /ats/core/fc-response: items pages by next links until every feature is read', async () => {
    const seen = new Set<number>();
    let path: string | undefined = '/collections/roads/items?limit=70';
    let pages = 0;
    while (path) {
      const res = await ogc(s.ws.id, path, withKey(s.viewer));
      expect(res.status, res.text).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/geo\+json/);
      expect(res.headers['content-crs']).toBe('<http://www.opengis.net/def/crs/OGC/1.3/CRS84>');
      expect(res.body.type).toBe('FeatureCollection');
      expect(res.body.numberReturned).toBe(res.body.features.length);
      expect(res.body.features.length).toBeLessThanOrEqual(70);
      for (const f of res.body.features) seen.add(f.id);
      const next = (res.body.links as { rel: string; href: string }[]).find((l) => l.rel === 'next');
      path = next ? next.href.slice(next.href.indexOf('/ogc') + 4) : undefined;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen.size).toBe(200);
  });

  it('/ats/core/fc-bbox-response, /ats/crs/fc-bbox-crs-parameter: bbox filters, in CRS84 and in EPSG:3857', async () => {
    const all = await ogc(s.ws.id, '/collections/places/items?limit=1000', withKey(s.viewer));
    const inBox = all.body.features.filter((f: { geometry: { coordinates: number[] } }) => {
      const [x, y] = f.geometry.coordinates as [number, number];
      return x >= -5 && x <= 0 && y >= 45 && y <= 50;
    }).length;
    expect(inBox).toBeGreaterThan(0);
    const boxed = await ogc(
      s.ws.id,
      '/collections/places/items?limit=1000&bbox=-5,45,0,50',
      withKey(s.viewer),
    );
    expect(boxed.status, boxed.text).toBe(200);
    expect(boxed.body.features.length).toBe(inBox);
    const merc = await ogc(
      s.ws.id,
      `/collections/places/items?limit=1000&bbox=-556597.45,5621521.49,0,6446275.84&bbox-crs=${encodeURIComponent('http://www.opengis.net/def/crs/EPSG/0/3857')}`,
      withKey(s.viewer),
    );
    expect(merc.status, merc.text).toBe(200);
    expect(merc.body.features.length).toBe(inBox);
  });

  it('/ats/crs/fc-crs-valid-value: crs=EPSG:3857 answers metres with that Content-Crs', async () => {
    const uri = 'http://www.opengis.net/def/crs/EPSG/0/3857';
    const res = await ogc(
      s.ws.id,
      `/collections/places/items?limit=1&crs=${encodeURIComponent(uri)}`,
      withKey(s.viewer),
    );
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-crs']).toBe(`<${uri}>`);
    expect(Math.abs(res.body.features[0].geometry.coordinates[0])).toBeGreaterThan(1000);
  });

  it('/ats/core/f-op, /ats/core/f-success: one feature by id, with self and collection links', async () => {
    const res = await ogc(s.ws.id, '/collections/roads/items/7', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    expect(res.body.type).toBe('Feature');
    expect(res.body.id).toBe(7);
    expect(res.body.properties.name).toBe('Road 7');
    expect(res.body.links.map((l: { rel: string }) => l.rel)).toEqual(['self', 'collection']);
  });

  it('queryables (Part 3): a JSON Schema of the properties, and equality filters on them', async () => {
    const q = await ogc(s.ws.id, '/collections/roads/queryables', withKey(s.viewer));
    expect(q.status, q.text).toBe(200);
    expect(q.body.properties.class).toEqual({ title: 'class', type: 'string' });
    const res = await ogc(s.ws.id, '/collections/roads/items?class=motorway&limit=1000', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    expect(res.body.features.length).toBe(50);
    for (const f of res.body.features) expect(f.properties.class).toBe('motorway');
  });
});

describe('bad input: a 4xx OGC exception, never a 500', () => {
  const bad: [string, number][] = [
    ['/collections/places/items?bbox=1,2,3', 400],
    ['/collections/places/items?bbox=NaN,1,2,3', 400],
    ['/collections/places/items?bbox=0,50,10,40', 400],
    ['/collections/places/items?limit=0', 400],
    ['/collections/places/items?limit=abc', 400],
    ['/collections/places/items?crs=EPSG:9999999', 400],
    ['/collections/places/items?datetime=yesterday', 400],
    ['/collections/places/items?unknown=1', 400],
    ['/collections/places/items?next=garbage', 400],
    ['/collections/places/items?f=xml', 400],
    ['/collections/places/items/%00', 404],
    ['/collections/places/items/999999', 404],
    ['/collections/nope', 404],
    ['/collections/nope/items', 404],
    ['/collections/places/tiles/WebMercatorQuad/1/5/0', 404],
    ['/collections/places/tiles/WebMercatorQuad/25/0/0', 404],
    ['/collections/places/tiles/WebMercatorQuad/a/0/0', 400],
    ['/collections/places/tiles/WebMercatorQuad/-1/0/0', 404],
    ['/collections/places/tiles/NoSuchSet/0/0/0', 404],
    ['/tileMatrixSets/NoSuchSet', 404],
    ['/styles/nope', 404],
  ];
  it.each(bad)('GET %s → %i', async (path, status) => {
    const res = await ogc(s.ws.id, path, withKey(s.viewer));
    expectException(res, status);
  });

  it('a huge limit is lowered to the maximum (Part 1 allows fewer than asked)', async () => {
    const res = await ogc(s.ws.id, '/collections/places/items?limit=99999999', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    expect(res.body.numberReturned).toBe(300);
  });

  it('an unknown workspace is not served (404), with an OGC exception', async () => {
    expectException(await ogc('no-such-workspace-here', '/collections'), 404, 'not_served');
  });
});

describe('OGC API Tiles: vector tiles', () => {
  it('/tileMatrixSets lists WebMercatorQuad and WorldCRS84Quad; one set is its TMS 2.0 definition', async () => {
    const res = await ogc(s.ws.id, '/tileMatrixSets', withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    expect(res.body.tileMatrixSets.map((t: { id: string }) => t.id)).toEqual([
      'WebMercatorQuad',
      'WorldCRS84Quad',
    ]);
    const one = await ogc(s.ws.id, '/tileMatrixSets/WebMercatorQuad', withKey(s.viewer));
    expect(one.body.tileMatrices.length).toBeGreaterThan(20);
  });

  it('/conf/tileset/tileset-success: a tileset links its tile template; TileJSON 3.0 names the collection as its vector layer', async () => {
    const set = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad', withKey(s.viewer));
    expect(set.status, set.text).toBe(200);
    const item = set.body.links.find((l: { rel: string }) => l.rel === 'item');
    expect(item.href).toMatch(
      /\/collections\/roads\/tiles\/WebMercatorQuad\/\{tileMatrix\}\/\{tileRow\}\/\{tileCol\}$/,
    );
    const tj = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad?f=tilejson', withKey(s.viewer));
    expect(tj.body.tilejson).toBe('3.0.0');
    expect(tj.body.tiles[0]).toMatch(/\/\{z\}\/\{y\}\/\{x\}$/);
    expect(tj.body.vector_layers.map((l: { id: string }) => l.id)).toEqual(['roads']);
  });

  it('/conf/core/tc-op, /conf/core/tc-success, /conf/mvt: a collection tile is MVT with one layer named by the collection; the workspace tile has one layer per collection', async () => {
    // z4: the demo data lies around 10°W–10°E, 40–55°N; tile 4/5/7 covers 0–22.5°E, 40.9–55.8°N.
    const one = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(one.status, one.text).toBe(200);
    expect(one.headers['content-type']).toBe('application/vnd.mapbox-vector-tile');
    const tile = new VectorTile(new PbfReader(one.raw as Buffer));
    expect(Object.keys(tile.layers)).toEqual(['roads']);
    expect(tile.layers.roads?.length).toBeGreaterThan(0);
    const all = await ogc(s.ws.id, '/tiles/WebMercatorQuad/4/5/7', withKey(s.viewer));
    expect(all.status, all.text).toBe(200);
    const merged = new VectorTile(new PbfReader(all.raw as Buffer));
    expect(Object.keys(merged.layers).sort()).toEqual(['parcels', 'places', 'roads']);
    expect(merged.layers.roads?.length).toBe(tile.layers.roads?.length);
  });

  it('an empty tile is 204; a cached tile revalidates to 304 by its ETag', async () => {
    const empty = await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/0/0', withKey(s.viewer));
    expect(empty.status).toBe(204);
    const first = await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/4/5/7');
    expect(first.status).toBe(200);
    expect(first.headers['cache-control']).toMatch(/^public, max-age=\d+/);
    const again = await ogc(s.ws.id, '/collections/places/tiles/WebMercatorQuad/4/5/7', {
      'If-None-Match': first.headers.etag as string,
    });
    expect(again.status).toBe(304);
    expect(again.raw?.length).toBe(0);
  });
});

describe('OGC API Tiles: tileset lists and styles', () => {
  it('/conf/geodata-tilesets/desc-links, /conf/geodata-tilesets/operation: a collection links its tilesets; the list offers WebMercatorQuad', async () => {
    const collection = await ogc(s.ws.id, '/collections/roads', withKey(s.viewer));
    const link = collection.body.links.find((l: { rel: string }) => l.rel.endsWith('/tilesets-vector'));
    expect(link.href).toMatch(/\/collections\/roads\/tiles$/);
    const list = await ogc(s.ws.id, '/collections/roads/tiles', withKey(s.viewer));
    expect(list.status, list.text).toBe(200);
    expect(list.body.tilesets.map((t: { tileMatrixSetURI: string }) => t.tileMatrixSetURI)).toEqual([
      'http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad',
    ]);
    expect(list.body.tilesets[0].dataType).toBe('vector');
  });

  it('/conf/dataset-tilesets/operation, /conf/tilesets-list/tilesets-list-success: the workspace tilesets hold every readable collection', async () => {
    const landing = await ogc(s.ws.id, '', withKey(s.viewer));
    expect(landing.body.links.some((l: { rel: string }) => l.rel.endsWith('/tilesets-vector'))).toBe(true);
    const set = await ogc(s.ws.id, '/tiles/WebMercatorQuad', withKey(s.viewer));
    expect(set.status, set.text).toBe(200);
    expect(set.body.layers.map((l: { id: string }) => l.id)).toEqual(
      expect.arrayContaining(['parcels', 'places', 'roads']),
    );
    // Anonymous callers' tilesets hold the public collections only.
    await setSettings(s.ws.id, 'ogc-tiles', { public: true });
    try {
      const anon = await ogc(s.ws.id, '/tiles/WebMercatorQuad?f=tilejson');
      expect(anon.status, anon.text).toBe(200);
      expect(anon.body.vector_layers.map((l: { id: string }) => l.id).sort()).toEqual(['parcels', 'places']);
    } finally {
      await setSettings(s.ws.id, 'ogc-tiles', { public: false });
    }
  });

  it('a Mapbox style is served with its vector sources pointed at this API, unreadable layers left out', async () => {
    const style = {
      version: 8,
      sources: { demo: { type: 'vector', url: 'https://elsewhere.example/tiles.json' } },
      layers: [
        { id: 'roads-line', type: 'line', source: 'demo', 'source-layer': 'roads' },
        { id: 'places-dot', type: 'circle', source: 'demo', 'source-layer': 'places' },
      ],
    };
    const created = await call('POST', `/workspaces/${s.ws.id}/styles`, {
      headers: asSuperAdmin(),
      body: { name: 'demo-map', format: 'mapbox', body: JSON.stringify(style) },
    });
    expect(created.status, created.text).toBe(201);
    const list = await ogc(s.ws.id, '/styles', withKey(s.viewer));
    expect(list.body.styles.map((x: { id: string }) => x.id)).toContain('demo-map');
    const served = await ogc(s.ws.id, '/styles/demo-map?f=mapbox', withKey(s.viewer));
    expect(served.status, served.text).toBe(200);
    expect(served.body.sources.demo.url).toMatch(
      /\/workspaces\/[^/]+\/ogc\/tiles\/WebMercatorQuad\?f=tilejson$/,
    );
    expect(served.body.layers.map((l: { id: string }) => l.id)).toEqual(['roads-line', 'places-dot']);
    // Anonymous: only the public collection's layer is left.
    await setSettings(s.ws.id, 'ogc-tiles', { public: true });
    try {
      const anon = await ogc(s.ws.id, '/styles/demo-map?f=mapbox');
      expect(anon.body.layers.map((l: { id: string }) => l.id)).toEqual(['places-dot']);
    } finally {
      await setSettings(s.ws.id, 'ogc-tiles', { public: false });
    }
  });
});

describe('access: exactly the catalog rules (ADR 0120)', () => {
  it('anonymous: a public layer is readable; a private one is 401 with WWW-Authenticate, as is a missing one', async () => {
    const pub = await ogc(s.ws.id, '/collections/places/items?limit=1');
    expect(pub.status, pub.text).toBe(200);
    expect(pub.headers['access-control-allow-origin']).toBe('*');
    for (const path of ['/collections/roads/items', '/collections/nope/items', '/collections']) {
      const res = await ogc(s.ws.id, path);
      expectException(res, 401, 'credential_required');
      expect(res.headers['www-authenticate']).toMatch(/X-API-Key/);
    }
  });

  it('a garbage or revoked credential is 401 even for a public layer (never served as anonymous)', async () => {
    const garbage = await ogc(s.ws.id, '/collections/places/items?limit=1', { 'X-API-Key': 'gp_nonsense' });
    expect(garbage.status).toBe(401);
    const bearer = await ogc(s.ws.id, '/collections/places/items?limit=1', { Authorization: 'Bearer x.y.z' });
    expect(bearer.status).toBe(401);
  });

  it('another workspace’s admin sees public layers only; credentialed answers are private', async () => {
    const other = await servedWorkspace();
    const admin = (await createKey(other.ws.id, 'admin')).key;
    const pub = await ogc(s.ws.id, '/collections/places/items?limit=1', withKey(admin));
    expect(pub.status).toBe(200);
    expect(pub.headers['cache-control']).toBe('private, no-cache');
    expectException(
      await ogc(s.ws.id, '/collections/roads/items', withKey(admin)),
      404,
      'collection_not_found',
    );
  });

  it('a draft is never served, not even to super_admin', async () => {
    const draft = await publishLayer(s.ws.id, s.service.id, {
      source_layer: 'public.places',
      public_id: 'places_draft',
      enabled: false,
      public: true,
    });
    expect(draft.public_id).toBe('places_draft');
    expectException(await ogc(s.ws.id, '/collections/places_draft/items', asSuperAdmin()), 404);
    const list = await ogc(s.ws.id, '/collections', asSuperAdmin());
    expect(list.body.collections.map((c: { id: string }) => c.id)).not.toContain('places_draft');
  });

  it('the settings mean what they say: Features disabled → 404 for everyone; public documents open the list', async () => {
    const { ws, service } = await servedWorkspace();
    await publishLayer(ws.id, service.id, { source_layer: 'public.places', public: true });
    await publishLayer(ws.id, service.id, { source_layer: 'public.roads' });
    expect((await ogc(ws.id, '/collections')).status).toBe(401);
    await setSettings(ws.id, 'ogcapi', { public: true });
    const open = await ogc(ws.id, '/collections');
    expect(open.status, open.text).toBe(200);
    expect(open.body.collections.map((c: { id: string }) => c.id)).toEqual(['places']);
    await setSettings(ws.id, 'ogcapi', { enabled: false });
    expectException(await ogc(ws.id, '/collections/places/items', asSuperAdmin()), 404, 'not_served');
    // Tiles are off by default: no tile is served until they are enabled.
    expectException(await ogc(ws.id, '/collections/places/tiles/WebMercatorQuad/0/0/0', asSuperAdmin()), 404);
  });
});

describe('live: a catalog change is served on the next request', () => {
  it('a policy grant and its revocation take effect on the next request', async () => {
    const role = `r-${Math.random().toString(36).slice(2, 10)}`;
    expect((await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: role } })).status).toBe(201);
    const jwt = await token({ workspaces: { [s.ws.id]: role } });
    expectException(await ogc(s.ws.id, '/collections/roads/items?limit=1', bearer(jwt)), 404);
    const granted = await call('POST', `/roles/${role}/policies`, {
      headers: asSuperAdmin(),
      body: { workspace: s.ws.id, service: 'ogcapi', operation: 'GETFEATURES', action: 'read' },
    });
    expect(granted.status, granted.text).toBe(201);
    expect((await ogc(s.ws.id, '/collections/roads/items?limit=1', bearer(jwt))).status).toBe(200);
    const policyPath = (granted.headers.location as string).replace(/^\/api\/v1/, '');
    const revoked = await call('DELETE', policyPath, {
      headers: asSuperAdmin(),
    });
    expect(revoked.status, revoked.text).toBe(204);
    expectException(await ogc(s.ws.id, '/collections/roads/items?limit=1', bearer(jwt)), 404);
  });

  it('public on/off, rename, disable and delete show at once', async () => {
    const { ws, service } = await servedWorkspace();
    const layer = await publishLayer(ws.id, service.id, { source_layer: 'public.parcels' });
    expect((await ogc(ws.id, '/collections/parcels/items?limit=1')).status).toBe(401);
    await changeLayer(ws.id, service.id, layer, { public: true });
    expect((await ogc(ws.id, '/collections/parcels/items?limit=1')).status).toBe(200);
    await changeLayer(ws.id, service.id, layer, { public_id: 'lots' });
    expect((await ogc(ws.id, '/collections/lots/items?limit=1')).status).toBe(200);
    expect((await ogc(ws.id, '/collections/parcels/items?limit=1')).status).toBe(401);
    await changeLayer(ws.id, service.id, layer, { enabled: false });
    expect((await ogc(ws.id, '/collections/lots/items?limit=1', asSuperAdmin())).status).toBe(404);
    const del = await call('DELETE', `/workspaces/${ws.id}/services/${service.id}/layers/${layer.id}`, {
      headers: asSuperAdmin(),
    });
    expect(del.status, del.text).toBe(204);
    expect((await ogc(ws.id, '/collections/lots', asSuperAdmin())).status).toBe(404);
  });

  it('a disabled service takes its layers off the data plane, and enabling it brings them back', async () => {
    const { ws, service } = await servedWorkspace();
    await publishLayer(ws.id, service.id, { source_layer: 'public.places', public: true });
    const listed = async () =>
      (await ogc(ws.id, '/collections', asSuperAdmin())).body.collections.map((c: { id: string }) => c.id);
    expect(await listed()).toEqual(['places']);
    const setEnabled = async (enabled: boolean) => {
      const res = await call('PUT', `/workspaces/${ws.id}/services/${service.id}`, {
        headers: asSuperAdmin(),
        body: { name: service.name, type: 'postgis', enabled, connection: hostPostgis() },
      });
      expect(res.status, res.text).toBe(200);
    };
    await setEnabled(false);
    expect(await listed()).toEqual([]);
    expectException(await ogc(ws.id, '/collections/places/items?limit=1'), 404);
    expectException(await ogc(ws.id, '/collections/places', asSuperAdmin()), 404);
    await setEnabled(true);
    expect(await listed()).toEqual(['places']);
    expect((await ogc(ws.id, '/collections/places/items?limit=1')).status).toBe(200);
  });
});

describe('access: custom roles, allowed_roles (ADR 0120 matrix cells)', () => {
  async function customRole(policies: Record<string, unknown>[]) {
    const id = `r-${Math.random().toString(36).slice(2, 10)}`;
    const created = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id } });
    expect(created.status, created.text).toBe(201);
    for (const body of policies) {
      const res = await call('POST', `/roles/${id}/policies`, { headers: asSuperAdmin(), body });
      expect(res.status, res.text).toBe(201);
    }
    return id;
  }

  it('a custom role reads what its policies grant: features with an ogcapi grant, tiles only with ogc-tiles', async () => {
    const features = await customRole([
      { workspace: s.ws.id, service: 'ogcapi', operation: '*', action: 'read' },
    ]);
    const tilesOnly = await customRole([
      { workspace: s.ws.id, service: 'ogc-tiles', operation: 'GETTILE', action: 'read' },
    ]);
    const other = await servedWorkspace();
    const elsewhere = await customRole([
      { workspace: other.ws.id, service: 'ogcapi', operation: '*', action: 'read' },
    ]);
    // Custom roles reach a caller through a token (API keys carry built-in roles only).
    const keyOf = (role: string) => token({ workspaces: { [s.ws.id]: role } });
    const withKey = (jwt: string) => bearer(jwt);
    const f = await keyOf(features);
    expect((await ogc(s.ws.id, '/collections/roads/items?limit=1', withKey(f))).status).toBe(200);
    expectException(await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(f)), 404);
    const t = await keyOf(tilesOnly);
    expectException(await ogc(s.ws.id, '/collections/roads/items', withKey(t)), 404, 'collection_not_found');
    expect((await ogc(s.ws.id, '/collections/roads/tiles/WebMercatorQuad/4/5/7', withKey(t))).status).toBe(
      200,
    );
    const e = await keyOf(elsewhere);
    expectException(await ogc(s.ws.id, '/collections/roads/items', withKey(e)), 404, 'collection_not_found');
    // A public layer is readable whatever the grants.
    expect((await ogc(s.ws.id, '/collections/places/items?limit=1', withKey(e))).status).toBe(200);
  });

  it('allowed_roles narrows: the listed custom role reads, a viewer does not; [viewer] admits editors', async () => {
    const analyst = await customRole([{ workspace: '*', service: 'ogcapi', operation: '*', action: 'read' }]);
    const restricted = await publishLayer(s.ws.id, s.service.id, {
      source_layer: 'public.roads',
      public_id: 'roads_restricted',
      allowed_roles: [analyst],
    });
    const viewersOnly = await publishLayer(s.ws.id, s.service.id, {
      source_layer: 'public.roads',
      public_id: 'roads_viewers',
      allowed_roles: ['viewer'],
    });
    const analystKey = await token({ workspaces: { [s.ws.id]: analyst } });
    const editorKey = (await createKey(s.ws.id, 'editor')).key;
    const path = (id: string) => `/collections/${id}/items?limit=1`;
    expect((await ogc(s.ws.id, path(restricted.public_id), bearer(analystKey))).status).toBe(200);
    expectException(await ogc(s.ws.id, path(restricted.public_id), withKey(s.viewer)), 404);
    expect((await ogc(s.ws.id, path(viewersOnly.public_id), withKey(editorKey))).status).toBe(200);
    expectException(await ogc(s.ws.id, path(viewersOnly.public_id), bearer(analystKey)), 404);
    const listed = await ogc(s.ws.id, '/collections', withKey(s.viewer));
    const ids = listed.body.collections.map((c: { id: string }) => c.id);
    expect(ids).toContain('roads_viewers');
    expect(ids).not.toContain('roads_restricted');
  });
});

describe('SQL views and time', () => {
  it('a SQL-view layer is served through the guarded read-only path: items and tiles', async () => {
    const view = await publishLayer(s.ws.id, s.service.id, {
      public_id: 'big_places',
      sql_view: {
        sql: 'SELECT id, name, population, geom FROM public.places WHERE population > 100000',
        geometry_column: 'geom',
        id_column: 'id',
      },
    });
    const res = await ogc(s.ws.id, `/collections/${view.public_id}/items?limit=1000`, withKey(s.viewer));
    expect(res.status, res.text).toBe(200);
    expect(res.body.features.length).toBeGreaterThan(0);
    for (const f of res.body.features) expect(f.properties.population).toBeGreaterThan(100000);
    const tile = await ogc(
      s.ws.id,
      `/collections/${view.public_id}/tiles/WebMercatorQuad/0/0/0`,
      withKey(s.viewer),
    );
    expect(tile.status, tile.text).toBe(200);
    expect(new VectorTile(new PbfReader(tile.raw as Buffer)).layers.big_places?.length).toBe(
      res.body.features.length,
    );
  });

  it('datetime filters a layer with a time dimension and is a 400 on one without', async () => {
    const timed = await publishLayer(s.ws.id, s.service.id, {
      source_layer: 'public.places',
      public_id: 'places_timed',
      dimensions: [
        { name: 'time', units: 'ISO8601', extent: '1200-01-01/1900-01-01', source_property: 'founded' },
      ],
    });
    const all = await ogc(s.ws.id, `/collections/${timed.public_id}/items?limit=1000`, withKey(s.viewer));
    const before1500 = all.body.features.filter(
      (f: { properties: { founded: string } }) => f.properties.founded < '1500-01-01',
    ).length;
    expect(before1500).toBeGreaterThan(0);
    const filtered = await ogc(
      s.ws.id,
      `/collections/${timed.public_id}/items?limit=1000&datetime=../1499-12-31`,
      withKey(s.viewer),
    );
    expect(filtered.status, filtered.text).toBe(200);
    expect(filtered.body.features.length).toBe(before1500);
    const meta = await ogc(s.ws.id, `/collections/${timed.public_id}`, withKey(s.viewer));
    expect(meta.body.extent.temporal.interval).toEqual([
      ['1200-01-01T00:00:00.000Z', '1900-01-01T00:00:00.000Z'],
    ]);
    expectException(
      await ogc(s.ws.id, '/collections/places/items?datetime=2020-01-01', withKey(s.viewer)),
      400,
    );
  });
});
