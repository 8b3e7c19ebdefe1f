/**
 * The console's styles, style assets, settings and tile matrix sets pages, in Chromium against the
 * shared local host: each page's main flow, an API refusal shown beside what caused it, and axe.
 */
import { crc32, deflateSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ceilings } from '#domain/settings.ts';
import {
  chromiumPath,
  expectAccessible,
  launchBrowser,
  newConsoleContext,
  signInWithToken,
  watchConsoleErrors,
} from '../support/browser.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace } from '../support/fixtures.ts';

/** A valid 1×1 RGBA PNG (one opaque orange pixel), built chunk by chunk. */
function onePixelPng(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0); // width
  header.writeUInt32BE(1, 4); // height
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from([0, 0xff, 0x88, 0x00, 0xff]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A tile matrix set document (as in test/e2e/tile-matrix-sets.test.ts). */
function tmsDefinition(id: string, levels = 2) {
  return {
    id,
    title: `Set ${id}`,
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    tileMatrices: Array.from({ length: levels }, (_, z) => ({
      id: String(z),
      scaleDenominator: 559082264.0287178 / 2 ** z,
      cellSize: 156543.03392804097 / 2 ** z,
      cornerOfOrigin: 'topLeft',
      pointOfOrigin: [-20037508.3427892, 20037508.3427892],
      tileWidth: 256,
      tileHeight: 256,
      matrixWidth: 2 ** z,
      matrixHeight: 2 ** z,
    })),
  };
}

const validStyle = {
  version: 8,
  sources: {},
  layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#dde' } }],
};

/** The `.field` holding the control with this label. */
const fieldOf = (page: Page, label: string) =>
  page.locator('.field, .check').filter({ has: page.getByLabel(label, { exact: true }) });

const heading = (page: Page, name: string, level = 1) =>
  expect.poll(() => page.getByRole('heading', { name, level }).isVisible(), { timeout: 15_000 }).toBe(true);

describe.skipIf(!chromiumPath)('console: styles, style assets, settings and tile matrix sets', () => {
  let browser: Browser;
  let workspace: string;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    workspace = (await createWorkspace(uniqueName('styles'))).name;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
  });

  /** A fresh profile signed in with this token (the bootstrap super_admin key by default). */
  async function signedIn(token = inject('host').apiKey): Promise<{ page: Page; errors: string[] }> {
    const context = await newConsoleContext(browser);
    contexts.push(context);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, token);
    return { page, errors };
  }

  it('creates a style, shows an invalid one refused beside the editor, edits and deletes it', async () => {
    const { page, errors } = await signedIn();
    await page.goto(`/console/workspaces/${workspace}/styles`);
    await heading(page, `Styles of ${workspace}`);
    await expect.poll(() => page.getByText('No styles yet.').isVisible()).toBe(true);
    await expectAccessible(page, 'styles');

    // An invalid MapLibre style: the validator's message names the bad property, beside the editor.
    const name = uniqueName('roads');
    await page.getByLabel('Name', { exact: true }).fill(name);
    const invalid = {
      ...validStyle,
      layers: [{ id: 'bad', type: 'background', paint: { 'background-color': 42 } }],
    };
    await page.getByLabel('Style document', { exact: true }).fill(JSON.stringify(invalid));
    await page.getByRole('button', { name: 'Create style' }).click();
    const editorError = fieldOf(page, 'Style document').getByRole('alert');
    await expect.poll(() => editorError.textContent()).toMatch(/background-color/);
    expect(await editorError.getAttribute('data-status')).toBe('400');
    expect(await page.getByLabel('Style document', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    await expectAccessible(page, 'styles-invalid');

    // A valid one is created and opened.
    await page.getByLabel('Style document', { exact: true }).fill(JSON.stringify(validStyle, null, 2));
    await page.getByRole('button', { name: 'Create style' }).click();
    await heading(page, `Style ${name}`);
    expect(new URL(page.url()).searchParams.get('style')).toBe(name);
    await expect
      .poll(() => page.getByLabel('Style document', { exact: true }).inputValue())
      .toContain('"background-color": "#dde"');
    await expectAccessible(page, 'style');

    // Edit: title and paint; saved with If-Match, the version moves on.
    await page.getByLabel('Title').fill('Background only');
    const body = JSON.parse(await page.getByLabel('Style document', { exact: true }).inputValue());
    body.layers[0].paint['background-color'] = '#123456';
    await page.getByLabel('Style document', { exact: true }).fill(JSON.stringify(body, null, 2));
    await page.getByRole('button', { name: 'Save style' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved (version 2)');
    const stored = await call('GET', `/workspaces/${workspace}/styles/${name}`, { headers: asSuperAdmin() });
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toMatchObject({ title: 'Background only', version: 2 });
    expect(stored.body.body.layers[0].paint['background-color']).toBe('#123456');

    // An edit the API refuses (XML declared as SLD but malformed) stays beside the editor.
    await page.getByLabel('Format').selectOption('sld_1.0.0');
    await page.getByLabel('Style document', { exact: true }).fill('<StyledLayerDescriptor version="1.0.0">');
    await page.getByRole('button', { name: 'Save style' }).click();
    await expect.poll(() => editorError.textContent()).toMatch(/XML/);
    await page.getByRole('button', { name: 'Discard changes' }).click();

    // The list shows it; then delete it from its page.
    await page.goto(`/console/workspaces/${workspace}/styles`);
    await expect.poll(() => page.getByRole('link', { name }).isVisible()).toBe(true);
    await page.getByRole('link', { name }).click();
    await heading(page, `Style ${name}`);
    await page.getByRole('button', { name: 'Delete style…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await heading(page, `Styles of ${workspace}`);
    await expect.poll(() => page.getByText('No styles yet.').isVisible()).toBe(true);
    expect(errors.filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
  });

  it('uploads a PNG asset, previews it from a blob: URL, refuses a non-image in place and deletes it', async () => {
    const { page } = await signedIn();
    await page.goto(`/console/workspaces/${workspace}/style-assets`);
    await heading(page, `Style assets of ${workspace}`);
    await expect.poll(() => page.getByText('No assets yet.').isVisible()).toBe(true);

    // Not an image: the API's 400 beside the file input.
    await page.getByLabel('Image file').setInputFiles({
      name: 'notes.png',
      mimeType: 'image/png',
      buffer: Buffer.from('this is not an image'),
    });
    await page.getByLabel('Asset name').fill('notes');
    await page.getByRole('button', { name: 'Upload asset' }).click();
    const fileError = fieldOf(page, 'Image file').getByRole('alert');
    await expect.poll(() => fileError.getAttribute('data-status')).toBe('400');

    // A 1×1 PNG: uploaded, listed, and its preview decoded by the browser.
    const asset = uniqueName('marker');
    await page
      .getByLabel('Image file')
      .setInputFiles({ name: 'marker.png', mimeType: 'image/png', buffer: onePixelPng() });
    await page.getByLabel('Asset name').fill(asset);
    await page.getByRole('button', { name: 'Upload asset' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`Uploaded ${asset} (image/png`);
    const preview = page.getByRole('img', { name: `Preview of ${asset}` });
    await expect
      .poll(
        () =>
          preview.evaluate((img) => {
            // The test's tsconfig has no DOM types: an <img> as far as this check needs it.
            const image = img as unknown as { complete: boolean; naturalWidth: number };
            return image.complete && image.naturalWidth;
          }),
        {
          timeout: 15_000,
        },
      )
      .toBe(1);
    expect(await preview.getAttribute('src')).toMatch(/^blob:/);
    await expectAccessible(page, 'style-assets');

    // The same name again replaces it (If-Match on its digest).
    await page
      .getByLabel('Image file')
      .setInputFiles({ name: 'marker.png', mimeType: 'image/png', buffer: onePixelPng() });
    await page.getByLabel('Asset name').fill(asset);
    await expect.poll(() => page.getByRole('button', { name: 'Replace asset' }).isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Replace asset' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`Replaced ${asset}`);

    // Delete it.
    await page.getByRole('button', { name: `Delete ${asset}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`Deleted ${asset}`);
    await expect.poll(() => page.getByText('No assets yet.').isVisible()).toBe(true);
    const gone = await call('GET', `/workspaces/${workspace}/style-assets/${asset}`, {
      headers: asSuperAdmin(),
    });
    expect(gone.status).toBe(404);
  });

  it('shows the ceilings, refuses a limit above one beside its field, and saves a valid one', async () => {
    const { page } = await signedIn();
    await page.goto(`/console/workspaces/${workspace}/settings`);
    await heading(page, `Settings of ${workspace}`);
    const width = page.getByLabel('Max image width');
    await expect.poll(() => width.isVisible()).toBe(true);
    // The inputs' limits are the server's ceilings.
    expect(await width.getAttribute('max')).toBe(String(ceilings.wms.max_width));
    expect(await page.getByLabel('Max vertices rendered').getAttribute('max')).toBe(
      String(ceilings.wms.max_render_vertices),
    );
    expect(await page.getByLabel('Max page size').getAttribute('max')).toBe(
      String(ceilings.ogcapi.limit_max),
    );
    expect(await page.getByLabel('Max features per tile').getAttribute('max')).toBe(
      String(ceilings.tiles.max_features),
    );
    expect(await page.getByLabel('Max tile size').getAttribute('max')).toBe(
      String(ceilings.tiles.max_tile_bytes),
    );
    expect(await fieldOf(page, 'Max image width').locator('.hint').textContent()).toContain('4,096');
    await expectAccessible(page, 'settings');

    // WMS: above the ceiling → 400 beside the field; then a valid value saved and read back.
    await page.getByLabel('Serve WMS').check();
    await width.fill(String(ceilings.wms.max_width + 1));
    await page.getByRole('button', { name: 'Save WMS settings' }).click();
    const widthError = fieldOf(page, 'Max image width').getByRole('alert');
    await expect.poll(() => widthError.textContent()).toMatch(/ceiling is 4096/);
    expect(await width.getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'settings-refused');
    await width.fill('2048');
    await page.getByLabel('WMS title').fill('Roads WMS');
    await page.getByRole('button', { name: 'Save WMS settings' }).click();
    const wms = page.locator('section', { has: page.getByRole('heading', { name: 'WMS', exact: true }) });
    await expect.poll(() => wms.getByRole('status').textContent()).toContain('Saved (version 1)');

    // OGC API Features: limit_default above limit_max is refused beside both; a negative one by the schema.
    await page.getByLabel('Default page size').fill('500');
    await page.getByLabel('Max page size').fill('100');
    await page.getByRole('button', { name: 'Save OGC API Features settings' }).click();
    await expect
      .poll(() => fieldOf(page, 'Default page size').getByRole('alert').textContent())
      .toMatch(/exceeds limit_max/);
    await page.getByLabel('Max offset').fill('-3');
    await page.getByLabel('Default page size').fill('50');
    await page.getByRole('button', { name: 'Save OGC API Features settings' }).click();
    await expect.poll(() => fieldOf(page, 'Max offset').getByRole('alert').isVisible()).toBe(true);
    await page.getByLabel('Max offset').fill('');
    await page.getByRole('button', { name: 'Save OGC API Features settings' }).click();
    const features = page.locator('section', {
      has: page.getByRole('heading', { name: 'OGC API Features' }),
    });
    await expect.poll(() => features.getByRole('status').textContent()).toContain('Saved (version 1)');

    // OGC API Tiles: above the max features ceiling, then valid.
    await page.getByLabel('Max features per tile').fill(String(ceilings.tiles.max_features * 2));
    await page.getByRole('button', { name: 'Save OGC API Tiles settings' }).click();
    await expect
      .poll(() => fieldOf(page, 'Max features per tile').getByRole('alert').textContent())
      .toMatch(/server ceiling is 50000/);
    await page.getByLabel('Max features per tile').fill('20000');
    await page.getByRole('button', { name: 'Save OGC API Tiles settings' }).click();
    const tiles = page.locator('section', { has: page.getByRole('heading', { name: 'OGC API Tiles' }) });
    await expect.poll(() => tiles.getByRole('status').textContent()).toContain('Saved (version 1)');

    // Read back after a reload: the saved values, from the API.
    await page.reload();
    await expect.poll(() => page.getByLabel('Max image width').inputValue()).toBe('2048');
    expect(await page.getByLabel('WMS title').inputValue()).toBe('Roads WMS');
    expect(await page.getByLabel('Serve WMS').isChecked()).toBe(true);
    expect(await page.getByLabel('Default page size').inputValue()).toBe('50');
    expect(await page.getByLabel('Max page size').inputValue()).toBe('100');
    expect(await page.getByLabel('Max features per tile').inputValue()).toBe('20000');
    const stored = await call('GET', `/workspaces/${workspace}/settings/wms`, { headers: asSuperAdmin() });
    expect(stored.body).toMatchObject({ enabled: true, max_width: 2048, title: 'Roads WMS' });
    expect(stored.headers.etag).toBe('"1"');
  });

  it('edits the WFS, WCS and WMTS settings: ceilings as max, refusals beside their field, saved and read back (ADR 0133)', async () => {
    const ws = (await createWorkspace(uniqueName('protocols'))).name;
    const { page } = await signedIn();
    await page.goto(`/console/workspaces/${ws}/settings`);
    await heading(page, `Settings of ${ws}`);
    const section = (name: string) =>
      page.locator('section', { has: page.getByRole('heading', { name, exact: true }) });
    const maxFeatures = page.getByLabel('Max features per GetFeature');
    await expect.poll(() => maxFeatures.isVisible()).toBe(true);
    await expect.poll(() => page.getByLabel('Provider site').isVisible()).toBe(true);
    // The inputs' limits are the server's ceilings; each form says nothing serves it yet.
    expect(await maxFeatures.getAttribute('max')).toBe(String(ceilings.wfs.max_features));
    expect(await page.getByLabel('Count timeout').getAttribute('max')).toBe(
      String(ceilings.wfs.count_timeout_ms),
    );
    expect(await page.getByLabel('Max cells per coverage').getAttribute('max')).toBe(
      String(ceilings.wcs.max_cells),
    );
    expect(await page.getByLabel('Max temporary storage').getAttribute('max')).toBe(
      String(ceilings.wcs.max_temporary_bytes),
    );
    for (const name of ['WFS', 'WCS', 'WMTS']) {
      expect(await section(name).textContent()).toContain(`GeoPlane does not serve ${name} yet`);
    }
    // The WMTS defaults: GetFeatureInfo on.
    expect(await page.getByLabel('WMTS GetFeatureInfo').isChecked()).toBe(true);
    await expectAccessible(page, 'protocol-settings');

    // WFS: a default count above the max is refused beside it; then saved.
    await page.getByLabel('Serve WFS').check();
    await maxFeatures.fill('100');
    await page.getByLabel('Default GetFeature count').fill('500');
    await page.getByRole('button', { name: 'Save WFS settings' }).click();
    await expect
      .poll(() => fieldOf(page, 'Default GetFeature count').getByRole('alert').textContent())
      .toMatch(/exceeds max_features/);
    await page.getByLabel('Default GetFeature count').fill('50');
    await page.getByRole('button', { name: 'Save WFS settings' }).click();
    await expect.poll(() => section('WFS').getByRole('status').textContent()).toContain('Saved (version 1)');

    // WCS: a CRS that is no CRS name is refused beside its list; then formats and CRSs saved.
    await page.getByLabel('Output CRSs').fill('EPSG:3857\nweb mercator');
    await page.getByRole('button', { name: 'Save WCS settings' }).click();
    await expect.poll(() => fieldOf(page, 'Output CRSs').getByRole('alert').isVisible()).toBe(true);
    expect(await page.getByLabel('Output CRSs').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'protocol-settings-refused');
    await page.getByLabel('Output CRSs').fill('EPSG:3857\nhttp://www.opengis.net/def/crs/EPSG/0/4326');
    await section('WCS').getByLabel('image/tiff').check();
    await section('WCS').getByLabel('scaling').check();
    await page.getByRole('button', { name: 'Save WCS settings' }).click();
    await expect.poll(() => section('WCS').getByRole('status').textContent()).toContain('Saved (version 1)');

    // WMTS: a relative provider site is refused beside it; then saved.
    await page.getByLabel('Provider site').fill('maps/home');
    await page.getByRole('button', { name: 'Save WMTS settings' }).click();
    await expect.poll(() => fieldOf(page, 'Provider site').getByRole('alert').isVisible()).toBe(true);
    await page.getByLabel('Provider site').fill('https://gis.example.org/');
    await page.getByLabel('Contact email').fill('gis@example.org');
    await page.getByLabel('WMTS GetFeatureInfo').uncheck();
    await page.getByRole('button', { name: 'Save WMTS settings' }).click();
    await expect.poll(() => section('WMTS').getByRole('status').textContent()).toContain('Saved (version 1)');

    // Read back after a reload, and from the API.
    await page.reload();
    await expect.poll(() => page.getByLabel('Default GetFeature count').inputValue()).toBe('50');
    expect(await page.getByLabel('Serve WFS').isChecked()).toBe(true);
    expect(await page.getByLabel('Output CRSs').inputValue()).toBe(
      'EPSG:3857\nhttp://www.opengis.net/def/crs/EPSG/0/4326',
    );
    expect(await page.getByLabel('Provider site').inputValue()).toBe('https://gis.example.org/');
    expect(await page.getByLabel('WMTS GetFeatureInfo').isChecked()).toBe(false);
    const read = (kind: string) =>
      call('GET', `/workspaces/${ws}/settings/${kind}`, { headers: asSuperAdmin() });
    const [wfs, wcs, wmts] = await Promise.all([read('wfs'), read('wcs'), read('wmts')]);
    expect(wfs.body).toEqual({ enabled: true, public: false, max_features: 100, default_count: 50 });
    expect(wcs.body).toEqual({
      enabled: false,
      public: false,
      extensions: ['scaling'],
      output_formats: ['image/tiff'],
      allowed_output_crs: ['EPSG:3857', 'http://www.opengis.net/def/crs/EPSG/0/4326'],
    });
    expect(wmts.body).toMatchObject({
      feature_info_enabled: false,
      provider_site: 'https://gis.example.org/',
      contact_email: 'gis@example.org',
    });
    for (const res of [wfs, wcs, wmts]) expect(res.headers.etag).toBe('"1"');
  });

  it('tells a viewer that saving settings needs the admin role', async () => {
    const viewer = await createKey(workspace, 'viewer');
    const { page: viewerPage } = await signedIn(viewer.key);
    await viewerPage.goto(`/console/workspaces/${workspace}/settings`);
    await expect.poll(() => viewerPage.getByLabel('Max image width').inputValue()).toBe('2048');
    await viewerPage.getByRole('button', { name: 'Save WMS settings' }).click();
    const wms = viewerPage.locator('section', {
      has: viewerPage.getByRole('heading', { name: 'WMS', exact: true }),
    });
    await expect.poll(() => wms.getByRole('alert').textContent()).toMatch(/403.*admin role/s);
  });

  it('lists the tile matrix sets, refuses a bad document beside the editor, creates, shows and deletes one', async () => {
    const { page } = await signedIn();
    await page.goto('/console/tile-matrix-sets');
    await heading(page, 'Tile matrix sets');
    await expect.poll(() => page.getByRole('link', { name: 'WebMercatorQuad' }).isVisible()).toBe(true);
    await expectAccessible(page, 'tile-matrix-sets');

    const editor = page.getByLabel('Tile matrix set (JSON)');
    const editorError = fieldOf(page, 'Tile matrix set (JSON)').getByRole('alert');
    // Not JSON: said by the console, beside the editor.
    await editor.fill('{ "id": ');
    await page.getByRole('button', { name: 'Save tile matrix set' }).click();
    await expect.poll(() => editorError.textContent()).toMatch(/not JSON/);

    // A zero tile width: the API's 400 names the path.
    const id = uniqueName('tms');
    const bad = tmsDefinition(id);
    (bad.tileMatrices[0] as { tileWidth: number }).tileWidth = 0;
    await editor.fill(JSON.stringify(bad, null, 2));
    await page.getByRole('button', { name: 'Save tile matrix set' }).click();
    await expect.poll(() => editorError.textContent()).toMatch(/tileMatrices\.0\.tileWidth/);
    expect(await editorError.getAttribute('data-status')).toBe('400');

    // Duplicate matrix ids: 422 from the API's own rules.
    const twice = tmsDefinition(id);
    (twice.tileMatrices[1] as { id: string }).id = '0';
    await editor.fill(JSON.stringify(twice));
    await page.getByRole('button', { name: 'Save tile matrix set' }).click();
    await expect.poll(() => editorError.getAttribute('data-status')).toBe('422');

    // Valid: created and shown with its matrices.
    await editor.fill(JSON.stringify(tmsDefinition(id, 3), null, 2));
    await page.getByRole('button', { name: 'Save tile matrix set' }).click();
    await heading(page, `Tile matrix set ${id}`);
    const matrices = page.locator('section', { has: page.getByRole('heading', { name: /Tile matrices/ }) });
    await expect.poll(() => matrices.locator('tbody tr').count()).toBe(3);
    expect(await matrices.locator('tbody tr').nth(2).textContent()).toContain('4 × 4');
    await expectAccessible(page, 'tile-matrix-set');

    // Replace it (If-Match on its revision) with two levels.
    await page.getByLabel('Tile matrix set (JSON)').fill(JSON.stringify(tmsDefinition(id, 2)));
    await page.getByRole('button', { name: 'Replace tile matrix set' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved (revision 2)');
    await expect.poll(() => matrices.locator('tbody tr').count()).toBe(2);

    // Delete it.
    await page.getByRole('button', { name: 'Delete tile matrix set…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await heading(page, 'Tile matrix sets');
    const gone = await call('GET', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin() });
    expect(gone.status).toBe(404);

    // A built-in set shows its matrices and no way to change it.
    await page.getByRole('link', { name: 'WebMercatorQuad' }).click();
    await heading(page, 'Tile matrix set WebMercatorQuad');
    await expect.poll(() => matrices.locator('tbody tr').count()).toBeGreaterThan(10);
    expect(await page.getByRole('button', { name: 'Delete tile matrix set…' }).count()).toBe(0);
  });
});
