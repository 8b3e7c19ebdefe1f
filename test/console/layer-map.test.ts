/**
 * The layer page's map against the shared test host: a point, a line and a polygon layer of the
 * demo PostGIS, and one drawn by its default Mapbox style, each drawn by MapLibre from the
 * workspace's own vector tiles (the data plane, DESIGN §8a) over the offline base map; and, in a
 * workspace whose OGC API Tiles is off (the default), from OGC API Features instead. The map's
 * pixels are read from a screenshot: the layer's colour must be there, inside the layer's extent
 * and nowhere else, and at least one tile of the collection must have come back 200 with bytes.
 * No request may leave the console's origin. The layer's OGC URLs and the workspace's OGC API URL
 * are listed, copyable, and answer.
 */
import type { Browser, BrowserContext, Locator, Page, Request, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BORDER, LAND, LAYER_COLOUR, WATER } from '../../console/src/pages/layer-style.ts';
import {
  chromiumPath,
  expectAccessible,
  launchBrowser,
  newConsoleContext,
  origin,
  screenshot,
  signInWithToken,
  watchConsoleErrors,
} from '../support/browser.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { publishLayer, servedWorkspace, setSettings } from '../support/data-plane.ts';

type Rgb = [number, number, number];
type Box = [number, number, number, number];

const rgb = (hex: string): Rgb => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as Rgb;

/** The colour the styled layer's Mapbox style fills with (nothing else on the map is purple). */
const STYLE_COLOUR = '#6a1b9a';

/** Everything the map draws that is not the layer: water, land, borders, and a circle's white rim. */
const BASE_COLOURS = [WATER, LAND, BORDER, '#ffffff'].map(rgb);

/** How far outside the extent (CSS px) a feature's drawing may reach: a circle's radius, a line's half width. */
const MARGIN = 8;

/** How near (RGB distance) a pixel must be to the layer's colour: mostly covered by it, not a blend or text. */
const NEAR = 80;

const shown = (locator: Locator, timeout = 15_000) =>
  expect.poll(() => locator.isVisible(), { timeout }).toBe(true);

const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/.test(e));

interface PixelCounts {
  width: number;
  height: number;
  /** Pixels of the colour inside the extent (plus MARGIN). */
  inside: number;
  /** The same, outside it. */
  outside: number;
  /** Pixels of the base map's land. */
  land: number;
}

/**
 * Decodes a PNG screenshot in a blank page of the same browser (no CSP there) and counts the
 * pixels of `colour`: one counts when it is within NEAR of that colour and nearer it than every
 * base-map colour (so the attribution's text and anti-aliased blends don't).
 */
async function countPixels(
  decoder: Page,
  png: Buffer,
  colour: Rgb,
  box: Box,
  scale: number,
): Promise<PixelCounts> {
  return decoder.evaluate(
    async ({ base64, colour, base, box, scale, margin, near }) => {
      // Browser globals (the test's own types are Node's).
      const browser = globalThis as any;
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const bitmap = await browser.createImageBitmap(new Blob([bytes], { type: 'image/png' }), {
        colorSpaceConversion: 'none',
        premultiplyAlpha: 'none',
      });
      const canvas = new browser.OffscreenCanvas(bitmap.width, bitmap.height);
      const context = canvas.getContext('2d');
      context.drawImage(bitmap, 0, 0);
      const { data, width, height } = context.getImageData(0, 0, bitmap.width, bitmap.height) as {
        data: Uint8ClampedArray;
        width: number;
        height: number;
      };
      const distance = (r: number, g: number, b: number, c: number[]) =>
        (r - (c[0] as number)) ** 2 + (g - (c[1] as number)) ** 2 + (b - (c[2] as number)) ** 2;
      const [left, top, right, bottom] = box.map((v) => v * scale) as Box;
      const m = margin * scale;
      let inside = 0;
      let outside = 0;
      let land = 0;
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          const i = (y * width + x) * 4;
          const r = data[i] as number;
          const g = data[i + 1] as number;
          const b = data[i + 2] as number;
          const toColour = distance(r, g, b, colour);
          const toBase = Math.min(...base.map((c) => distance(r, g, b, c)));
          if (distance(r, g, b, base[1] as number[]) <= 12) land++;
          if (toColour >= toBase || toColour > near * near) continue;
          if (x >= left - m && x <= right + m && y >= top - m && y <= bottom + m) inside++;
          else outside++;
        }
      }
      return { width, height, inside, outside, land };
    },
    { base64: png.toString('base64'), colour, base: BASE_COLOURS, box, scale, margin: MARGIN, near: NEAR },
  );
}

