/**
 * What the imports section loads into and with: its processes (a process group each, stopped at
 * cleanup), the real PostgreSQL and its bench database, the embedded PostGIS, and the loads
 * themselves (ours in a child process, GDAL's ogr2ogr), each followed by its row count.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { type EmbeddedPostgis, startEmbeddedPostgis } from '#infra/local/postgis.ts';
import { bundleScript } from './bundles.ts';
import { onCleanup, stopNow, wasInterrupted } from './cleanup.ts';
import type { Count, FileRun, GdalLoad, OurLoad } from './imports-types.ts';
import { thousands } from './stats.ts';

/** One load (ours or GDAL's) is stopped after this long. */
const LOAD_TIMEOUT_MS = 15 * 60_000;
/** Names of everything this section registers for cleanup (stopped at its end with stopNow). */
export const PREFIX = 'imports:';

const root = fileURLToPath(new URL('..', import.meta.url));
const execFileAsync = promisify(execFile);

// ---- processes ----------------------------------------------------------------------------------
interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs a command in a process group of its own (so a wrapper like /usr/bin/time and what it runs
 * are stopped together), registered for cleanup by its process group id; stopped after `timeoutMs`.
 */
function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs: number; name: string },
): Promise<Finished> {
  // Stopping everything (a signal, the watchdog): start nothing new that the cleanup would miss.
  if (wasInterrupted()) return Promise.reject(new Error('interrupted'));
  const t0 = performance.now();
  const child: ChildProcess = spawn(command, args, {
    cwd: root,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const kill = () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const name = `${PREFIX} ${options.name} (pid ${child.pid})`;
  onCleanup(name, kill);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d;
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d;
    if (stderr.length > 1_000_000) stderr = stderr.slice(-100_000);
  });
  const timer = setTimeout(() => {
    stderr += `\n(stopped after ${options.timeoutMs / 1000} s)`;
    kill();
  }, options.timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      void stopNow(name);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

export function onPath(command: string): string | undefined {
  try {
    return execFileSync('bash', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** A process's stderr for a message: stack frames left out, at most `n` characters (the end when longer). */
const tail = (s: string, n = 600) =>
  s
    .split('\n')
    .filter((l) => l.trim() && !/^\s+at /.test(l))
    .join(' ⏎ ')
    .slice(-n);

// ---- PostgreSQL ---------------------------------------------------------------------------------
interface Server {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

function parseUrl(url: string): Server {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.slice(1)) || 'postgres',
  };
}

/**
 * The PostgreSQL of `.ci/postgres.sh`: started in a bash that exits once it is up (pg_ctl leaves
 * the server running); its data dir is the only entry of a temp dir of ours (TMPDIR), so the stop
 * (`stop_test_postgres` with that dir) also finds a server whose start was interrupted.
 */
export async function startPostgres(
  progress: (s: string) => void,
): Promise<{ url: string; description: string }> {
  const given = process.env.GEOPLANE_TEST_POSTGRES_URL;
  if (given)
    return { url: given, description: 'the server of GEOPLANE_TEST_POSTGRES_URL (not started here)' };
  const script = join(root, '.ci', 'postgres.sh');
  // start_test_postgres would install a missing server with apt: the bench installs nothing.
  const installed = await execFileAsync('bash', ['-c', 'source "$1" && _pg_installed', 'check', script], {
    cwd: root,
  }).then(
    () => true,
    () => false,
  );
  if (!installed) {
    throw new Error(
      `PostgreSQL 15 + PostGIS 3 is missing (\`.ci/postgres.sh\` finds no initdb/pg_ctl in ${process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'} ` +
        'or no postgis.control; `.ci/run` installs them)',
    );
  }
  const parent = mkdtempSync(join(tmpdir(), 'geoplane-bench-pg-'));
  // The data dir inside is the postgres user's: it must be able to reach it.
  chmodSync(parent, 0o755);
  onCleanup(`${PREFIX} PostgreSQL`, async () => {
    for (const dir of readdirSync(parent)) {
      // Not through run(): this must also work while everything is being stopped.
      await execFileAsync(
        'bash',
        ['-c', 'source "$1" && PG_TEST_DIR="$2" && stop_test_postgres', 'stop', script, join(parent, dir)],
        { cwd: root, timeout: 60_000 },
      ).catch((error) => process.stderr.write(`imports: stopping PostgreSQL failed: ${error.message}\n`));
    }
    rmSync(parent, { recursive: true, force: true });
  });
  progress('imports: starting PostgreSQL 15 + PostGIS with .ci/postgres.sh');
  const started = await run(
    'bash',
    ['-c', 'source "$1" && start_test_postgres && echo "URL=$GEOPLANE_TEST_POSTGRES_URL"', 'start', script],
    { env: { ...process.env, TMPDIR: parent }, timeoutMs: 10 * 60_000, name: 'start PostgreSQL' },
  );
  const url = /^URL=(\S+)$/m.exec(started.stdout)?.[1];
  if (started.code !== 0 || !url) {
    throw new Error(
      `.ci/postgres.sh could not start PostgreSQL (exit ${started.code}): ${tail(started.stderr)}`,
    );
  }
  const version = /PostgreSQL \S+/.exec(started.stderr)?.[0] ?? 'PostgreSQL';
  return { url, description: `${version} + PostGIS of \`.ci/postgres.sh\`` };
}

async function withClient<T>(
  server: Server,
  database: string,
  work: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ ...server, database, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

interface BenchDatabase {
  superuser: Server;
  database: string;
  loader: { user: string; password: string };
  serving: { user: string; password: string };
}

/** A fresh database owned by a loader role, with PostGIS and a serving role; dropped at cleanup. */
export async function createDatabase(url: string): Promise<BenchDatabase> {
  const superuser = parseUrl(url);
  const suffix = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const database = `geoplane_bench_imports_${suffix}`;
  const loader = { user: `geoplane_bench_loader_${suffix}`, password: randomBytes(18).toString('base64url') };
  const serving = {
    user: `geoplane_bench_serving_${suffix}`,
    password: randomBytes(18).toString('base64url'),
  };
  const ident = pg.escapeIdentifier;
  const literal = pg.escapeLiteral;
  const maintenance = (sql: string) => withClient(superuser, superuser.database, (c) => c.query(sql));
  onCleanup(`${PREFIX} database`, async () => {
    await maintenance(`DROP DATABASE IF EXISTS ${ident(database)} WITH (FORCE)`);
    await maintenance(`DROP ROLE IF EXISTS ${ident(loader.user)}`);
    await maintenance(`DROP ROLE IF EXISTS ${ident(serving.user)}`);
  });
  await maintenance(`CREATE ROLE ${ident(loader.user)} LOGIN PASSWORD ${literal(loader.password)}`);
  await maintenance(`CREATE ROLE ${ident(serving.user)} LOGIN PASSWORD ${literal(serving.password)}`);
  await maintenance(`CREATE DATABASE ${ident(database)} OWNER ${ident(loader.user)}`);
  await withClient(superuser, database, (c) => c.query('CREATE EXTENSION postgis'));
  return { superuser, database, loader, serving };
}

/** Where ours loads: the loader's connection (bench/import-load.ts's ImportDatabaseConfig) and a superuser's. */
interface LoadTarget {
  name: string;
  loader: Record<string, unknown>;
  superuser: Server;
  database: string;
}

/** The real PostgreSQL's bench database, loaded by its loader role (sslmode: the loader's default). */
export function realTarget(db: BenchDatabase): LoadTarget {
  return {
    name: 'PostgreSQL',
    loader: {
      host: db.superuser.host,
      port: db.superuser.port,
      database: db.database,
      user: db.loader.user,
      password: db.loader.password,
    },
    superuser: db.superuser,
    database: db.database,
  };
}

/** The embedded PostGIS, loaded by its importer login as the local host configures IMPORT_DATABASE. */
export function embeddedTarget(e: EmbeddedPostgis): LoadTarget {
  return {
    name: 'embedded PostGIS',
    loader: {
      host: e.host,
      port: e.port,
      database: e.database,
      sslmode: 'disable',
      user: e.importer.user,
      password: e.importer.password,
    },
    superuser: {
      host: e.host,
      port: e.port,
      user: e.admin.user,
      password: e.admin.password,
      database: e.database,
    },
    database: e.database,
  };
}

/** Rows and non-null geometries of a table (as the superuser). */
function countRows(target: LoadTarget, schema: string, tableName: string): Promise<Count> {
  const relation = `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(tableName)}`;
  return withClient(target.superuser, target.database, async (c) => {
    const { rows } = await c.query<{ rows: string; geometries: string }>(
      `SELECT count(*)::text AS rows, count(geom)::text AS geometries FROM ${relation}`,
    );
    return { rows: Number(rows[0]?.rows), geometries: Number(rows[0]?.geometries) };
  });
}

/** Between loads: the previous load's tables dropped and a checkpoint, so no load pays for another. */
function settle(target: LoadTarget, dropSql: string): Promise<void> {
  return withClient(target.superuser, target.database, async (c) => {
    await c.query(dropSql);
    await c.query('CHECKPOINT');
  });
}

// ---- the loads ----------------------------------------------------------------------------------
let loader: Promise<string> | undefined;

/**
 * bench/import-load.ts bundled as the import step's Lambda is (esbuild with infra/bundling.ts's
 * options, the format reader's worker thread staged beside it): the loader runs the product's code
 * as deployed, not from source through tsx (whose worker threads compile TypeScript as they start).
 */
function loaderBundle(): Promise<string> {
  if (!loader) {
    const dir = mkdtempSync(join(tmpdir(), 'geoplane-bench-loader-'));
    onCleanup(`${PREFIX} loader bundle`, async () => rmSync(dir, { recursive: true, force: true }));
    loader = bundleScript('bench/import-load.ts', dir);
  }
  return loader;
}

/** Ours: bench/import-load.ts in a child process (forced into `steps` runs when > 1); rows counted, schema dropped. */
export async function loadOurs(target: LoadTarget, file: string, key: string, steps = 1): Promise<OurLoad> {
  const args = [process.execPath, await loaderBundle(), file, JSON.stringify(target.loader)];
  if (steps > 1) args.push(String(steps));
  // Through a shell that forks it (not exec): a process forked straight from this one inherits this
  // one's RSS as its own peak (Linux keeps the high-water mark over fork + exec), and this process
  // holds the embedded PostGIS in its worker threads.
  const done = await run('sh', ['-c', '"$@"; exit $?', 'sh', ...args], {
    timeoutMs: LOAD_TIMEOUT_MS,
    name: `import-load ${key}${steps > 1 ? ` in ${steps} runs` : ''} into ${target.name}`,
  });
  const line = done.stdout.trim().split('\n').pop() ?? '';
  if (done.code !== 0 || !line.startsWith('{')) {
    throw new Error(`bench/import-load.ts exited ${done.code ?? done.signal}: ${tail(done.stderr)}`);
  }
  const printed = JSON.parse(line) as Omit<OurLoad, 'process_seconds' | 'count'>;
  const count = await countRows(target, printed.schema, printed.table);
  await settle(target, `DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(printed.schema)} CASCADE`);
  return { ...printed, process_seconds: done.ms / 1000, count };
}

export async function loadGdal(db: BenchDatabase, r: FileRun, timeRss: boolean): Promise<GdalLoad> {
  const nln = `bench_ogr_${r.key}`;
  // The password through libpq's PGPASSWORD rather than on the command line; sslmode: libpq's default (prefer).
  const destination = `PG:host=${db.superuser.host} port=${db.superuser.port} dbname=${db.database} user=${db.loader.user}`;
  const ogr = [
    'ogr2ogr',
    '-f',
    'PostgreSQL',
    destination,
    r.file,
    '-nln',
    nln,
    '-lco',
    'GEOMETRY_NAME=geom',
    '-lco',
    'SPATIAL_INDEX=GIST',
    '--config',
    'PG_USE_COPY',
    'YES',
    '-gt',
    '100000',
  ];
  const [command, ...args] = timeRss ? ['/usr/bin/time', '-v', ...ogr] : ogr;
  const t0 = performance.now();
  const done = await run(command as string, args, {
    env: { ...process.env, PGPASSWORD: db.loader.password },
    timeoutMs: LOAD_TIMEOUT_MS,
    name: `ogr2ogr ${r.key}`,
  });
  const seconds = (performance.now() - t0) / 1000;
  if (done.code !== 0) throw new Error(`ogr2ogr exited ${done.code ?? done.signal}: ${tail(done.stderr)}`);
  const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(done.stderr)?.[1];
  const count = await countRows(realTarget(db), 'public', nln);
  await settle(realTarget(db), `DROP TABLE IF EXISTS public.${pg.escapeIdentifier(nln)}`);
  return { seconds, peak_rss_bytes: kb ? Number(kb) * 1024 : null, count };
}

/** What is wrong with a load's row count; undefined when the table holds every feature with its geometry. */
export function countProblem(r: { features: number }, count: Count, reported?: number): string | undefined {
  if (count.rows !== r.features)
    return `the table holds ${thousands(count.rows)} rows, not the file's ${thousands(r.features)}`;
  if (count.geometries !== r.features)
    return `${thousands(count.geometries)} of ${thousands(r.features)} rows have a geometry`;
  if (reported !== undefined && reported !== r.features)
    return `the loader reports ${thousands(reported)} features, not ${thousands(r.features)}`;
  return undefined;
}

/** Starts the embedded PostGIS on a temp data dir (registered for cleanup); waits for its warm standby. */
export async function startEmbedded(progress: (s: string) => void): Promise<EmbeddedPostgis> {
  const dataDir = mkdtempSync(join(tmpdir(), 'geoplane-bench-embedded-'));
  let embedded: Promise<EmbeddedPostgis> | undefined;
  onCleanup(`${PREFIX} embedded PostGIS`, async () => {
    await embedded?.then((e) => e.stop()).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  });
  progress('imports: starting the embedded PostGIS (PGlite behind the wire front door) on a temp data dir');
  embedded = startEmbeddedPostgis({
    dataDir,
    port: 0,
    onProgress: (m) => progress(`imports: embedded PostGIS: ${m}`),
  });
  const e = await embedded;
  // The host keeps a warm standby loading beside the first worker (ADR 0142): let it finish first,
  // so its loading doesn't compete with the loads measured.
  for (let waited = 0; !e.standbyWarm() && waited < 90_000; waited += 500)
    await new Promise((resolve) => setTimeout(resolve, 500));
  return e;
}
