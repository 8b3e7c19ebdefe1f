import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  chromiumPath,
  expectAccessible,
  launchBrowser,
  signInWithToken,
  watchConsoleErrors,
} from '../support/browser.ts';
import { type HostProcess, onSharedTable, startHostProcess } from '../support/host-process.ts';

/** A host of its own (same DynamoDB Local as the suite's) with the given environment. */
async function hostWith(env: Record<string, string>): Promise<HostProcess> {
  const shared = inject('host');
  return startHostProcess({
    ...onSharedTable(shared),
    ...env,
  });
}

const originOf = (host: HostProcess) => host.url.replace(/\/api\/v1$/, '');

describe.skipIf(!chromiumPath)('console: the session over time, throttling and the keyboard', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('refreshes the session before it idles out, and keeps working with the new cookies', async () => {
    // Sessions idle out after 66 s here: the console refreshes a minute early, i.e. after ~6 s.
    const host = await hostWith({ SESSION_IDLE_SECONDS: '66' });
    try {
      const context = await browser.newContext({ ignoreHTTPSErrors: true, baseURL: originOf(host) });
      const page = await context.newPage();
      await signInWithToken(page, inject('host').apiKey);
      const before = (await context.cookies()).find((c) => c.name === '__Host-session')?.value;
      const csrfBefore = (await context.cookies()).find((c) => c.name === 'csrf_token')?.value;
      expect(before).toBeDefined();
      expect(csrfBefore).toBeDefined();
      const refreshed = await page.waitForResponse(
        (res) => res.url().endsWith('/api/v1/auth/refresh') && res.request().method() === 'POST',
        { timeout: 30_000 },
      );
      expect(refreshed.status()).toBe(200);
      // The unsafe request carried the CSRF echo of the cookie.
      expect(refreshed.request().headers()['x-csrf-token']).toBe(csrfBefore);
      await expect
        .poll(async () => (await context.cookies()).find((c) => c.name === '__Host-session')?.value)
        .not.toBe(before);
      // Still signed in with the rotated session: a page that calls the API loads.
      await page.goto('/console/tile-matrix-sets');
      await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
      await expect.poll(() => page.getByRole('heading', { name: 'Sign in to GeoPlane' }).count()).toBe(0);
      await context.close();
    } finally {
      await host.stop();
      host.cleanup();
    }
  }, 120_000);

  it('waits Retry-After on a 429, says so, and then shows the page', async () => {
    const host = await hostWith({ GEOPLANE_RATE_LIMIT_RPS: '1', GEOPLANE_RATE_LIMIT_BURST: '2' });
    try {
      const context = await browser.newContext({ ignoreHTTPSErrors: true, baseURL: originOf(host) });
      const page = await context.newPage();
      const statuses: number[] = [];
      page.on('response', (res) => {
        if (res.url().includes('/api/v1/')) statuses.push(res.status());
      });
      await signInWithToken(page, host.apiKey as string);
      // Several pages at once, then the bucket emptied by the same key (one bucket per usage key)
      // as the last page calls: its calls get 429 and the console has to wait, saying so on the
      // page that stays (a notice on a page navigated away from would prove nothing here).
      for (const path of ['/console/workspaces', '/console/tile-matrix-sets']) await page.goto(path);
      // The bucket is emptied the moment the last page sends its first call (not before the page
      // loads: on a loaded machine that takes long enough for the bucket to refill), so that call
      // is the one answered 429.
      let drained = false;
      await page.route('**/api/v1/**', async (route) => {
        if (!drained) {
          drained = true;
          for (let i = 0; i < 6; i++)
            await context.request.get(`${originOf(host)}/api/v1/workspaces?limit=1`, {
              headers: { 'X-API-Key': host.apiKey as string },
            });
        }
        await route.continue();
      });
      statuses.length = 0;
      await page.goto('/console/workspaces/demo');
      await expect.poll(() => statuses.includes(429), { timeout: 20_000 }).toBe(true);
      await page.waitForSelector('text=asked the console to slow down', { timeout: 30_000 });
      await expect
        .poll(() => page.getByRole('heading', { name: 'Workspace demo', level: 1 }).isVisible(), {
          timeout: 30_000,
        })
        .toBe(true);
      await context.close();
    } finally {
      await host.stop();
      host.cleanup();
    }
  }, 120_000);

  it('works by keyboard alone: sign in, skip to content, open and cancel a confirmation', async () => {
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      baseURL: inject('host').url.replace(/\/api\/v1$/, ''),
    });
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    await page.goto('/console/');
    await expect.poll(() => page.getByLabel('API key or JWT').isVisible()).toBe(true);
    // Tab until the token field has focus, type, Enter.
    for (let i = 0; i < 10; i++) {
      if (await page.getByLabel('API key or JWT').evaluate((el) => el === el.ownerDocument.activeElement))
        break;
      await page.keyboard.press('Tab');
    }
    await page.keyboard.type(inject('host').apiKey);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    await page.goto('/console/workspaces/demo');
    await expect
      .poll(() => page.getByRole('heading', { name: 'Workspace demo', level: 1 }).isVisible())
      .toBe(true);
    // The first Tab reaches the skip link; Enter moves focus to the main content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe(
      'Skip to content',
    );
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('main');
    // Reach "Delete workspace…" by Tab, open it with Enter: a modal dialog takes focus; Escape cancels.
    const remove = page.getByRole('button', { name: 'Delete workspace…' });
    for (let i = 0; i < 30; i++) {
      if (await remove.evaluate((el) => el === el.ownerDocument.activeElement)) break;
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete workspace demo?' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await expectAccessible(page, 'workspace-delete-dialog');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.isVisible()).toBe(false);
    // Nothing was deleted.
    await page.reload();
    await expect
      .poll(() => page.getByRole('heading', { name: 'Workspace demo', level: 1 }).isVisible())
      .toBe(true);
    expect(errors.filter((e) => /Content Security Policy/.test(e))).toEqual([]);
    await context.close();
  });
});
