import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  chromiumPath,
  expectAccessible,
  launchBrowser,
  newConsoleContext,
  signInWithToken,
  watchConsoleErrors,
} from '../support/browser.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';
import { importsOf, pointsGeoJson } from '../support/imports.ts';

/**
 * The console's imports and deletions pages against the local host: a GeoJSON dropped and
 * uploaded with its byte progress, loaded, previewed, re-planned, published, its history shown and
 * rolled back; a recursive service deletion followed to 100 %; errors shown where they happen.
 */
vi.setConfig({ testTimeout: 300_000, hookTimeout: 60_000 });

/** "value/max" of a native progress bar. */
const progressOf = (bar: Locator) =>
  bar.evaluate((el) => {
    const progress = el as unknown as { value: number; max: number };
    return `${progress.value}/${progress.max}`;
  });
/** The percentage shown beside a progress bar. */
const percentOf = (page: Page, name: string) =>
  page
    .locator('.progress', { has: page.getByRole('progressbar', { name, exact: true }) })
    .locator('.progress-text')
    .textContent();
const statusOf = (page: Page) => page.locator('dl.facts .badge').first().textContent();
const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/.test(e));

describe.skipIf(!chromiumPath)('console: imports and deletions', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('drops a GeoJSON, shows the upload refused then its bytes, loads, previews, re-plans, publishes and rolls back', async () => {
    const ws = await createWorkspace(uniqueName('cimp'));
    const file = pointsGeoJson(300);
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}/imports`);
    await expect
      .poll(() => page.getByRole('heading', { name: `Imports in ${ws.name}`, level: 1 }).isVisible())
      .toBe(true);
    await expect.poll(() => page.getByText('No imports.').isVisible()).toBe(true);
    await expectAccessible(page, 'imports');

    // The storage refuses the first upload (as S3 answers a bad policy): shown in place, with the XML's code.
    await page.route('**/local-uploads', (route) =>
      route.fulfill({
        status: 403,
        contentType: 'application/xml',
        body: '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Invalid according to Policy</Message></Error>',
      }),
    );
    // Dropped on the drop zone, as a file dragged from the desktop.
    const transfer = await page.evaluateHandle(
      `(() => { const t = new DataTransfer(); t.items.add(new File([${JSON.stringify(file.toString('utf8'))}], 'towns.geojson', { type: 'application/geo+json' })); return t; })()`,
    );
    const zone = page.locator('.dropzone');
    await zone.dispatchEvent('dragenter', { dataTransfer: transfer });
    await zone.dispatchEvent('dragover', { dataTransfer: transfer });
    await zone.dispatchEvent('drop', { dataTransfer: transfer });
    await expect.poll(() => page.locator('.dropzone .chosen').textContent()).toContain('towns.geojson');
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toMatch(/refused \(403 AccessDenied\): Invalid according to Policy/);

    // The same ticket once the storage takes it: the bytes go up to 100 %, then the import starts.
    await page.unroute('**/local-uploads');
    await page.getByRole('button', { name: 'Upload again' }).click();
    const upload = page.getByRole('progressbar', { name: 'Upload', exact: true });
    await expect.poll(() => progressOf(upload), { timeout: 30_000 }).toBe(`${file.length}/${file.length}`);
    expect(await percentOf(page, 'Upload')).toBe('100 %');
    const open = page.getByRole('link', { name: 'Open import towns' });
    await expect.poll(() => open.isVisible(), { timeout: 30_000 }).toBe(true);
    await expect
      .poll(() => page.getByRole('table').getByRole('link', { name: 'towns' }).isVisible())
      .toBe(true);
    await open.click();

    // The import's page follows the workflow to ready_to_publish: every feature loaded.
    await expect
      .poll(() => page.getByRole('heading', { name: 'Import towns', level: 1 }).isVisible())
      .toBe(true);
    await expect.poll(() => statusOf(page), { timeout: 90_000 }).toBe('ready to publish');
    await expect.poll(() => percentOf(page, 'Features loaded')).toBe('100 %');
    await expect.poll(() => page.getByText('300 of 300 features loaded').isVisible()).toBe(true);
    // The preview of the staged features.
    await expect.poll(() => page.getByText('The first 10 features of towns').isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('cell', { name: 'P0', exact: true }).isVisible()).toBe(true);
    await expectAccessible(page, 'import-ready');

    // A plan the file can't take: the 400 shows under the form, the import stays as it was.
    const column = page.getByRole('textbox', { name: 'Column name', exact: true });
    await column.fill('Bad Name');
    await page.getByRole('button', { name: 'Save plan and reload' }).click();
    await expect
      .poll(() => page.locator('form').getByRole('alert').textContent())
      .toMatch(/not a valid column name.*\(400\)|\(400\).*not a valid column name/s);
    expect(await statusOf(page)).toBe('ready to publish');

    // A real one: the field renamed, the data loaded again with it.
    await column.fill('label');
    await page.getByRole('button', { name: 'Save plan and reload' }).click();
    // Loaded again: the history holds a second ready_to_publish, the preview the renamed column.
    const readyEvents = page.locator('ol.timeline > li', { hasText: 'ready to publish' });
    await expect.poll(() => readyEvents.count(), { timeout: 90_000 }).toBe(2);
    await expect.poll(() => statusOf(page), { timeout: 90_000 }).toBe('ready to publish');
    await expect
      .poll(() => page.getByRole('columnheader', { name: 'label', exact: true }).isVisible(), {
        timeout: 15_000,
      })
      .toBe(true);

    // Publish: the staged layer becomes a service.
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await expect.poll(() => statusOf(page), { timeout: 90_000 }).toBe('published');
    const imported = await call('GET', `/workspaces/${ws.id}/imports`, { headers: asSuperAdmin() });
    const job = imported.body.imports[0] as { id: string; service_name: string; service_id: string };
    await expect
      .poll(() => page.getByRole('link', { name: job.service_name, exact: true }).getAttribute('href'))
      .toBe(`/console/workspaces/${ws.name}/services/${job.service_name}`);

    // The history as a timeline, oldest first.
    const timeline = page.locator('ol.timeline > li');
    await expect.poll(() => timeline.count()).toBeGreaterThanOrEqual(6);
    expect(await timeline.first().textContent()).toContain('awaiting upload');
    await expect.poll(() => timeline.last().textContent()).toContain('published');
    await expectAccessible(page, 'import-published');

    // Rollback, confirmed in a dialog: the service's deletion shows, the import ends rolled back.
    await page.getByRole('button', { name: 'Roll back…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll back import towns?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await expectAccessible(page, 'import-rollback-confirm');
    await dialog.getByRole('button', { name: 'Roll back', exact: true }).click();
    const follow = page.getByRole('link', { name: 'follow the deletion' });
    await expect.poll(() => follow.getAttribute('href')).toMatch(/^\/console\/deletions\/[0-9a-f-]{36}$/);
    await expect.poll(() => statusOf(page), { timeout: 90_000 }).toBe('rolled back');
    await expect.poll(() => percentOf(page, 'Rollback deletion')).toBe('100 %');
    await expect.poll(() => timeline.last().textContent()).toContain('rolled back');
    const service = await call('GET', `/workspaces/${ws.id}/services/${job.service_id}`, {
      headers: asSuperAdmin(),
    });
    expect(service.status).toBe(404);
    expect(await page.getByRole('button', { name: 'Publish', exact: true }).count()).toBe(0);
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  });

  it("names the new layer, or appends to an imported layer chosen from a list; the import's page says where the rows went (ADR 0127)", async () => {
    const ws = await createWorkspace(uniqueName('ctgt'));
    const imports = importsOf(ws.id);
    const first = await imports.uploaded(pointsGeoJson(20), 'towns.geojson', { auto_publish: true });
    const done = await imports.until(first.id, ['published', 'failed'], 120_000);
    expect(done.body.status, done.text).toBe('published');

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}/imports`);
    await expect
      .poll(() => page.getByRole('heading', { name: `Imports in ${ws.name}`, level: 1 }).isVisible())
      .toBe(true);
    // A new layer names itself; the other choices ask for the layer instead of a service.
    await expect.poll(() => page.getByRole('textbox', { name: 'Layer name' }).isVisible()).toBe(true);
    await page.getByRole('radio', { name: 'Append to an existing layer' }).check();
    const select = page.getByRole('combobox', { name: 'Layer to append to' });
    await expect.poll(() => select.isVisible()).toBe(true);
    expect(await page.getByRole('textbox', { name: 'Service name' }).count()).toBe(0);
    await expectAccessible(page, 'import-append');
    await select.selectOption('towns');
    await page.getByRole('checkbox', { name: /Publish as soon as it is loaded/ }).check();
    await page.locator('input[type=file]').setInputFiles({
      name: 'more.geojson',
      mimeType: 'application/geo+json',
      buffer: pointsGeoJson(5, 100),
    });
    await page.getByRole('button', { name: 'Upload and import' }).click();
    const open = page.getByRole('link', { name: 'Open import more' });
    await expect.poll(() => open.isVisible(), { timeout: 60_000 }).toBe(true);
    await open.click();
    await expect.poll(() => statusOf(page), { timeout: 120_000 }).toBe('published');
    await expect.poll(() => page.getByText('none: into existing layers').isVisible()).toBe(true);
    await expect
      .poll(() =>
        page
          .getByText(/5 rows appended \(fids 21–25; 25 rows now\)/)
          .first()
          .isVisible(),
      )
      .toBe(true);
    await expect
      .poll(() =>
        page
          .getByText(/appends to/)
          .first()
          .isVisible(),
      )
      .toBe(true);
    await expectAccessible(page, 'import-appended');
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  });

  it('follows a recursive service deletion to 100 % and lists it; an unknown one is a 404 in place', async () => {
    const ws = await createWorkspace(uniqueName('cdel'));
    const postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
    const svc = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'doomed', type: 'postgis', enabled: false, connection: postgis },
    });
    expect(svc.status, svc.text).toBe(201);
    for (const id of ['roads', 'rivers', 'towns', 'parcels', 'lakes']) {
      const layer = await call('POST', `/workspaces/${ws.id}/services/${svc.body.id}/layers`, {
        headers: asSuperAdmin(),
        body: { source_layer: id, public_id: id, enabled: false },
      });
      expect(layer.status, layer.text).toBe(201);
    }
    const started = await call('DELETE', `/workspaces/${ws.id}/services/${svc.body.id}?recurse=true`, {
      headers: asSuperAdmin(),
    });
    expect(started.status, started.text).toBe(202);
    const id = started.body.id as string;

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/deletions/${id}`);
    await expect
      .poll(() => page.getByRole('heading', { name: 'Deletion of service doomed', level: 1 }).isVisible())
      .toBe(true);
    const bar = page.getByRole('progressbar', { name: 'Deletion progress', exact: true });
    await expect.poll(() => percentOf(page, 'Deletion progress'), { timeout: 60_000 }).toBe('100 %');
    const [value, max] = (await progressOf(bar)).split('/').map(Number);
    expect(max).toBeGreaterThanOrEqual(5);
    expect(value).toBe(max);
    await expect.poll(() => statusOf(page)).toBe('completed');
    await expect.poll(() => page.getByText(`${max} of ${max} items deleted`).isVisible()).toBe(true);
    // The plan it carried: the five layers.
    expect(await page.locator('.plan').textContent()).toMatch(/5 layers: /);
    await expectAccessible(page, 'deletion');

    // The list, filtered to the workspace: the operation, its status and a full bar.
    await page.getByRole('link', { name: 'All deletions' }).click();
    await expect
      .poll(() => page.getByRole('heading', { name: 'Deletions', level: 1 }).isVisible())
      .toBe(true);
    await page.getByLabel('Workspace', { exact: true }).fill(ws.name);
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('button', { name: 'Filter' }).click();
    const row = page.getByRole('row', { name: /service doomed/ });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('.badge').textContent()).toBe('completed');
    expect(await row.locator('.progress-text').textContent()).toBe('100 %');
    await expectAccessible(page, 'deletions');

    // A filter the API refuses (a name over 128 characters), and an operation that doesn't exist: both shown in place.
    await page.getByLabel('Workspace', { exact: true }).fill('w'.repeat(129));
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(400\)/);
    await page.goto(`/console/deletions/${randomUUID()}`);
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(404\)/);
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  });
});
