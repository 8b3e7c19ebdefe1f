/**
 * The console's services, layers, mosaic and layer-group pages against the shared test host,
 * signed in as super_admin: each flow through the pages, an error shown in place, axe on each page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  chromiumPath,
  expectAccessible,
  launchBrowser,
  newConsoleContext,
  signInWithToken,
  watchConsoleErrors,
} from '../support/browser.ts';
import { uniqueName } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';
import { writeTiff } from '../support/geotiff.ts';
import { mosaicRoot } from '../support/mosaic-roots.ts';

/** The embedded PostGIS of the test host, as its bootstrap wrote it (the password only there). */
interface Postgis {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}

const shown = (locator: Locator, timeout = 15_000) =>
  expect.poll(() => locator.isVisible(), { timeout }).toBe(true);

async function heading(page: Page, name: string) {
  await shown(page.getByRole('heading', { name, level: 1, exact: true }));
}

/** The CSP refusals a page reported (none is allowed). */
const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/.test(e));

describe.skipIf(!chromiumPath)('console: services, layers, mosaics and layer groups', () => {
  let browser: Browser;
  let postgis: Postgis;
  beforeAll(async () => {
    postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('registers a PostGIS service, discovers and publishes a table, finds, enables and previews the layer, validates SQL views, groups layers and deletes the service', async () => {
    const ws = await createWorkspace();
    const suffix = uniqueName('l')
      .slice(2)
      .replace(/[^a-z0-9]/g, '');
    const placesId = `places-${suffix}`;
    const citiesId = `cities-${suffix}`;
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}/services`);
    await heading(page, `Services of ${ws.name}`);
    await shown(page.getByText('No services yet'));
    await expectAccessible(page, 'services');

    // A connection that can't be opened is refused (400) and said under the form.
    await page.getByLabel('Name', { exact: true }).fill('pg');
    await page.getByLabel('Host', { exact: true }).fill(postgis.host);
    await page.getByLabel('Port', { exact: true }).fill(String(postgis.port));
    await page.getByLabel('Database', { exact: true }).fill(postgis.database);
    await page.getByLabel('User', { exact: true }).fill(postgis.user);
    await page.getByLabel('Password', { exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Register service' }).click();
    const refused = page.locator('form .error[data-status="400"]');
    await shown(refused);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Services of ${ws.name}`);

    await page.getByLabel('Password', { exact: true }).fill(postgis.password);
    await page.getByRole('button', { name: 'Register service' }).click();
    await heading(page, 'Service pg');
    // The password is never shown back; only that one is set.
    await shown(page.getByText('set (never shown)'));
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    await expectAccessible(page, 'service');

    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Connection' }).textContent())
      .toMatch(/Connection OK \(\d+ ms\)/);

    // Editing: a port out of range is refused beside the port (400); a good edit saves with If-Match.
    const editForm = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'Edit', exact: true }) });
    await editForm.getByLabel('Port').fill('70000');
    await editForm.getByRole('button', { name: 'Save' }).click();
    await shown(
      editForm
        .locator('.field')
        .filter({ has: page.getByLabel('Port') })
        .getByRole('alert'),
    );
    expect(await editForm.getByLabel('Port').getAttribute('aria-invalid')).toBe('true');
    await editForm.getByLabel('Port').fill(String(postgis.port));
    await editForm.getByLabel('Schemas').fill('public');
    await editForm.getByRole('button', { name: 'Save' }).click();
    await shown(editForm.getByRole('status').filter({ hasText: 'Saved (version 2).' }));

    await page.getByRole('button', { name: 'Discover', exact: true }).click();
    const discovered = page.getByRole('table', { name: /discovered tables/ });
    await shown(discovered.getByRole('cell', { name: 'places', exact: true }));
    // The demo role can't read public.secrets, and public.notes has no geometry.
    expect(await discovered.getByRole('cell', { name: /secrets|notes/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Publish places' }).click();
    const publishTable = page.locator('form.publish').first();
    await shown(publishTable.getByRole('heading', { name: 'Publish places' }));
    expect(await publishTable.getByLabel('Public id').inputValue()).toBe('places');
    await publishTable.getByLabel('Public id').fill(placesId);
    await publishTable.getByLabel(/^Enabled/).uncheck();
    await publishTable.getByRole('button', { name: 'Publish layer' }).click();
    await expect
      .poll(() => publishTable.getByRole('status').textContent(), { timeout: 15_000 })
      .toBe(`Published ${placesId} as a draft (disabled).`);
    // The same public id again: 409, shown in the publish form.
    await publishTable.getByRole('button', { name: 'Publish layer' }).click();
    await shown(publishTable.locator('.error[data-status="409"]'));

    // The layers list: find the draft, enable it.
    await page.getByRole('link', { name: 'Layers of pg' }).click();
    await heading(page, 'Layers of pg');
    await shown(page.getByRole('link', { name: placesId }));
    await page.getByLabel('Search layers').fill('no-such-layer');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await shown(page.getByText('No layer matches.'));
    await page.getByLabel('Search layers').fill(suffix);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await shown(page.getByRole('heading', { name: `Layers matching “${suffix}”` }));
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: placesId }) });
    await shown(row.getByRole('cell', { name: 'Draft (disabled)' }));
    await row.getByRole('button', { name: `Enable ${placesId}` }).click();
    await shown(row.getByRole('button', { name: `Disable ${placesId}` }));
    await shown(row.getByRole('cell', { name: 'Enabled', exact: true }));
    await expectAccessible(page, 'layers');

    // The layer page: its fields and the extent, as a map or (without WebGL) as numbers, saying why.
    await row.getByRole('link', { name: placesId }).click();
    await heading(page, `Layer ${placesId}`);
    await shown(page.getByText('EPSG:4326').first());
    // With WebGL the map must draw the box (its style loaded and its worker ran under the CSP);
    // without it (some headless Chromiums) the page must say so and keep the numbers.
    const webgl = (await page.evaluate(
      "(() => { const c = document.createElement('canvas'); return Boolean(c.getContext('webgl2') ?? c.getContext('webgl')); })()",
    )) as boolean;
    const drawn = page.locator('.map[data-map-state="map"] canvas.maplibregl-canvas');
    const fallback = page.getByText(/^Map preview unavailable: .+\. The extent is shown as numbers above\.$/);
    if (webgl) {
      await shown(drawn, 30_000);
      expect(await page.getByText('Map preview unavailable').count()).toBe(0);
    } else {
      await shown(fallback);
      expect(await fallback.textContent()).toMatch(/no WebGL/);
      expect(await page.locator('.map').isHidden()).toBe(true);
    }
    await expect.poll(() => page.getByText('West (min x)').isVisible()).toBe(true);
    await expectAccessible(page, 'layer');

    // SQL views: an error in place next to the editor, then a valid one with its columns.
    await page.getByRole('link', { name: 'Service pg' }).click();
    await heading(page, 'Service pg');
    const sql = page.getByLabel('SQL', { exact: true });
    await sql.fill('SELEC id, geom FROM public.places');
    await page.getByRole('button', { name: 'Validate' }).click();
    const sqlError = page.locator('.field').filter({ has: sql }).getByRole('alert');
    await expect.poll(() => sqlError.textContent(), { timeout: 15_000 }).toMatch(/^Not a valid SQL view: .+/);
    expect(await sql.getAttribute('aria-invalid')).toBe('true');
    await sql.fill('DELETE FROM public.places');
    await page.getByRole('button', { name: 'Validate' }).click();
    await expect.poll(() => sqlError.textContent(), { timeout: 15_000 }).toMatch(/^Not a valid SQL view: .+/);
    await sql.fill("SELECT id, name, geom FROM public.places WHERE kind = 'city'");
    await page.getByRole('button', { name: 'Validate' }).click();
    const columns = page.getByRole('table', { name: 'Columns of the SQL view' });
    await shown(columns);
    expect(await columns.getByRole('row').allTextContents()).toEqual([
      'ColumnType',
      expect.stringMatching(/^id/),
      expect.stringMatching(/^name/),
    ]);
    await shown(page.getByText(/Valid: geometry column geom \(point, SRID 4326\)/i));
    expect(await sql.getAttribute('aria-invalid')).toBeNull();
    const publishView = page.locator('form.publish').filter({ hasText: 'Publish as layer' });
    await publishView.getByLabel('Public id').fill(citiesId);
    expect(await publishView.getByLabel('Geometry column').inputValue()).toBe('geom');
    await publishView.getByRole('button', { name: 'Publish layer' }).click();
    await expect
      .poll(() => publishView.getByRole('status').textContent(), { timeout: 15_000 })
      .toBe(`Published ${citiesId}.`);

    // Layer groups: a group without members is refused in place, then one with the layer.
    await page.goto(`/console/workspaces/${ws.name}/layer-groups`);
    await heading(page, `Layer groups of ${ws.name}`);
    const create = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'Create a layer group' }) });
    await shown(create.getByLabel(new RegExp(`^${placesId} — `)));
    await create.getByLabel('Public id').fill(`group-${suffix}`);
    await create.getByRole('button', { name: 'Create group' }).click();
    await shown(create.locator('.error[data-status="400"]'));
    await shown(create.getByText(/^Members: /));
    await create.getByLabel(new RegExp(`^${placesId} — `)).check();
    await create.getByLabel('Title').fill('Places group');
    await create.getByRole('button', { name: 'Create group' }).click();
    const groupRow = page.getByRole('row').filter({ hasText: `group-${suffix}` });
    await shown(groupRow);
    expect(await groupRow.getByRole('cell').nth(2).textContent()).toBe(placesId);
    await expectAccessible(page, 'layer-groups');
    await groupRow.getByRole('button', { name: `Edit group-${suffix}` }).click();
    const edit = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: `Edit group-${suffix}` }) });
    await edit.getByLabel(new RegExp(`^${citiesId} — `)).check();
    await edit.getByRole('button', { name: 'Save group' }).click();
    await shown(page.getByRole('status').filter({ hasText: `Saved group-${suffix} (version 2).` }));
    await expect.poll(() => groupRow.getByRole('cell').nth(2).textContent()).toBe(`${placesId}, ${citiesId}`);

    // Deleting the service: its plan first, then the deletion's page.
    await page.goto(`/console/workspaces/${ws.name}/services/pg`);
    await heading(page, 'Service pg');
    await page.getByRole('button', { name: 'Delete service…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete service pg?' });
    await shown(dialog);
    await expect.poll(() => dialog.textContent()).toMatch(/removes \d+ items/);
    expect(await dialog.textContent()).toContain('2 layers');
    expect(await dialog.textContent()).toContain('1 layer groups');
    await dialog.getByRole('button', { name: 'Delete everything' }).click();
    await expect
      .poll(() => new URL(page.url()).pathname, { timeout: 15_000 })
      .toMatch(/^\/console\/deletions\/[0-9a-f-]{36}$/);
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  }, 300_000);

  it('registers a raster mosaic, harvests it, lists and removes granules with errors in place', async () => {
    const ws = await createWorkspace();
    const root = mosaicRoot();
    writeTiff(root, 'a.tif', 0, 10);
    writeTiff(root, 'b.tif', 2, 10);
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}/services`);
    await heading(page, `Services of ${ws.name}`);
    await page.getByLabel('Name', { exact: true }).fill('ortho');
    await page.getByLabel('Type').selectOption('raster_mosaic');
    await page.getByLabel('Root URI').fill(root);
    await page.getByRole('button', { name: 'Register service' }).click();
    await heading(page, 'Service ortho');
    // No connection test or discovery for a mosaic; the services list links to its mosaic.
    expect(await page.getByRole('button', { name: 'Test connection' }).count()).toBe(0);
    await shown(page.getByRole('link', { name: 'Mosaic of ortho' }));
    await page.getByRole('link', { name: `Services of ${ws.name}` }).click();
    await heading(page, `Services of ${ws.name}`);
    const serviceRow = page
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: 'ortho', exact: true }) });
    await shown(serviceRow.getByRole('cell', { name: 'Raster mosaic' }));
    await serviceRow.getByRole('link', { name: 'Mosaic of ortho' }).click();
    await heading(page, 'Mosaic of ortho');
    await shown(page.getByText('No granules yet'));

    // Nothing matches the pattern: 422, said under the harvest form.
    await page.getByLabel('Pattern').fill('**/*.png');
    await page.getByRole('button', { name: 'Harvest', exact: true }).click();
    await shown(page.locator('form .error[data-status="422"]'));
    await page.getByLabel('Pattern').fill('');
    await page.getByRole('button', { name: 'Harvest', exact: true }).click();
    await expect
      .poll(() => page.locator('.notice[role="status"]').first().textContent(), { timeout: 15_000 })
      .toMatch(/Generation 1: 2 granules; 2 added, 0 skipped\./);
    const granules = page.getByRole('table', { name: /Generation/ });
    await expect.poll(() => granules.getByRole('button', { name: /^Remove / }).count()).toBe(2);
    await expectAccessible(page, 'mosaic');

    await granules.getByRole('button', { name: /^Remove .*a\.tif$/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove this granule?' });
    await dialog.getByRole('button', { name: 'Remove granule' }).click();
    await expect.poll(() => granules.getByRole('button', { name: /^Remove / }).count()).toBe(1);
    await shown(page.getByRole('table', { name: 'Generation 2' }));
    // The last granule stays: 422 beside its row.
    await granules.getByRole('button', { name: /^Remove .*b\.tif$/ }).click();
    await dialog.getByRole('button', { name: 'Remove granule' }).click();
    await shown(granules.locator('.error[data-status="422"]'));

    // A harvest job (ADR 0136): a.tif comes back, b.tif is skipped; the progress is polled to the end.
    await page.getByRole('button', { name: 'Start harvest job' }).click();
    const job = page.getByRole('status', { name: 'Harvest job' });
    await expect.poll(() => job.textContent(), { timeout: 30_000 }).toMatch(/: succeeded/);
    await expect
      .poll(() => job.textContent())
      .toMatch(/2 files scanned of 2; 1 granules added, 0 removed, 1 skipped, 0 failed\./);
    expect(await job.getByRole('button', { name: 'Cancel harvest job' }).count()).toBe(0);
    await shown(page.getByRole('table', { name: 'Generation 3' }));
    await expect.poll(() => granules.getByRole('button', { name: /^Remove / }).count()).toBe(2);
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  }, 180_000);
});
