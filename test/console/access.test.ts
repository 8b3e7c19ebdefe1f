/**
 * The console's access pages against the local host: API keys (the secret shown once), roles and
 * their policies, claim mappings (workspace and global), the audit trail — and a 403 that says
 * which role it needs.
 */
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
import { call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, withKey } from '../support/fixtures.ts';

const cspErrors = (errors: string[]) => errors.filter((e) => /Content Security Policy|Refused to/.test(e));

describe.skipIf(!chromiumPath)('console: API keys, roles, claim mappings and audit', () => {
  let browser: Browser;
  let ws: { id: string; name: string };
  // What the earlier tests did, for the audit test to find.
  let revokedKey: { id: string; name: string } | undefined;
  let roleId: string | undefined;
  /** When the role was created, give or take a second: the global trail is read in that window. */
  let roleWindow: { since: string; until: string } | undefined;
  let policySince: string | undefined;
  let policyUntil: string | undefined;

  beforeAll(async () => {
    browser = await launchBrowser();
    ws = await createWorkspace(uniqueName('access'));
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A page signed in as super_admin, at `path`, with its console errors collected. */
  async function superAdminAt(
    path: string,
  ): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
    const context = await newConsoleContext(browser);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey);
    await page.goto(path);
    return { page, errors, close: () => context.close() };
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1 });

  it('creates an API key, shows its secret exactly once, and revokes it after confirming', async () => {
    const { page, errors, close } = await superAdminAt(`/console/workspaces/${ws.name}/apikeys`);
    await expect.poll(() => heading(page, `API keys of ${ws.name}`).isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('heading', { name: 'Keys', exact: true }).isVisible()).toBe(true);
    await expectAccessible(page, 'api-keys');

    // A bad field is refused in place: an expiry in the past.
    const name = uniqueName('console-key');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Role').selectOption('editor');
    await page.getByLabel('Expires').fill('2001-01-01T00:00');
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.locator('form').filter({ has: page.getByRole('button', { name: 'Create key' }) });
    await expect.poll(() => form.locator('[data-status="400"]').textContent()).toContain('(400)');
    // Beside the field too.
    expect(await page.getByLabel('Expires').getAttribute('aria-invalid')).toBe('true');
    expect(
      await form
        .locator('.field')
        .filter({ has: page.getByLabel('Expires') })
        .textContent(),
    ).toMatch(/expires_at must be in the future/);
    expect(await page.locator('.secret').count()).toBe(0);

    // Created: the secret is shown once, with a copy button and the warning.
    await page.getByLabel('Expires').fill('');
    await page.getByLabel('Owner email').fill('ci@example.org');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.locator('.secret');
    await expect.poll(() => secretBox.isVisible()).toBe(true);
    const secret = ((await secretBox.textContent()) ?? '').trim();
    expect(secret).toMatch(/^gpk_[A-Za-z0-9_-]{43}$/);
    expect(await page.getByText('it will not be shown again').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Copy the key' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied', exact: true }).isVisible()).toBe(true);
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await expectAccessible(page, 'api-keys-secret');

    // The secret authenticates (an editor may read its workspace).
    const asKey = await call('GET', `/workspaces/${ws.id}`, { headers: withKey(secret) });
    expect(asKey.status, asKey.text).toBe(200);

    // The list shows the key by its prefix, never the secret.
    const row = page.getByRole('row').filter({ hasText: name });
    await expect.poll(() => row.textContent()).toContain(secret.slice(0, 12));
    expect(await row.textContent()).toContain('editor');
    expect(await row.textContent()).toContain('Active');

    // After a reload the secret is nowhere: not on the page, not in storage.
    await page.reload();
    await expect.poll(() => row.isVisible()).toBe(true);
    expect(await page.locator('.secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    const stored = await page.evaluate('JSON.stringify({ ...localStorage, ...sessionStorage })');
    expect(stored).not.toContain(secret);

    // Revoke: cancelling keeps it, confirming revokes it.
    const keyId = await row.getAttribute('data-key-id');
    expect(keyId).toBeTruthy();
    await row.getByRole('button', { name: /^Revoke key/ }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect(await row.textContent()).toContain('Active');
    await row.getByRole('button', { name: /^Revoke key/ }).click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => row.textContent()).toContain('Revoked');
    expect(await row.getByRole('button', { name: /^Revoke key/ }).count()).toBe(0);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('revoked');
    const revoked = await call('GET', `/workspaces/${ws.id}`, { headers: withKey(secret) });
    expect(revoked.status).toBe(401);
    revokedKey = { id: keyId as string, name };

    expect(cspErrors(errors)).toEqual([]);
    await close();
  });

  it('creates a custom role, adds and removes a policy, and deletes the role', async () => {
    const { page, errors, close } = await superAdminAt('/console/roles');
    await expect.poll(() => heading(page, 'Roles').isVisible()).toBe(true);
    const builtIn = page.getByRole('row').filter({ hasText: 'super_admin' });
    await expect.poll(() => builtIn.textContent()).toContain('built-in');
    await expectAccessible(page, 'roles');

    // A bad id: 400 with the issue beside the field.
    const createForm = page.locator('form');
    await page.getByLabel('Role id').fill('Bad Id!');
    await page.getByRole('button', { name: 'Create role' }).click();
    await expect.poll(() => createForm.locator('[data-status="400"]').textContent()).toContain('(400)');
    expect(await page.getByLabel('Role id').getAttribute('aria-invalid')).toBe('true');

    const id = uniqueName('role');
    await page.getByLabel('Role id').fill(id);
    await page.getByLabel('Display name').fill('Console publisher');
    const since = new Date(Date.now() - 1000).toISOString();
    await page.getByRole('button', { name: 'Create role' }).click();
    const row = page.getByRole('row').filter({ hasText: id });
    await expect.poll(() => row.textContent()).toContain('custom');
    roleId = id;
    roleWindow = { since, until: new Date(Date.now() + 1000).toISOString() };

    // The same id again: a 409 in place, under the form.
    await page.getByLabel('Role id').fill(id);
    await page.getByRole('button', { name: 'Create role' }).click();
    await expect.poll(() => createForm.locator('[data-status="409"]').textContent()).toContain('(409)');
    expect(await page.getByLabel('Role id').getAttribute('aria-invalid')).toBeNull();

    // Its policies.
    await row.getByRole('link', { name: `Policies of ${id}` }).click();
    await expect.poll(() => heading(page, `Role ${id}`).isVisible()).toBe(true);
    await expect.poll(() => page.getByText('this role grants nothing yet').isVisible()).toBe(true);
    await page.getByLabel('Workspace', { exact: true }).fill(ws.name);
    await page.getByLabel('Service').selectOption('management');
    await page.getByLabel('Operation').fill('createLayer');
    // A management operation has one action: the console picks it.
    await expect.poll(() => page.getByLabel('Action').inputValue()).toBe('write');
    policySince = new Date(Date.now() - 1000).toISOString();
    await page.getByRole('button', { name: 'Add policy' }).click();
    const policy = page.getByRole('row').filter({ hasText: 'createLayer' });
    await expect.poll(() => policy.textContent()).toContain('write');
    // The policy names the workspace by its id; the console shows its name.
    await expect.poll(() => policy.getByRole('link', { name: ws.name }).isVisible()).toBe(true);
    policyUntil = new Date(Date.now() + 1000).toISOString();
    await expectAccessible(page, 'role-policies');

    // An impossible rule is refused in place (422).
    await page.getByLabel('Operation').fill('noSuchOperation');
    await page.getByRole('button', { name: 'Add policy' }).click();
    const addForm = page.locator('form').filter({ has: page.getByRole('button', { name: 'Add policy' }) });
    await expect
      .poll(() => addForm.locator('[data-status="422"]').textContent())
      .toContain('noSuchOperation');

    await policy.getByRole('button', { name: /^Remove policy/ }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(() => policy.count()).toBe(0);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('removed');
    const left = await call('GET', `/roles/${id}/policies`, {
      headers: { 'X-API-Key': inject('host').apiKey },
    });
    expect(left.body.policies).toEqual([]);

    // Back to the list; delete the role.
    await page.getByRole('link', { name: 'Back to all roles' }).click();
    await expect.poll(() => heading(page, 'Roles').isVisible()).toBe(true);
    await row.getByRole('button', { name: `Delete role ${id}` }).click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => row.count()).toBe(0);
    const gone = await call('GET', `/roles/${id}`, { headers: { 'X-API-Key': inject('host').apiKey } });
    expect(gone.status).toBe(404);

    expect(cspErrors(errors)).toEqual([]);
    await close();
  });

  it('creates and deletes claim mappings in a workspace and globally, with errors in place', async () => {
    const { page, errors, close } = await superAdminAt(`/console/workspaces/${ws.name}/claim-mappings`);
    await expect.poll(() => heading(page, `Claim mappings of ${ws.name}`).isVisible()).toBe(true);
    await expect.poll(() => page.getByText('No claim mappings yet.').isVisible()).toBe(true);
    await expectAccessible(page, 'claim-mappings');

    const value = uniqueName('gis-editors');
    const create = async (claim: string, claimValue: string, role: string) => {
      await page.getByLabel('Claim name').fill(claim);
      await page.getByLabel('Claim value').fill(claimValue);
      await page.getByLabel('Role').fill(role);
      await page.getByRole('button', { name: 'Add mapping' }).click();
    };
    const form = page.locator('form');

    // An unknown role: 400 in place.
    await create('groups', value, 'no-such-role');
    await expect.poll(() => form.locator('[data-status="400"]').textContent()).toContain('no-such-role');
    expect(await page.getByLabel('Role').getAttribute('aria-invalid')).toBe('true');

    await create('groups', value, 'editor');
    const row = page.getByRole('row').filter({ hasText: value });
    await expect.poll(() => row.textContent()).toContain('editor');
    expect(await form.getByRole('alert').count()).toBe(0);
    expect(await page.getByLabel('Role').getAttribute('aria-invalid')).toBeNull();

    // The same mapping again: 409 in place.
    await create('groups', value, 'editor');
    await expect.poll(() => form.locator('[data-status="409"]').textContent()).toContain('(409)');

    await row.getByRole('button', { name: /^Delete mapping/ }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => row.count()).toBe(0);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('deleted');

    // The global mappings: super_admin can only be granted here.
    await page.goto('/console/claim-mappings');
    await expect.poll(() => heading(page, 'Global claim mappings').isVisible()).toBe(true);
    await expect
      .poll(() => page.getByRole('heading', { name: 'Mappings', exact: true }).isVisible())
      .toBe(true);
    const globalValue = uniqueName('gis-admins');
    await create('realm_access.roles', globalValue, 'super_admin');
    const globalRow = page.getByRole('row').filter({ hasText: globalValue });
    await expect.poll(() => globalRow.textContent()).toContain('super_admin');
    await expectAccessible(page, 'global-claim-mappings');
    await globalRow.getByRole('button', { name: /^Delete mapping/ }).click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => globalRow.count()).toBe(0);

    expect(cspErrors(errors)).toEqual([]);
    await close();
  });

  /** The audit page's records section: aria-busy until its page is loaded for the present filters. */
  const recordsOf = (page: Page) => page.locator('section[aria-labelledby="records-heading"]');

  /**
   * Pages through a trail (Next page) until a row names `text`: in a full run the other files'
   * records of the same operation may fill the first pages. Each step reads a page only once it is
   * loaded for the present filters and cursor (the section is no longer aria-busy), and clicks Next
   * on that same page: a check and a click that straddled a page load skipped a page.
   */
  async function pageTo(page: Page, rows: Locator, text: string): Promise<number> {
    const records = recordsOf(page);
    const next = page.getByRole('button', { name: 'Next page' });
    for (let pages = 1; pages <= 200; pages++) {
      await expect.poll(() => records.getAttribute('aria-busy'), { timeout: 30_000 }).toBe('false');
      const found = await rows.filter({ hasText: text }).count();
      if (found > 0) return found;
      if (!(await next.isEnabled()))
        throw new Error(`no record names ${text} in ${pages} page(s) of ${page.url()}`);
      await next.click();
    }
    throw new Error(`no record names ${text} in 200 pages of ${page.url()}`);
  }

  it('shows the audit trail of what was done, newest first, filtered by operation', async () => {
    expect(revokedKey, 'the API keys test revoked a key').toBeDefined();
    expect(roleId, 'the roles test created a role').toBeDefined();
    const { page, errors, close } = await superAdminAt(`/console/workspaces/${ws.name}/audit`);
    await expect.poll(() => heading(page, `Audit of ${ws.name}`).isVisible()).toBe(true);
    const rows = page.locator('table.audit tbody tr');
    await expect.poll(() => rows.count()).toBeGreaterThan(3);
    const operations = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-operation')));
    // Newest first: the claim mapping deleted last comes before the key created first.
    expect(operations.indexOf('deleteClaimMapping')).toBeGreaterThanOrEqual(0);
    expect(operations.indexOf('deleteClaimMapping')).toBeLessThan(operations.indexOf('createAPIKey'));
    expect(operations).toContain('createWorkspace');
    await expectAccessible(page, 'workspace-audit');

    // Filter by operation: only the revocation, with its key as the target, its principal and request id.
    // While the filtered page loads (its answer held back here), the shown records are marked busy
    // and the pager waits: neither the old page nor its cursor is taken for the new filter's.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(/\/api\/v1\/workspaces\/[^/]+\/audit\?.*operation=revokeAPIKey/, async (route) => {
      await held;
      await route.continue();
    });
    const records = recordsOf(page);
    expect(await records.getAttribute('aria-busy')).toBe('false');
    await page.getByLabel('Operation').fill('revokeAPIKey');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('operation')).toBe('revokeAPIKey');
    await expect.poll(() => records.getAttribute('aria-busy')).toBe('true');
    expect(await page.getByRole('navigation', { name: 'Pages' }).getAttribute('aria-busy')).toBe('true');
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    release();
    await expect.poll(() => records.getAttribute('aria-busy')).toBe('false');
    await page.unrouteAll();
    await expect
      .poll(() => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-operation'))))
      .toEqual(['revokeAPIKey']);
    const record = (await rows.first().textContent()) ?? '';
    expect(record).toContain(revokedKey?.id);
    expect(record).toContain('succeeded');
    expect(record).toMatch(/apikey:/);
    expect(await rows.first().locator('td').last().textContent()).toMatch(/\S{8,}/);

    // A filter the API refuses: 400 beside the field.
    await page.getByLabel('Operation').fill('not an operation!');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.locator('[data-status="400"]').textContent()).toContain('(400)');
    expect(await page.getByLabel('Operation').getAttribute('aria-invalid')).toBe('true');

    // The global trail (super_admin): the role created and its policy added. Read in the window of
    // the role's creation: other test files create roles of their own, more than a page of them.
    const window = new URLSearchParams(roleWindow);
    // Succeeded only: other files' refused requests (fuzzing, limits) are records of the same operations.
    await page.goto(`/console/audit?operation=createRole&outcome=succeeded&${window}`);
    await expect.poll(() => heading(page, 'Audit trail').isVisible()).toBe(true);
    expect(await pageTo(page, rows, roleId as string)).toBe(1);
    expect(
      new Set(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-operation')))),
    ).toEqual(new Set(['createRole']));
    await expectAccessible(page, 'audit');
    // The policy was added after that window: move the window onto the policy's own add (an open
    // end would show every policy the other files add later, more than a page in a full run).
    await page.getByLabel('Operation').fill('addRolePolicy');
    const local = (iso: string) =>
      page.evaluate((at) => {
        const d = new Date(at);
        const p = (n: number) => String(n).padStart(2, '0');
        return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
      }, iso);
    await page.getByLabel('Since').fill(await local(policySince as string));
    await page.getByLabel('Until').fill(await local(policyUntil as string));
    expect(await page.getByLabel('Outcome').inputValue()).toBe('succeeded');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const toSecond = (iso: string) => new Date(`${iso.slice(0, 19)}Z`).toISOString();
    await expect
      .poll(() =>
        Object.fromEntries(['since', 'until'].map((k) => [k, new URL(page.url()).searchParams.get(k)])),
      )
      .toEqual({ since: toSecond(policySince as string), until: toSecond(policyUntil as string) });
    // The policy's record names the role it was added to.
    expect(await pageTo(page, rows, roleId as string)).toBe(1);
    expect(await rows.filter({ hasText: roleId as string }).textContent()).toMatch(
      new RegExp(`role_policy \\S+ of ${roleId} created`),
    );

    expect(cspErrors(errors)).toEqual([]);
    await close();
  }, 90_000);

  it("refuses an editor the workspace's API keys and audit, saying which role they need", async () => {
    const editor = await createKey(ws.name, 'editor');
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await signInWithToken(page, editor.key);

    await page.goto(`/console/workspaces/${ws.name}/apikeys`);
    await expect.poll(() => heading(page, `API keys of ${ws.name}`).isVisible()).toBe(true);
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.first().textContent()).toContain('(403)');
    expect(await alert.first().textContent()).toContain(
      'This needs the admin role (or above) in this workspace.',
    );
    await expectAccessible(page, 'api-keys-forbidden');

    await page.goto(`/console/workspaces/${ws.name}/audit`);
    await expect.poll(() => heading(page, `Audit of ${ws.name}`).isVisible()).toBe(true);
    await expect.poll(() => alert.first().textContent()).toContain('(403)');
    expect(await alert.first().textContent()).toContain('the admin role');

    // The global pages need super_admin.
    await page.goto('/console/audit');
    await expect.poll(() => alert.first().textContent()).toContain('This needs the super_admin role.');
    await page.goto('/console/roles');
    await expect.poll(() => alert.first().textContent()).toContain('This needs the super_admin role.');
    await context.close();
  });
});
