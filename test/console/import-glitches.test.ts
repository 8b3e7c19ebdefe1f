import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
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
 * The console glitches of issue #25, each as a user met it: a banner that still said "queued"
 * after the import had moved on, a red 409 in Preview while the file was still being read,
 * progress that ran backwards and left a loaded import at 77 %, links to services that are gone,
 * and two delete-workspace dialogs that contradicted each other; sizes in one unit system (IEC).
 */
vi.setConfig({ testTimeout: 300_000, hookTimeout: 60_000 });

const percentOf = (page: Page, name: string) =>
  page
    .locator('.progress', { has: page.getByRole('progressbar', { name, exact: true }) })
    .locator('.progress-text')
    .textContent();
const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/.test(e));
const postgis = () =>
  JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
/** Decimal (SI) or ambiguous size units: every size in the console is IEC. */
const SI_UNITS = /\d\s?(kB|KB|MB|GB|TB)\b/;

type Job = Record<string, unknown> & { id: string; discovery: { size_bytes: number } };

describe.skipIf(!chromiumPath)('console: the glitches of issue #25', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('follows an uploaded import in its banner instead of leaving it "queued", in IEC units', async () => {
    const ws = await createWorkspace(uniqueName('cgq'));
    const file = pointsGeoJson(2000);
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}/imports`);
    await page.getByLabel('File to import').setInputFiles({
      name: 'towns.geojson',
      mimeType: 'application/geo+json',
      buffer: file,
    });
    const chosen = await page.locator('.dropzone .chosen').textContent();
    expect(chosen).toMatch(/\(\d+(\.\d)? KiB\)/);
    await page.getByRole('button', { name: 'Upload and import' }).click();
    const banner = page.locator('p.notice', { hasText: 'Uploaded' });
    await expect.poll(() => banner.isVisible(), { timeout: 30_000 }).toBe(true);
    // The import moves on by itself: the banner says where it is now, not what startImport answered.
    await expect
      .poll(() => banner.locator('.badge').textContent(), { timeout: 90_000 })
      .toBe('ready to publish');
    expect(await banner.textContent()).toMatch(/Uploaded \d+(\.\d)? KiB; import towns is ready to publish\./);
    expect(await percentOf(page, 'Upload')).toBe('100 %');
    expect(await page.locator('main').textContent()).not.toMatch(SI_UNITS);
    await expectAccessible(page, 'glitch-banner');
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  });

  it('shows "still reading" instead of a 409 in Preview, and progress that never runs backwards', async () => {
    const ws = await createWorkspace(uniqueName('cgp'));
    const imports = importsOf(ws.id);
    const started = await imports.uploaded(pointsGeoJson(300), 'towns.geojson');
    const ready = await imports.until(started.id, ['ready_to_publish']);
    expect(ready.body.status).toBe('ready_to_publish');
    const real = ready.body as Job;
    const size = real.discovery.size_bytes;

    // The workflow's states as a user's poll met them, in order (the API's counters as they were).
    const { discovery: _d, plan: _p, ...undiscovered } = real;
    const states: Record<string, unknown>[] = [
      // Still reading the file: nothing discovered, nothing staged.
      {
        ...undiscovered,
        status: 'running',
        phase: 'discover',
        processed_bytes: Math.floor(size / 3),
        processed_features: 0,
        processed_layers: 0,
        total_layers: 0,
      },
      // Loading: the load's own byte count starts again from 0 (discovery had read the whole file).
      {
        ...real,
        status: 'running',
        phase: 'transform',
        processed_bytes: Math.floor(size / 5),
        processed_features: 200,
        processed_layers: 0,
        total_layers: 1,
      },
      // A chunk re-run from its checkpoint: the counters step back.
      {
        ...real,
        status: 'running',
        phase: 'transform',
        processed_bytes: Math.floor(size / 6),
        processed_features: 150,
        processed_layers: 0,
        total_layers: 1,
      },
      // Loaded: the load's counters end short of the file (77 % of its bytes), the import is done.
      {
        ...real,
        status: 'ready_to_publish',
        phase: 'transform',
        processed_bytes: Math.floor(size * 0.77),
        processed_features: 231,
        processed_layers: 1,
        total_layers: 1,
      },
    ];
    let stage = 0;
    let version = real.version as number;
    const previews: string[] = [];
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await page.route(`**/api/v1/workspaces/*/imports/${real.id}`, (route: Route) => {
      if (route.request().method() !== 'GET') return route.fallback();
      version += 1;
      return route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ ...states[stage], version }),
      });
    });
    // While the load has staged nothing yet the API answers 409 nothing_staged.
    let stagedYet = false;
    await page.route(`**/api/v1/workspaces/*/imports/${real.id}/preview**`, (route: Route) => {
      previews.push(states[stage]?.phase as string);
      if (stagedYet) return route.fallback();
      return route.fulfill({
        status: 409,
        contentType: 'application/json',
        body: JSON.stringify({
          code: 409,
          message: 'Conflict',
          detail: "The import is 'running': no features are staged for layer 'towns'.",
          reason: 'nothing_staged',
          request_id: 'test',
        }),
      });
    });
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}/imports/${real.id}`);
    const preview = page.locator('section', {
      has: page.getByRole('heading', { name: 'Preview', level: 2 }),
    });

    // Reading: a neutral note, no request for a preview, no alert.
    await expect
      .poll(() => preview.getByText('Still reading the file…').isVisible(), { timeout: 15_000 })
      .toBe(true);
    expect(await preview.getByRole('alert').count()).toBe(0);
    expect(previews).toEqual([]);
    await expect
      .poll(() => page.getByText(/Reading the file: .* so far/).textContent())
      .toMatch(/KiB so far/);
    await expectAccessible(page, 'glitch-reading');

    // Loading: 200 of 300 features; the preview's 409 is "still loading", not an error.
    stage = 1;
    await expect.poll(() => percentOf(page, 'Features loaded'), { timeout: 15_000 }).toBe('67 %');
    expect(await page.getByText('200 of 300 features loaded').isVisible()).toBe(true);
    await expect.poll(() => preview.getByText(/Still loading/).isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await preview.getByRole('alert').count()).toBe(0);
    // The file was read whole by discovery: its bar stays full while the load reads it again.
    expect(await percentOf(page, 'File read')).toBe('100 %');

    // The counters step back: nothing shown does.
    stage = 2;
    const polled = version;
    await expect.poll(() => version, { timeout: 15_000 }).toBeGreaterThan(polled + 1);
    expect(await percentOf(page, 'Features loaded')).toBe('67 %');
    expect(await page.getByText('200 of 300 features loaded').isVisible()).toBe(true);
    expect(await percentOf(page, 'File read')).toBe('100 %');

    // Loaded: every bar full, whatever the load's own byte count says.
    stagedYet = true;
    stage = 3;
    await expect.poll(() => percentOf(page, 'Features loaded'), { timeout: 15_000 }).toBe('100 %');
    expect(await page.getByText('300 of 300 features loaded').isVisible()).toBe(true);
    expect(await percentOf(page, 'File read')).toBe('100 %');
    const read = await page.locator('.progress-counts', { hasText: ' read' }).first().textContent();
    const [shown, of] = (read ?? '').replace(/ read$/, '').split(' of ');
    expect(shown).toBe(of);
    expect(read).toMatch(/KiB of .* KiB read/);
    expect(await page.getByText('1 of 1 layer done').isVisible()).toBe(true);
    await expect.poll(() => preview.getByRole('cell', { name: 'P0', exact: true }).isVisible()).toBe(true);
    expect(await page.locator('main').textContent()).not.toMatch(SI_UNITS);
    await expectAccessible(page, 'glitch-loaded');
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  });

  it('links an import to its service only while the service exists; deletions link no service', async () => {
    const ws = await createWorkspace(uniqueName('cgl'));
    const imports = importsOf(ws.id);
    const started = await imports.uploaded(pointsGeoJson(20), 'towns.geojson', {
      auto_publish: true,
      service_name: 'towns-svc',
    });
    const published = await imports.until(started.id, ['published']);
    expect(published.body.status, published.text).toBe('published');
    const serviceId = published.body.service_id as string;

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}/imports`);
    const row = page.getByRole('row', { name: /towns/ });
    // Published and there: a link to it.
    await expect
      .poll(() => row.getByRole('link', { name: 'towns-svc', exact: true }).getAttribute('href'), {
        timeout: 15_000,
      })
      .toBe(`/console/workspaces/${ws.name}/services/towns-svc`);

    // Rolled back: the service is gone (the import still names it and keeps its id): no link, marked deleted.
    const rollback = await imports.rollback(started.id);
    expect(rollback.status, rollback.text).toBe(202);
    const rolledBack = await imports.until(started.id, ['rolled_back'], 90_000);
    expect(rolledBack.body.status).toBe('rolled_back');
    expect(rolledBack.body.service_id).toBe(serviceId);
    const deletion = { body: { id: rolledBack.body.rollback_operation_id as string } };
    expect(
      (await call('GET', `/workspaces/${ws.id}/services/${serviceId}`, { headers: asSuperAdmin() })).status,
    ).toBe(404);
    await page.reload();
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('towns-svc (deleted)');
    expect(await page.locator('main a[href*="/services/"]').count()).toBe(0);
    await expectAccessible(page, 'glitch-imports-service-gone');

    await page.getByRole('link', { name: 'towns', exact: true }).click();
    await expect
      .poll(() => page.getByRole('heading', { name: 'Import towns', level: 1 }).isVisible())
      .toBe(true);
    await expect
      .poll(() => page.locator('dl.facts').textContent(), { timeout: 15_000 })
      .toContain('towns-svc (deleted)');
    expect(await page.locator('main a[href*="/services/"]').count()).toBe(0);

    // The deletions: the service's operation names it as deleted and links no service page.
    await page.goto(`/console/deletions/${deletion.body.id}`);
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent())
      .toBe('Deletion of service towns-svc');
    await page.goto('/console/deletions');
    const opRow = page.getByRole('row', { name: /service towns-svc/ });
    await expect.poll(() => opRow.textContent(), { timeout: 15_000 }).toContain('towns-svc (deleted)');
    expect(await page.locator('main a[href*="/services/"]').count()).toBe(0);
    await context.close();
  });

  it('asks once, in one dialog that says what goes, before deleting a workspace', async () => {
    const full = await createWorkspace(uniqueName('cgw'));
    const svc = await call('POST', `/workspaces/${full.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'roads-db', type: 'postgis', enabled: false, connection: postgis() },
    });
    expect(svc.status, svc.text).toBe(201);
    const layer = await call('POST', `/workspaces/${full.id}/services/${svc.body.id}/layers`, {
      headers: asSuperAdmin(),
      body: { source_layer: 'roads', enabled: false },
    });
    expect(layer.status, layer.text).toBe(201);

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${full.name}`);
    await page.getByRole('button', { name: 'Delete workspace…' }).click();
    const open = page.locator('dialog[open]');
    await expect.poll(() => open.count()).toBe(1);
    const first = await open.textContent();
    // The first words already name everything that goes, services and layers included.
    expect(first).toMatch(/services, with their layers/);
    expect(first).toMatch(/API keys, claim mappings and settings/);
    await expectAccessible(page, 'glitch-delete-workspace-ask');
    await open.getByRole('button', { name: 'Delete', exact: true }).click();
    // It holds a service: the same dialog lists the plan and asks once more; nothing is deleted yet.
    await expect
      .poll(() =>
        page.getByRole('dialog', { name: `Delete workspace ${full.name} and everything in it?` }).isVisible(),
      )
      .toBe(true);
    expect(await open.count()).toBe(1);
    expect(await open.locator('.plan').textContent()).toMatch(/1 layers?: roads/);
    expect((await call('GET', `/workspaces/${full.id}`, { headers: asSuperAdmin() })).status).toBe(200);
    await expectAccessible(page, 'glitch-delete-workspace-plan');
    await open.getByRole('button', { name: 'Delete everything' }).click();
    await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(/\/console\/deletions\/[0-9a-f-]{36}$/);

    // An empty workspace: the one dialog, one click, gone.
    const empty = await createWorkspace(uniqueName('cgw'));
    await page.goto(`/console/workspaces/${empty.name}`);
    await page.getByRole('button', { name: 'Delete workspace…' }).click();
    await expect.poll(() => open.count()).toBe(1);
    await open.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(/\/console\/workspaces$/);
    expect((await call('GET', `/workspaces/${empty.id}`, { headers: asSuperAdmin() })).status).toBe(404);
    await context.close();
  });
});
