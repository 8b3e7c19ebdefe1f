/**
 * The embedded PostGIS's template data dir (ADR 0155): a new data dir is a copy of one that was
 * initialised and seeded once, instead of an initdb and a `CREATE EXTENSION postgis` of its own
 * (9–19 s of CPU, most of it PostgreSQL's C validator looking up ~2,000 PostGIS symbols through
 * Emscripten's `dlsym`). The template is kept per content — PGlite's and PostGIS's versions and
 * the seed — under `node_modules/.cache` (or `GEOPLANE_POSTGIS_TEMPLATE_DIR`), built into a dir
 * of its own and renamed into place once closed cleanly, so a reader never sees half of one and
 * two builders at once both end with a whole one. It holds no secret a copy keeps: every start of
 * a data dir sets the superuser's and the loader's passwords to its own marker's. A build whose
 * process ended without finishing it (killed, the machine stopped) leaves its dir, named after that
 * process: the next caller removes it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { processRuns } from './processes.ts';

/** What a template is made of: a change to any of it makes another template. */
export interface TemplateContent {
  /** The seed statements the template ran (the demo data). */
  seed: string;
  /** The marker's seed version. */
  seedVersion: number;
}

/**
 * The path of the template for `content`, built by `build(dir)` when there is none yet: `build`
 * initialises and seeds a data dir in `dir` and closes it cleanly.
 */
export async function templateDataDir(
  content: TemplateContent,
  build: (dir: string) => Promise<void>,
  progress: (message: string) => void,
): Promise<string> {
  const root = templateRoot();
  const path = join(root, templateKey(content));
  removeAbandonedBuilds(root);
  if (existsSync(path)) return path;
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const building = `${path}.building-${process.pid}-${randomBytes(4).toString('hex')}`;
  progress(
    `creating the embedded PostGIS template (once per version; later data dirs are copies of it) in ${path}`,
  );
  try {
    await build(building);
    renameSync(building, path);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    // Another process renamed its own first: it is as good as ours.
    if (existsSync(path)) return path;
    throw error;
  }
  return path;
}

/** A template's build dir: `template-<key>.building-<pid>-<random>`. */
const BUILDING = /^template-[0-9a-f]{16}\.building-(\d+)-[0-9a-f]{8}$/;

/**
 * Removes the build dirs of processes that no longer run (~63 MB each): a build killed midway
 * never renames or removes its own. A dir whose process runs (or may: it isn't ours to signal) is
 * left to it.
 */
function removeAbandonedBuilds(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return; // no templates yet
  }
  for (const name of names) {
    const pid = Number(BUILDING.exec(name)?.[1]);
    if (pid && !processRuns(pid)) rmSync(join(root, name), { recursive: true, force: true });
  }
}

/** Copies the template into `pgDataDir` (which must not exist yet). */
export function copyTemplate(template: string, pgDataDir: string): void {
  cpSync(template, pgDataDir, { recursive: true, errorOnExist: true, force: false });
}

/** Where templates are kept: `GEOPLANE_POSTGIS_TEMPLATE_DIR`, or node_modules/.cache/geoplane/postgis. */
function templateRoot(): string {
  const configured = process.env.GEOPLANE_POSTGIS_TEMPLATE_DIR;
  if (configured) return configured;
  // …/node_modules/@electric-sql/pglite → …/node_modules
  return join(packageDir('@electric-sql/pglite'), '..', '..', '.cache', 'geoplane', 'postgis');
}

/** Packages' directories found so far: an installed package doesn't move while a process runs. */
const packageDirs = new Map<string, string>();

/** The directory of an installed package (its package.json isn't in its exports). */
function packageDir(name: string): string {
  const found = packageDirs.get(name);
  if (found) return found;
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  while (!existsSync(join(dir, 'package.json')) || packageJson(dir).name !== name) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json of ${name} above its entry`);
    dir = up;
  }
  packageDirs.set(name, dir);
  return dir;
}

function packageJson(dir: string): { name?: string; version?: string } {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
}

/** A name for the template of `content` with these PGlite and PostGIS builds. */
function templateKey(content: TemplateContent): string {
  const version = (name: string) => packageJson(packageDir(name)).version;
  const hash = createHash('sha256')
    .update(
      JSON.stringify({
        pglite: version('@electric-sql/pglite'),
        postgis: version('@electric-sql/pglite-postgis'),
        ...content,
      }),
    )
    .digest('hex')
    .slice(0, 16);
  return `template-${hash}`;
}