/** What one visit of a layer page drew and fetched. */
interface Drawn {
  map: Locator;
  png: Buffer;
  /** The layer's extent in CSS pixels of the map (data-data-box). */
  box: Box;
  /** Device pixels per CSS pixel of the screenshot. */
  scale: number;
  /** The collection's tile responses the page (its MapLibre worker) received. */
  tiles: { url: string; status: number; bytes: number }[];
  /** Requests to anywhere but the console's origin. */
  elsewhere: string[];
}

describe.skipIf(!chromiumPath)('console: the layer map draws the layer from its own vector tiles', () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let decoder: Page;
  let errors: string[];
  /** OGC API Tiles on, four layers. */
  let served: { id: string; name: string };
  /** OGC API Tiles off (a fresh workspace's default), one point layer. */
  let untiled: { id: string; name: string };
  const suffix = uniqueName('m')
    .slice(2)
    .replace(/[^a-z0-9]/g, '');
  const layerPaths: Record<string, string> = {};

  async function publish(
    ws: { id: string; name: string },
    service: { id: string; name: string },
    table: string,
    publicId: string,
    extra: Record<string, unknown> = {},
  ) {
    const layer = await publishLayer(ws.id, service.id, {
      source_layer: `public.${table}`,
      public_id: publicId,
      title: publicId,
      enabled: true,
      ...extra,
    });
    layerPaths[`${ws.name}/${publicId}`] =
      `/console/workspaces/${ws.name}/services/${service.name}/layers/${layer.id}`;
  }

  beforeAll(async () => {
    const first = await servedWorkspace();
    served = first.ws;
    await setSettings(served.id, 'ogc-tiles', { enabled: true });
    const style = await call('POST', `/workspaces/${served.id}/styles`, {
      headers: asSuperAdmin(),
      body: {
        name: 'purple',
        format: 'mapbox',
        body: {
          version: 8,
          sources: { demo: { type: 'vector', url: 'https://tiles.invalid/demo.json' } },
          layers: [
            { id: 'paper', type: 'background', paint: { 'background-color': '#ffffff' } },
            {
              id: 'parcels',
              type: 'fill',
              source: 'demo',
              'source-layer': `styled-${suffix}`,
              paint: { 'fill-color': STYLE_COLOUR, 'fill-outline-color': STYLE_COLOUR },
            },
          ],
        },
      },
    });
    expect(style.status, style.text).toBe(201);
    await publish(served, first.service, 'places', `points-${suffix}`);
    await publish(served, first.service, 'roads', `lines-${suffix}`);
    await publish(served, first.service, 'parcels', `polygons-${suffix}`);
    await publish(served, first.service, 'parcels', `styled-${suffix}`, {
      default_style: 'purple',
      styles: ['purple'],
    });
    const second = await servedWorkspace();
    untiled = second.ws;
    await publish(untiled, second.service, 'places', `points-${suffix}`);

    browser = await launchBrowser();
    decoder = await browser.newPage();
    context = await newConsoleContext(browser);
    page = await context.newPage();
    errors = watchConsoleErrors(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** Opens a console page, signing in the first time (signing in polls, which needs a test). */
  let signedIn = false;
  async function open(path: string) {
    if (!signedIn) await signInWithToken(page, inject('host').apiKey, path);
    else await page.goto(path);
    signedIn = true;
  }

  /** Opens a layer's page, waits for its map to be idle with its data loaded, and screenshots the map. */
  async function draw(ws: { name: string }, publicId: string, name: string): Promise<Drawn> {
    const tilePath = new RegExp(
      `^/workspaces/${ws.name}/ogc/collections/${publicId}/tiles/WebMercatorQuad/\\d+/\\d+/\\d+$`,
    );
    const tiles: Drawn['tiles'] = [];
    const elsewhere: string[] = [];
    const onRequest = (request: Request) => {
      const url = request.url();
      if (!url.startsWith(`${origin()}/`) && !/^(blob|data):/.test(url)) elsewhere.push(url);
    };
    const onResponse = async (response: Response) => {
      if (!tilePath.test(new URL(response.url()).pathname)) return;
      const body = response.status() === 200 ? await response.body().catch(() => Buffer.alloc(0)) : undefined;
      tiles.push({ url: response.url(), status: response.status(), bytes: body?.length ?? 0 });
    };
    context.on('request', onRequest);
    context.on('response', onResponse);
    try {
      await open(layerPaths[`${ws.name}/${publicId}`] as string);
      await shown(page.getByRole('heading', { name: `Layer ${publicId}`, level: 1 }));
      const map = page.locator('.data-map[data-map-state="map"]');
      await shown(map, 30_000);
      await expect.poll(() => map.getAttribute('data-map-idle'), { timeout: 60_000 }).toBe('true');
      const canvas = map.locator('canvas.maplibregl-canvas');
      const png = await canvas.screenshot();
      await screenshot(page, name);
      const box = ((await map.getAttribute('data-data-box')) ?? '').split(',').map(Number) as Box;
      expect(box).toHaveLength(4);
      expect(box.every(Number.isFinite), String(box)).toBe(true);
      const cssWidth = (await canvas.boundingBox())?.width ?? 1;
      return { map, png, box, scale: png.readUInt32BE(16) / cssWidth, tiles, elsewhere };
    } finally {
      context.off('request', onRequest);
      context.off('response', onResponse);
    }
  }

  /** Asserts the layer's colour is drawn inside its extent and not outside, over the base map. */
  async function expectDrawn(drawn: Drawn, colour: string) {
    expect(Number(await drawn.map.getAttribute('data-rendered-features'))).toBeGreaterThan(0);
    const counts = await countPixels(decoder, drawn.png, rgb(colour), drawn.box, drawn.scale);
    const seen = JSON.stringify(counts);
    // The offline base map is drawn (Natural Earth's land), and the layer's colour sits where its features are.
    expect(counts.land, seen).toBeGreaterThan(1000);
    expect(counts.inside, `pixels of ${colour} inside the extent: ${seen}`).toBeGreaterThan(50);
    expect(counts.outside, `pixels of ${colour} outside the extent: ${seen}`).toBeLessThanOrEqual(
      Math.ceil(counts.inside * 0.005),
    );
    // No request left the console's origin (no tiles, glyphs or sprites from elsewhere).
    expect(drawn.elsewhere).toEqual([]);
    expect(cspErrors(errors)).toEqual([]);
  }

  it.each([
    ['a point layer', 'points', 'the default style for points', LAYER_COLOUR],
    ['a line layer', 'lines', 'the default style for lines', LAYER_COLOUR],
    ['a polygon layer', 'polygons', 'the default style for polygons', LAYER_COLOUR],
    ['a layer with a default Mapbox style', 'styled', 'its default style, purple', STYLE_COLOUR],
  ])(
    'draws %s in its colour where its features are, from tiles of its own collection',
    async (_what, prefix, styledWith, colour) => {
      const drawn = await draw(served, `${prefix}-${suffix}`, `layer-map-${prefix}`);
      // The collection's own tiles came back with bytes (the worker's requests, with the session cookie).
      expect(
        drawn.tiles.filter((t) => t.status === 200 && t.bytes > 0),
        JSON.stringify(drawn.tiles),
      ).not.toHaveLength(0);
      await expectDrawn(drawn, colour);
      await shown(page.getByText(`Drawn with ${styledWith}.`, { exact: true }));
      if (colour !== LAYER_COLOUR) {
        // Its own style replaced the default one.
        const defaults = await countPixels(decoder, drawn.png, rgb(LAYER_COLOUR), drawn.box, drawn.scale);
        expect(defaults.inside + defaults.outside, JSON.stringify(defaults)).toBe(0);
      }
    },
    120_000,
  );

  it('draws a layer from OGC API Features when the workspace serves no vector tiles, and says where to turn them on', async () => {
    const drawn = await draw(untiled, `points-${suffix}`, 'layer-map-untiled');
    expect(drawn.tiles).toEqual([]);
    await expectDrawn(drawn, LAYER_COLOUR);
    await shown(
      page.getByText(
        "OGC API Tiles is off in this workspace's settings, so the map draws its 300 features from OGC API Features instead.",
        { exact: true },
      ),
    );
    expect(
      await page
        .getByRole('link', { name: "Turn on OGC API Tiles in the workspace's settings" })
        .getAttribute('href'),
    ).toBe(`/console/workspaces/${untiled.name}/settings`);
  }, 120_000);

  it("lists the layer's OGC URLs and a GDAL command, copyable, on an axe-clean page; the TileJSON answers", async () => {
    const publicId = `points-${suffix}`;
    await open(layerPaths[`${served.name}/${publicId}`] as string);
    await shown(page.getByRole('heading', { name: `Layer ${publicId}`, level: 1 }));
    const api = `${origin()}/workspaces/${served.name}/ogc`;
    const collection = `${api}/collections/${publicId}`;
    const field = (label: string) => page.getByLabel(label, { exact: true });
    await shown(field('Collection'));
    expect(await field('Collection').inputValue()).toBe(collection);
    expect(await field('Features (GeoJSON items)').inputValue()).toBe(`${collection}/items`);
    expect(await field('Vector tiles (URL template)').inputValue()).toBe(
      `${collection}/tiles/WebMercatorQuad/{z}/{y}/{x}`,
    );
    expect(await field('TileJSON').inputValue()).toBe(`${collection}/tiles/WebMercatorQuad?f=tilejson`);
    expect(await field('GDAL command (OGC API - Features)').inputValue()).toBe(
      `ogrinfo OAPIF:${api} ${publicId}`,
    );
    expect(await field('QGIS connection URL (WFS / OGC API - Features)').inputValue()).toBe(api);
    await shown(page.getByRole('button', { name: 'Copy Collection', exact: true }));
    // The TileJSON the page lists is served (with the console's session) and names this collection's tiles.
    const tileJson = await context.request.get(await field('TileJSON').inputValue());
    expect(tileJson.status()).toBe(200);
    const document = (await tileJson.json()) as { tiles: string[]; vector_layers: { id: string }[] };
    expect(document.vector_layers.map((l) => l.id)).toEqual([publicId]);
    expect(document.tiles[0]).toMatch(
      new RegExp(
        `^${origin()}/workspaces/[^/]+/ogc/collections/${publicId}/tiles/WebMercatorQuad/\\{z\\}/\\{y\\}/\\{x\\}$`,
      ),
    );
    const items = await context.request.get(
      `${await field('Features (GeoJSON items)').inputValue()}?limit=1`,
    );
    expect(items.status()).toBe(200);
    await expectAccessible(page, 'layer-map');
    expect(cspErrors(errors)).toEqual([]);
  });

  it('lists the workspace’s OGC API URL on its overview, and the URL answers', async () => {
    await open(`/console/workspaces/${served.name}`);
    await shown(page.getByRole('heading', { name: `Workspace ${served.name}`, level: 1 }));
    const field = page.getByLabel('OGC API URL', { exact: true });
    await shown(field);
    expect(await field.inputValue()).toBe(`${origin()}/workspaces/${served.name}/ogc`);
    const landing = await context.request.get(await field.inputValue());
    expect(landing.status()).toBe(200);
    await expectAccessible(page, 'workspace-ogc');
  });
});
