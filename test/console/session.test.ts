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
import { uniqueName } from '../support/client.ts';

describe.skipIf(!chromiumPath)('console: signing in and out', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('serves the console with a strict CSP and no inline script', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    const errors = watchConsoleErrors(page);
    const response = await page.goto('/console/');
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(response?.headers()['x-frame-options']).toBe('DENY');
    await expect
      .poll(() => page.getByRole('heading', { name: 'Sign in to GeoPlane' }).isVisible())
      .toBe(true);
    await expectAccessible(page, 'login');
    expect(errors.filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
    await context.close();
  });

  it('signs in with an API key, shows the workspaces, creates one and signs out', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await signInWithToken(page, inject('host').apiKey);
    await expect
      .poll(() => page.getByRole('heading', { name: 'Workspaces', level: 1 }).isVisible())
      .toBe(true);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === '__Host-session')?.httpOnly).toBe(true);
    await expectAccessible(page, 'workspaces');

    const name = uniqueName('console');
    await page.getByLabel('Name').fill(name);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await expect
      .poll(() => page.getByRole('heading', { name: `Workspace ${name}`, level: 1 }).isVisible())
      .toBe(true);
    await expectAccessible(page, 'workspace');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect
      .poll(() => page.getByRole('heading', { name: 'Sign in to GeoPlane' }).isVisible())
      .toBe(true);
    expect((await context.cookies()).find((c) => c.name === '__Host-session')).toBeUndefined();
    await context.close();
  });

  it('shows a refused login in place and keeps the operator on the login page', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await page.goto('/console/');
    await page.getByLabel('API key or JWT').fill('gpk_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toMatch(/401/);
    await context.close();
  });

  it('returns to the login page when the session ends (401), then back where the operator was', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await signInWithToken(page, inject('host').apiKey);
    await context.clearCookies();
    await page.goto('/console/tile-matrix-sets');
    await expect
      .poll(() => page.getByRole('heading', { name: 'Sign in to GeoPlane' }).isVisible())
      .toBe(true);
    expect(new URL(page.url()).searchParams.get('next')).toBe('/console/tile-matrix-sets');
    await page.getByLabel('API key or JWT').fill(inject('host').apiKey);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/console/tile-matrix-sets');
    await context.close();
  });

  it('signs in with OIDC authorization code + PKCE at the local issuer', async () => {
    const context = await newConsoleContext(browser);
    const page = await context.newPage();
    await page.goto('/console/');
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    // The local issuer's own page: who the operator is and the roles their token carries.
    await expect
      .poll(() => page.getByRole('heading', { name: 'Sign in to the local issuer' }).isVisible())
      .toBe(true);
    const authorizeUrl = new URL(page.url());
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorizeUrl.searchParams.get('state')).toBeTruthy();
    const subject = uniqueName('oidc-user');
    await page.getByLabel('Subject').fill(subject);
    await page.getByLabel('super_admin').check();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible(), { timeout: 15_000 })
      .toBe(true);
    await expect.poll(() => page.locator('header').textContent()).toContain(subject);
    // The code was single-use: replaying the callback fails in place instead of signing in again.
    await page.goto(`/console/callback?code=replayed&state=${authorizeUrl.searchParams.get('state')}`);
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/No sign-in was started|state/);
    await context.close();
  });
});
