/**
 * The console's Browser sessions page (super_admin, ADR 0134) against the local host: it lists a
 * session signed in elsewhere, and revoking it after confirming ends that session at its next request.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  chromiumPath,
  expectAccessible,
  launchBrowser,
  newConsoleContext,
  signInWithToken,
  watchConsoleErrors,
} from '../support/browser.ts';
import { call } from '../support/client.ts';
import { createKey, createWorkspace } from '../support/fixtures.ts';

describe.skipIf(!chromiumPath)('console: browser sessions', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('lists a session signed in elsewhere and revokes it after confirming; its cookie is refused next', async () => {
    // Another browser's session: a workspace admin's key exchanged through the API.
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    const login = await call('POST', '/auth/login', { body: { token: admin.key } });
    expect(login.status, login.text).toBe(201);
    const cookie = login.cookies.map((c) => c.split(';')[0]).join('; ');
    expect((await call('GET', '/auth/me', { headers: { Cookie: cookie } })).status).toBe(200);

    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await signInWithToken(page, inject('host').apiKey);
    await page.getByRole('link', { name: 'Browser sessions' }).click();
    await expect
      .poll(() => page.getByRole('heading', { name: 'Browser sessions', level: 1 }).isVisible())
      .toBe(true);
    const row = page.getByRole('row').filter({ hasText: `apikey:${admin.id}` });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain(`admin in ${ws.id}`);
    // This console's own session is listed too, and marked.
    await expect.poll(() => page.getByRole('row').filter({ hasText: '(this session)' }).count()).toBe(1);
    await expectAccessible(page, 'browser-sessions');

    // Cancelling keeps it; confirming revokes it.
    const revoke = row.getByRole('button', { name: /^Revoke the session of/ });
    const dialog = page.getByRole('dialog');
    await revoke.click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect((await call('GET', '/auth/me', { headers: { Cookie: cookie } })).status).toBe(200);
    await revoke.click();
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('revoked');
    await expect.poll(() => row.count()).toBe(0);
    expect((await call('GET', '/auth/me', { headers: { Cookie: cookie } })).status).toBe(401);
    // The console's own session goes on.
    await page.reload();
    await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    expect(errors.filter((e) => !/status of 40[13]/.test(e))).toEqual([]);
    await context.close();
  }, 120_000);
});
