/**
 * Builds the console (Vite) when its sources changed since the last build: the local host calls
 * this on start, the stack before it packages `console/dist`, the browser tests before they run.
 * A stamp of the inputs' hash sits beside the output; a build goes to a scratch directory first
 * and replaces `dist` in one rename, so a concurrent reader never sees half a build.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const here = import.meta.dirname;
const repo = resolve(here, '..');

/** Where the built console lives (served at /console/). */
export const CONSOLE_DIST = join(here, 'dist');
const STAMP = '.build-stamp';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** The hash of everything the build reads. */
export function consoleSourceHash(): string {
  const inputs = [
    ...filesUnder(join(here, 'src')),
    join(here, 'index.html'),
    join(here, 'vite.config.ts'),
    join(repo, 'client/index.ts'),
    join(repo, 'client/api-types.ts'),
    join(repo, 'client/settings-limits.ts'),
    join(repo, 'docs/openapi.json'),
    join(repo, 'shared/api/operation-permissions.json'),
    join(repo, 'package-lock.json'),
    // Its `imports` resolve the console's `#console/…` and `#client/…`.
    join(repo, 'package.json'),
  ].sort();
  const hash = createHash('sha256');
  for (const file of inputs) hash.update(relative(repo, file)).update('\0').update(readFileSync(file));
  return hash.digest('hex');
}

/** True when `console/dist` was built from the current sources. */
export function consoleIsBuilt(): boolean {
  const stamp = join(CONSOLE_DIST, STAMP);
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === consoleSourceHash();
}

/** Builds the console unless `dist` is current; answers whether it built. */
export async function ensureConsoleBuilt(): Promise<boolean> {
  if (consoleIsBuilt()) return false;
  const hash = consoleSourceHash();
  const scratch = join(here, `.dist-${process.pid}-${Date.now()}`);
  const { build } = await import('vite');
  const { writeFileSync } = await import('node:fs');
  try {
    await build({
      configFile: join(here, 'vite.config.ts'),
      build: { outDir: scratch, emptyOutDir: true },
      logLevel: 'warn',
    });
    writeFileSync(join(scratch, STAMP), hash);
    // Someone else may have finished the same build meanwhile: theirs is as good as ours.
    if (consoleIsBuilt()) return false;
    rmSync(CONSOLE_DIST, { recursive: true, force: true });
    renameSync(scratch, CONSOLE_DIST);
    return true;
  } finally {
    if (existsSync(scratch) && statSync(scratch).isDirectory())
      rmSync(scratch, { recursive: true, force: true });
  }
}

// `tsx console/build.ts`: build now (npm run console:build).
if (process.argv[1] && resolve(process.argv[1]) === resolve(here, 'build.ts')) {
  const built = await ensureConsoleBuilt();
  console.log(built ? `console built in ${relative(process.cwd(), CONSOLE_DIST)}` : 'console is up to date');
}
