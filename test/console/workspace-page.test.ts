/**
 * The console's workspace page against the local host, signed in as super_admin: a rename and a
 * description saved with If-Match (the URL and heading follow the name), the description cleared,
 * a taken name's 409 shown in place; an empty workspace deleted at once; a workspace with content
 * showing the plan of its recursive deletion before anything goes, then followed to 100 %.
 */
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

vi.setConfig({ testTimeout: 300_000, hookTimeout: 60_000 });

const shown = (locator: Locator, timeout = 15_000) =>
  expect.poll(() => locator.isVisible(), { timeout }).toBe(true);

async function heading(page: Page, name: string) {
  await shown(page.getByRole('heading', { name, level: 1, exact: true }));
}

/** The "Rename or describe" form of the page. */
const editForm = (page: Page) =>
  page.locator('section').filter({ has: page.getByRole('heading', { name: 'Rename or describe' }) });

/** The percentage shown beside a progress bar. */
const percentOf = (page: Page, name: string) =>
  page
    .locator('.progress', { has: page.getByRole('progressbar', { name, exact: true }) })
    .locator('.progress-text')
    .textContent();

/** What the page printed as errors, beyond the browser's own line for each 4xx answer the test provokes. */
const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource/.test(e));
const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/.test(e));

const getWorkspace = (idOrName: string) =>
  call('GET', `/workspaces/${encodeURIComponent(idOrName)}`, { headers: asSuperAdmin() });

