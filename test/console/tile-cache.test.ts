/**
 * The console's caches (ADR 0139, issue #26) against the shared local host: a workspace's "Tile
 * cache" page — a seed job started from its form for one layer at zoom 0–2 finishes and the stored
 * tiles the page shows are the API's (more than none), clearing the workspace's caches after a
 * confirmation moves the generation, a long job shows a live progress bar and is cancelled from its
 * row, and a viewer reads the figures and the jobs without any admin control or refusal — and the
 * super_admin's "Caches" page, where clearing `descriptions` moves its epoch.
 */
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
import { asSuperAdmin, call } from '../support/client.ts';
import { publishLayer, servedWorkspace, setSettings } from '../support/data-plane.ts';
import { createKey } from '../support/fixtures.ts';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

const shown = (locator: Locator, timeout = 15_000) =>
  expect.poll(() => locator.isVisible(), { timeout }).toBe(true);

/** The value beside a term of the tile cache's statistics. */
const fact = (page: Page, term: string) =>
  page
    .locator('section', { has: page.getByRole('heading', { name: 'Statistics' }) })
    .locator(`dt:text-is("${term}") + dd`);

const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource/.test(e));

async function stats(ws: string) {
  const res = await call('GET', `/workspaces/${ws}/tile-cache/stats`, { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return res.body as { entries: number; bytes: number; generation: number };
}

async function jobs(ws: string) {
  const res = await call('GET', `/workspaces/${ws}/tile-cache/jobs`, { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return res.body.jobs as { id: string; status: string; type: string; layers: string[] }[];
}

async function descriptionsEpoch(): Promise<number> {
  const res = await call('GET', '/cache/stats', { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return (res.body.caches as { type: string; epoch: number }[]).find((c) => c.type === 'descriptions')
    ?.epoch as number;
}

describe.skipIf(!chromiumPath)('console: caches', () => {
  let browser: Browser;
  let ws: { id: string; name: string };
  let admin: string;
  let viewer: string;
  beforeAll(async () => {
    browser = await launchBrowser();
    const served = await servedWorkspace();
    ws = served.ws;
    await publishLayer(ws.id, served.service.id, { source_layer: 'public.roads' });
    await publishLayer(ws.id, served.service.id, { source_layer: 'public.places', public: true });
    await setSettings(ws.id, 'ogc-tiles', { enabled: true });
    admin = (await createKey(ws.id, 'admin')).key;
    viewer = (await createKey(ws.id, 'viewer')).key;
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('seeds one layer from the form, shows the stored tiles, clears the workspace’s caches, and shows a running job’s progress with its Cancel', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    const progressCalls: string[] = [];
    page.on('request', (request) => {
      if (/\/tile-cache\/jobs\/[^/]+\/progress$/.test(new URL(request.url()).pathname))
        progressCalls.push(request.url());
    });
    // A workspace admin finds the page in the workspace's navigation.
    await signInWithToken(page, admin, `/console/workspaces/${ws.name}`);
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Tile cache', exact: true })
      .click();
    await shown(page.getByRole('heading', { name: `Tile cache of ${ws.name}`, level: 1 }));
    await expect.poll(() => fact(page, 'Tiles stored').textContent()).toBe('0');
    expect(await fact(page, 'Tiles live in').textContent()).toBe("the local host's directory");
    expect(await fact(page, 'Cache').textContent()).toBe('on');
    await shown(page.getByText('No tile cache jobs yet.'));

    // A seed job of one layer at zoom 0–2, from the form.
    const layers = page.getByLabel('Layers', { exact: true });
    await expect.poll(() => layers.locator('option').allTextContents()).toEqual(['places', 'roads']);
    await page.getByLabel('Job type').selectOption('seed');
    await layers.selectOption(['roads']);
    await page.getByLabel('Zoom from').fill('0');
    await page.getByLabel('Zoom to').fill('2');
    await page.getByRole('button', { name: 'Start job', exact: true }).click();
    await expect.poll(async () => (await jobs(ws.id)).length).toBe(1);
    const [seed] = await jobs(ws.id);
    expect(seed).toMatchObject({ type: 'seed', layers: ['roads'] });
    const seedRow = page.getByRole('row').filter({ hasText: seed?.id as string });
    await expect.poll(() => seedRow.textContent(), { timeout: 120_000 }).toContain('succeeded');
    await expect.poll(async () => (await stats(ws.id)).entries).toBeGreaterThan(0);
    const seeded = await stats(ws.id);
    await expect
      .poll(() => fact(page, 'Tiles stored').textContent())
      .toBe(seeded.entries.toLocaleString('en-US'));
    expect(await seedRow.getByRole('button').count()).toBe(0);
    await expectAccessible(page, 'tile-cache');

    // Clearing the workspace's caches asks first, then moves the generation.
    await page.getByRole('button', { name: 'Clear caches…' }).click();
    const dialog = page.getByRole('dialog', { name: `Clear the caches of ${ws.name}?` });
    await shown(dialog);
    await expectAccessible(page, 'tile-cache-clear-confirm');
    await dialog.getByRole('button', { name: 'Clear caches', exact: true }).click();
    await shown(page.getByRole('status').filter({ hasText: `generation ${seeded.generation + 1}` }));
    await expect.poll(() => fact(page, 'Generation').textContent()).toBe(String(seeded.generation + 1));
    expect((await stats(ws.id)).generation).toBe(seeded.generation + 1);
    expect(await fact(page, 'Last cleared').locator('time').count()).toBe(1);

    // A long job: its progress bar moves while the page polls it, and Cancel stops it.
    await layers.selectOption(['places']);
    await page.getByLabel('Zoom to').fill('9');
    await page.getByRole('button', { name: 'Start job', exact: true }).click();
    await expect.poll(async () => (await jobs(ws.id)).length).toBe(2);
    const long = (await jobs(ws.id)).at(-1) as { id: string };
    const longRow = page.getByRole('row').filter({ hasText: long.id });
    await shown(longRow.getByRole('progressbar', { name: `Tiles of job ${long.id}` }), 30_000);
    await expect.poll(() => progressCalls.filter((url) => url.includes(long.id)).length).toBeGreaterThan(1);
    // Newest first: the long job's row comes before the seed's.
    const order = await page.locator('tbody tr code').allTextContents();
    expect(order.indexOf(long.id)).toBeLessThan(order.indexOf(seed?.id as string));
    await expectAccessible(page, 'tile-cache-running');
    await longRow.getByRole('button', { name: `Cancel job ${long.id}` }).click();
    await expect.poll(() => longRow.textContent(), { timeout: 120_000 }).toContain('cancelled');
    const after = await call('GET', `/workspaces/${ws.id}/tile-cache/jobs/${long.id}`, {
      headers: asSuperAdmin(),
    });
    expect(after.body).toMatchObject({ status: 'cancelled', cancel_requested: true });
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });

  it('shows a viewer the figures and the jobs without any admin control or refusal', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, viewer, `/console/workspaces/${ws.name}/tile-cache`);
    await shown(page.getByRole('heading', { name: `Tile cache of ${ws.name}`, level: 1 }));
    const now = await stats(ws.id);
    await expect.poll(() => fact(page, 'Generation').textContent()).toBe(String(now.generation));
    const listed = await jobs(ws.id);
    await shown(page.getByRole('row').filter({ hasText: listed[0]?.id as string }));
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('button', { name: 'Clear caches…' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Start job' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Cancel job/ }).count()).toBe(0);
    expect(await page.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByText(/\b403\b/).count()).toBe(0);
    await expectAccessible(page, 'tile-cache-viewer');
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });

  it('lists the caches for a super_admin and clears descriptions after a confirmation: its epoch moves', async () => {
    const before = await descriptionsEpoch();
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, '/console/workspaces');
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Caches', exact: true })
      .click();
    await shown(page.getByRole('heading', { name: 'Caches', level: 1 }));
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'descriptions' }) });
    await shown(row);
    for (const type of ['tiles', 'descriptions', 'connections'])
      await shown(page.getByRole('rowheader', { name: type, exact: true }));
    await expectAccessible(page, 'caches');
    await row.getByRole('button', { name: 'Clear descriptions' }).click();
    const dialog = page.getByRole('dialog', { name: 'Clear the descriptions cache?' });
    await shown(dialog);
    await dialog.getByRole('button', { name: 'Clear', exact: true }).click();
    const notice = page.getByRole('status').filter({ hasText: 'Cleared descriptions: epochs now' });
    await shown(notice);
    const after = await descriptionsEpoch();
    expect(after).toBeGreaterThan(before);
    expect(await notice.textContent()).toMatch(/descriptions \d+.*effective within \d+ s\./);
    await expect.poll(() => row.getByRole('cell').nth(3).textContent()).toBe(after.toLocaleString('en-US'));
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });
});
