/**
 * The console's views of the catalog's health, against the local host: the workspace overview's
 * "Contents" (getWorkspaceSummary, ADR 0137) — shown to the workspace's admins with the API's
 * numbers, absent for a viewer without any refusal on the page — and the super_admin's "Catalog
 * integrity" page (ADR 0138): a check of one workspace finds damage planted behind the API, the
 * repair is confirmed, and the findings say what was repaired.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
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
import { createKey, createWorkspace } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 60_000 });

const shown = (locator: Locator, timeout = 15_000) =>
  expect.poll(() => locator.isVisible(), { timeout }).toBe(true);

/** The value beside a term of the page's fact lists. */
const fact = (page: Page, term: string) =>
  page
    .locator('section', { has: page.getByRole('heading', { name: 'Contents' }) })
    .locator(`dt:text-is("${term}") + dd`);

const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource/.test(e));

describe.skipIf(!chromiumPath)('console: catalog health', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows a workspace’s contents to its admins, with the API’s counts, and nothing to a viewer', async () => {
    const ws = await createWorkspace(uniqueName('chs'));
    await createKey(ws.id, 'viewer');
    await createKey(ws.id, 'editor');
    const summary = await call('GET', `/workspaces/${ws.id}/summary`, { headers: asSuperAdmin() });
    expect(summary.status, summary.text).toBe(200);

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, `/console/workspaces/${ws.name}`);
    await shown(page.getByRole('heading', { name: 'Contents', level: 2 }));
    await expect
      .poll(() => fact(page, 'API keys').textContent())
      .toBe(
        `${summary.body.api_keys.total} (${summary.body.api_keys.active} active, ${summary.body.api_keys.revoked} revoked)`,
      );
    expect(await fact(page, 'Services').textContent()).toBe(String(summary.body.services));
    await expectAccessible(page, 'workspace-contents');
    expect(unexpected(errors)).toEqual([]);
    await context.close();

    // A viewer reads the workspace page, without the counts and without a refusal.
    const viewer = await createKey(ws.id, 'viewer');
    const asViewer = await newConsoleContext(browser);
    const viewerPage = await asViewer.newPage();
    await signInWithToken(viewerPage, viewer.key, `/console/workspaces/${ws.name}`);
    await shown(viewerPage.getByRole('heading', { name: `Workspace ${ws.name}`, level: 1 }));
    await shown(viewerPage.locator('dl.facts').first());
    await viewerPage.waitForLoadState('networkidle');
    // Settled, not at one moment: on two loaded cores the page may still be deciding what it shows.
    await expect.poll(() => viewerPage.getByRole('heading', { name: 'Contents' }).count()).toBe(0);
    // A refusal's status as a word: the page's names and ids may hold the digits 403 (a flake).
    expect(await viewerPage.getByText(/\b403\b/).count()).toBe(0);
    await asViewer.close();
  });

  it('checks one workspace, shows the damage planted behind the API, and repairs it after a confirmation', async () => {
    const ws = await createWorkspace(uniqueName('chi'));
    await hostDynamo().send(
      new PutCommand({
        TableName: inject('host').tableName,
        Item: {
          PK: `WS#${ws.id}`,
          SK: 'PUBID#console-ghost',
          entity: 'PublicIdMarker',
          kind: 'layer',
          target_id: '00000000-0000-4000-8000-000000000000',
        },
      }),
    );
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey, '/console/integrity');
    await shown(page.getByRole('heading', { name: 'Catalog integrity', level: 1 }));
    await page.getByLabel('Workspace (id or name; empty for the whole catalog)').fill(ws.name);
    await page.getByRole('button', { name: 'Check', exact: true }).click();
    const row = page.getByRole('row').filter({ hasText: "The public id 'console-ghost'" });
    await shown(row);
    await expectAccessible(page, 'integrity-findings');
    await page.getByRole('button', { name: 'Repair…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Repair 1 finding?' });
    await shown(dialog);
    await dialog.getByRole('button', { name: 'Repair', exact: true }).click();
    await shown(page.getByRole('status').filter({ hasText: '1 repair made.' }));
    await shown(row.getByRole('cell', { name: 'repaired', exact: true }));
    const after = await call('GET', `/catalog/integrity?workspace=${ws.id}`, { headers: asSuperAdmin() });
    expect(after.body.findings).toEqual([]);
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });
});
