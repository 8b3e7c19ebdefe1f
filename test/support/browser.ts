/**
 * The console's browser tests: Debian's Chromium driven by playwright-core (the npm-downloaded
 * browsers can't be fetched here; `.ci/run` installs `chromium` with apt). Without a Chromium the
 * tests say so and are skipped — except under CI, where a missing browser fails the run.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import axe from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect, inject } from 'vitest';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium to drive: CHROMIUM_PATH, else Debian's. */
export const chromiumPath = [process.env.CHROMIUM_PATH, ...CANDIDATES].find(
  (path): path is string => path !== undefined && path !== '' && existsSync(path),
);

if (!chromiumPath) {
  const message =
    'Chromium not found (CHROMIUM_PATH or /usr/bin/chromium): the console browser tests are skipped. Install it with `apt-get install chromium`.';
  if (process.env.CI) throw new Error(`${message} CI must run them.`);
  console.warn(message);
}

/** Where screenshots of each page go (not committed). */
export const SCREENSHOTS = resolve(import.meta.dirname, '../../test-results/console');

/** The local host's origin (the console is served at /console/ beside /api/v1). */
export function origin(): string {
  return inject('host').url.replace(/\/api\/v1$/, '');
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath as string,
    headless: true,
    // Root in CI containers has no user namespaces for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** A fresh browser profile (its own cookies) on the console's origin; the local certificate is self-signed. */
export async function newConsoleContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({
    ignoreHTTPSErrors: true,
    baseURL: origin(),
    viewport: { width: 1280, height: 900 },
  });
}

/** Signs in through the login page with an API key or JWT and waits for the signed-in shell. */
export async function signInWithToken(page: Page, token: string, path = '/console/'): Promise<void> {
  await page.goto(path);
  await page.getByLabel('API key or JWT').fill(token);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect
    .poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible(), { timeout: 15_000 })
    .toBe(true);
}

/** A screenshot of the page in test-results/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * axe-core over the page as it is now; fails on any serious or critical violation (the rest is
 * returned). The script is evaluated over the DevTools protocol, so the console's CSP stays on.
 */
export async function expectAccessible(page: Page, name: string): Promise<AxeViolation[]> {
  await page.evaluate(axe.source);
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations)",
  )) as AxeViolation[];
  await screenshot(page, name);
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(
    serious,
    `${name}: ${serious.map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`).join('\n')}`,
  ).toEqual([]);
  return violations;
}

/** Collects what the page prints as errors and the CSP violations it reports. */
export function watchConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(String(error)));
  return errors;
}
