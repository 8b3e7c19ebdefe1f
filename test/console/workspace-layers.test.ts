import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
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
import { createKey, createWorkspace } from '../support/fixtures.ts';

/**
 * The workspace-wide layer list (listWorkspaceLayers, ADR 0130): every layer of every service with
 * its service, paged by 50, searched by name through the API's `q`; a viewer reads it too.
 */
vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/.test(e));

describe.skipIf(!chromiumPath)('console: the layers of a workspace', () => {
  let browser: Browser;
  let ws: { id: string; name: string };
  beforeAll(async () => {
    browser = await launchBrowser();
    ws = await createWorkspace(uniqueName('cwl'));
    const postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
    const services: Record<string, string> = {};
    for (const name of ['roads-db', 'water-db']) {
      const res = await call('POST', `/workspaces/${ws.id}/services`, {
        headers: asSuperAdmin(),
        body: { name, type: 'postgis', enabled: false, connection: postgis },
      });
      expect(res.status, res.text).toBe(201);
      services[name] = res.body.id;
    }
    // 52 drafts in one service and 3 in the other: more than one page of 50.
    const drafts: [string, string, string?][] = [
      ...Array.from(
        { length: 52 },
        (_, i) => ['roads-db', `street-${String(i).padStart(2, '0')}`] as [string, string],
      ),
      ['water-db', 'rivers', 'Rivers and ROADSIDE ditches'],
      ['water-db', 'lakes'],
      ['water-db', 'Main-Roads'],
    ];
    for (const [service, publicId, title] of drafts) {
      const res = await call('POST', `/workspaces/${ws.id}/services/${services[service]}/layers`, {
        headers: asSuperAdmin(),
        body: { source_layer: publicId, public_id: publicId, enabled: false, ...(title ? { title } : {}) },
      });
      expect(res.status, res.text).toBe(201);
    }
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('lists every layer with its service, pages by 50, and searches by public id or title', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}`);
    // Reached from the workspace's navigation.
    await page.locator('nav').getByRole('link', { name: 'Layers', exact: true }).first().click();
    await expect
      .poll(() => page.getByRole('heading', { name: `Layers in ${ws.name}`, level: 1 }).isVisible())
      .toBe(true);
    const rows = page.locator('main table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(50);
    // The API's pages are the oracle: layers come in key order (service id, then layer id), so
    // which service comes first depends on the ids.
    const api = (cursor?: string) =>
      call(
        'GET',
        `/workspaces/${ws.id}/layers?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: asSuperAdmin() },
      );
    const page1 = await api();
    expect(page1.status, page1.text).toBe(200);
    const top = page1.body.layers[0] as { id: string; service_name: string };
    // Each layer links to its own page in its service, and to its service's layers.
    const first = rows.first();
    const layerHref = await first.getByRole('link').first().getAttribute('href');
    expect(layerHref).toBe(`/console/workspaces/${ws.name}/services/${top.service_name}/layers/${top.id}`);
    expect(await first.getByRole('link', { name: top.service_name }).getAttribute('href')).toBe(
      `/console/workspaces/${ws.name}/services/${top.service_name}/layers`,
    );
    await expectAccessible(page, 'workspace-layers');

    // The next page: the other five, as the API's next page holds them.
    const page2 = await api(page1.body.next_cursor);
    expect(page2.body.layers).toHaveLength(5);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(5);
    const second = (await rows.allTextContents()).join('\n');
    for (const layer of page2.body.layers as { public_id: string; service_name: string }[]) {
      expect(second).toContain(layer.public_id);
      expect(second).toContain(layer.service_name);
    }
    // Between them, every layer: 52 streets and the three of water-db.
    const all = [...page1.body.layers, ...page2.body.layers].map((l: { public_id: string }) => l.public_id);
    expect(new Set(all).size).toBe(55);

    // A search by name, any case: the public id "Main-Roads" and the title "… ROADSIDE …".
    await page.getByRole('searchbox', { name: 'Search by name' }).fill('road');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect
      .poll(() => page.getByRole('heading', { name: 'Layers matching “road”', level: 2 }).isVisible())
      .toBe(true);
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    const found = (await rows.allTextContents()).join('\n');
    expect(found).toContain('Main-Roads');
    expect(found).toContain('Rivers and ROADSIDE ditches');
    await expectAccessible(page, 'workspace-layers-search');

    // Nothing matches: said so; clearing the search lists everything again.
    await page.getByRole('searchbox', { name: 'Search by name' }).fill('no-such-layer');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect
      .poll(() => page.getByText('No layer matches “no-such-layer”.').isVisible(), { timeout: 15_000 })
      .toBe(true);
    await page.getByRole('button', { name: 'Clear search' }).click();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(50);
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  });

  it('is read by a viewer; an unknown workspace is a 404 in place', async () => {
    const viewer = await createKey(ws.id, 'viewer');
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await signInWithToken(page, viewer.key, `/console/workspaces/${ws.name}/layers`);
    await expect.poll(() => page.locator('main table tbody tr').count(), { timeout: 15_000 }).toBe(50);
    await page.goto(`/console/workspaces/${uniqueName('nope')}/layers`);
    await expect
      .poll(() => page.getByRole('alert').textContent(), { timeout: 15_000 })
      .toMatch(/\((403|404)\)/);
    await context.close();
  });
});