describe.skipIf(!chromiumPath)('console: the workspace page', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renames and describes a workspace, clears its description, and shows a taken name’s 409 in place', async () => {
    const ws = await createWorkspace(uniqueName('cwsp'));
    const taken = await createWorkspace(uniqueName('cwst'));
    const renamed = uniqueName('cwsr');
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}`);
    await heading(page, `Workspace ${ws.name}`);
    const form = editForm(page);
    await expect.poll(() => form.getByLabel('Name', { exact: true }).inputValue()).toBe(ws.name);
    expect(await form.getByLabel('Description', { exact: true }).inputValue()).toBe('');

    // Rename and describe in one save: the notice names the new version, the URL and heading follow.
    await form.getByLabel('Name', { exact: true }).fill(renamed);
    await form.getByLabel('Description', { exact: true }).fill('Roads of the test region');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await heading(page, `Workspace ${renamed}`);
    expect(new URL(page.url()).pathname).toBe(`/console/workspaces/${renamed}`);
    await shown(form.getByRole('status').filter({ hasText: 'Saved (version 2).' }));
    await expect.poll(() => form.getByLabel('Name', { exact: true }).inputValue()).toBe(renamed);
    expect(await form.getByLabel('Description', { exact: true }).inputValue()).toBe(
      'Roads of the test region',
    );
    const afterRename = await getWorkspace(ws.id);
    expect(afterRename.status, afterRename.text).toBe(200);
    expect(afterRename.body).toMatchObject({
      name: renamed,
      description: 'Roads of the test region',
      version: 2,
    });
    expect((await getWorkspace(ws.name)).status).toBe(404);

    // An empty description clears it.
    await form.getByLabel('Description', { exact: true }).fill('');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await shown(form.getByRole('status').filter({ hasText: 'Saved (version 3).' }));
    const cleared = await getWorkspace(ws.id);
    expect(cleared.body.version).toBe(3);
    expect(cleared.body.name).toBe(renamed);
    expect(cleared.body).not.toHaveProperty('description');
    await expect.poll(() => form.getByLabel('Description', { exact: true }).inputValue()).toBe('');

    // A name another workspace has: the API's 409, message and detail, under the form; nothing changes.
    const refusedByApi = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"3"' },
      body: { name: taken.name },
    });
    expect(refusedByApi.status, refusedByApi.text).toBe(409);
    await form.getByLabel('Name', { exact: true }).fill(taken.name);
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    const conflict = form.locator('form .error[data-status="409"]');
    await shown(conflict);
    expect(await conflict.getAttribute('role')).toBe('alert');
    expect(await conflict.locator('.error-title strong').textContent()).toBe(refusedByApi.body.message);
    expect(await conflict.locator('.error-detail').textContent()).toBe(refusedByApi.body.detail);
    expect(await form.getByRole('status').count()).toBe(0);
    await heading(page, `Workspace ${renamed}`);
    expect(new URL(page.url()).pathname).toBe(`/console/workspaces/${renamed}`);
    const unchanged = await getWorkspace(ws.id);
    expect(unchanged.body).toMatchObject({ name: renamed, version: 3 });
    expect((await getWorkspace(taken.id)).body).toMatchObject({ name: taken.name, version: 1 });
    await expectAccessible(page, 'workspace-rename-conflict');

    // Read again: what the form shows is what the API keeps.
    await page.reload();
    await heading(page, `Workspace ${renamed}`);
    await expect.poll(() => form.getByLabel('Name', { exact: true }).inputValue()).toBe(renamed);
    expect(await form.getByLabel('Description', { exact: true }).inputValue()).toBe('');
    await expectAccessible(page, 'workspace');

    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });

  it('deletes an empty workspace at once after confirming and returns to the list', async () => {
    const ws = await createWorkspace(uniqueName('cwse'));
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}`);
    await heading(page, `Workspace ${ws.name}`);

    await page.getByRole('button', { name: 'Delete workspace…' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete workspace ${ws.name}?` });
    await shown(dialog);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await heading(page, 'Workspaces');
    expect(new URL(page.url()).pathname).toBe('/console/workspaces');
    await shown(page.getByRole('heading', { name: 'All workspaces' }));
    expect((await getWorkspace(ws.id)).status).toBe(404);
    expect(cspErrors(errors)).toEqual([]);
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });

  it('shows the plan of a workspace with content before deleting it, then follows the recursive deletion to 100 %', async () => {
    const ws = await createWorkspace(uniqueName('cwsd'));
    const postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
    const svc = await call('POST', `/workspaces/${ws.id}/services`, {
      headers: asSuperAdmin(),
      body: { name: 'doomed', type: 'postgis', enabled: false, connection: postgis },
    });
    expect(svc.status, svc.text).toBe(201);
    for (const id of ['roads', 'rivers']) {
      const layer = await call('POST', `/workspaces/${ws.id}/services/${svc.body.id}/layers`, {
        headers: asSuperAdmin(),
        body: { source_layer: id, public_id: id, enabled: false },
      });
      expect(layer.status, layer.text).toBe(201);
    }
    // What the API plans for it (a delete without recurse refuses and leaves it as it was).
    const refused = await call('DELETE', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    expect(refused.status, refused.text).toBe(409);
    const total = refused.body.plan.total as number;
    expect(total).toBeGreaterThanOrEqual(3);

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}`);
    await heading(page, `Workspace ${ws.name}`);

    await page.getByRole('button', { name: 'Delete workspace…' }).click();
    const ask = page.getByRole('dialog', { name: `Delete workspace ${ws.name}?` });
    await shown(ask);
    await ask.getByRole('button', { name: 'Delete', exact: true }).click();
    // Not empty: the same dialog now shows the plan and asks once more; nothing is deleted yet.
    const planDialog = page.getByRole('dialog', {
      name: `Delete workspace ${ws.name} and everything in it?`,
    });
    await shown(planDialog);
    await expect.poll(() => ask.isVisible()).toBe(false);
    const plan = planDialog.locator('.plan');
    expect(await plan.locator('p').textContent()).toBe(
      `Deleting workspace ${ws.name} removes ${total} items:`,
    );
    const items = await plan.getByRole('listitem').allTextContents();
    // The layers by name, in the order the plan lists them.
    expect(items.filter((item) => /^2 layers: (roads, rivers|rivers, roads)$/.test(item))).toHaveLength(1);
    expect(items).toContain('1 services');
    const stillThere = await getWorkspace(ws.id);
    expect(stillThere.status).toBe(200);
    expect(
      (await call('GET', `/workspaces/${ws.id}/services/${svc.body.id}`, { headers: asSuperAdmin() })).status,
    ).toBe(200);
    await expectAccessible(page, 'workspace-delete-plan');

    // Confirmed: the deletion's page, followed to 100 %, and the workspace gone.
    await planDialog.getByRole('button', { name: 'Delete everything', exact: true }).click();
    await heading(page, `Deletion of workspace ${ws.name}`);
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/deletions\/[0-9a-f-]{36}$/);
    await expect.poll(() => percentOf(page, 'Deletion progress'), { timeout: 90_000 }).toBe('100 %');
    await expect.poll(() => page.locator('dl.facts .badge').first().textContent()).toBe('completed');
    await shown(page.getByText(`${total} of ${total} items deleted`));
    expect((await getWorkspace(ws.id)).status).toBe(404);
    expect((await getWorkspace(ws.name)).status).toBe(404);
    expect(cspErrors(errors)).toEqual([]);
    await context.close();
  });
});
