import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DeadlineBoard } from './postgis-deadlines.ts';
import { demoSeedSql } from './postgis-seed.ts';
import type { StandbyAhead } from './postgis-standby.ts';
import { PostgisSupervisor, type Running, type StoppedStatements, stopWorker } from './postgis-supervisor.ts';
import { copyTemplate, templateDataDir } from './postgis-template.ts';
import type { WorkerConfig, WorkerMessage } from './postgis-worker.ts';
import { processRuns } from './processes.ts';

/** The login role of the demo service: reads the demo tables, not `public.secrets`. */
export const DEMO_USER = 'geoplane_demo';
/** A fixed password, so a kept catalog and a re-created PostGIS data dir still agree (loopback only). */
export const DEMO_PASSWORD = 'geoplane_demo';
/**
 * The login that loads imports into their schemas (ADR 0085): CREATE on the database, no
 * superuser. Its password is generated per data dir (ADR 0105): it owns every workspace's staging
 * data, and a password anyone can read in the source would let a service read it.
 */
export const IMPORTER_USER = 'geoplane_importer';
/** The login every published import shared before ADR 0105; retired (no login, no grants) on start. */
export const RETIRED_IMPORT_READER_USER = 'geoplane_import_reader';
const SEED_VERSION = 1;
/** How often "still initialising" is printed while the first start runs. */
const TICK_MS = 10_000;
/** A restarted worker must accept logins within this, or it is terminated and tried again. */
const RESTART_TIMEOUT_MS = 120_000;
/**
 * The next warm standby starts loading this long after a restart handed over the last one: after
 * the probe and the connections held at the door, not beside them (ADR 0142).
 */
const STANDBY_AFTER_RESTART_MS = 1_000;

/** Options of {@link startEmbeddedPostgis}. */
export interface EmbeddedPostgisOptions {
  /** The local data dir (`.local/`); PostGIS lives in `<dataDir>/postgis`. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 picks a free one (read it back from the result). */
  port: number;
  /** Progress lines while the first start initialises (~30–40 s) and on unexpected stops. */
  onProgress?: (message: string) => void;
}

/** A running embedded PostGIS and how to reach it as the demo service's role. */
export interface EmbeddedPostgis {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
  /** The superuser, for tooling and tests only: never put it in a service. */
  admin: { user: string; password: string };
  /** The import loader's login (ADR 0085). */
  importer: { user: string; password: string };
  /** True when this start created and seeded the data dir. */
  firstInit: boolean;
  /** Milliseconds from the call until the port accepted logins. */
  startupMs: number;
  /** Statements stopped at their statement_timeout: cancelled in place, or by a restart (ADR 0108). */
  stoppedStatements(): StoppedStatements;
  /** True while a warm standby waits to take over at the next restart (ADR 0142). */
  standbyWarm(): boolean;
  /** Closes the port, flushes and closes the database, ends the worker; idempotent. */
  stop(): Promise<void>;
}

interface Marker {
  seed_version: number;
  admin_password: string;
  /** The import loader's generated password (ADR 0105); absent in data dirs made before it. */
  importer_password?: string;
  initialised_at: string;
}

/**
 * Starts PGlite with PostGIS in a worker thread and serves it on 127.0.0.1 over the Postgres wire
 * protocol (ADR 0030, 0031). The first start of a data dir initialises and seeds it; later starts
 * reopen it. A data dir is opened by one process at a time (`<dataDir>/postgis.lock`).
 */
export async function startEmbeddedPostgis(options: EmbeddedPostgisOptions): Promise<EmbeddedPostgis> {
  const started = Date.now();
  const progress = options.onProgress ?? ((message: string) => console.log(`[postgis] ${message}`));
  const pgDataDir = join(options.dataDir, 'postgis');
  const markerPath = join(options.dataDir, 'postgis.json');
  const lockPath = join(options.dataDir, 'postgis.lock');
  mkdirSync(options.dataDir, { recursive: true });
  acquireLock(lockPath);
  const releaseLock = () => {
    if (existsSync(lockPath) && readFileSync(lockPath, 'utf8') === String(process.pid)) unlinkSync(lockPath);
  };
  process.once('exit', releaseLock);

  let marker = readMarker(markerPath);
  const initialise = marker === undefined;
  if (initialise && existsSync(pgDataDir)) {
    progress('removing an unfinished PostGIS data dir (its first start was interrupted)');
    rmSync(pgDataDir, { recursive: true, force: true });
  }
  marker ??= {
    seed_version: SEED_VERSION,
    admin_password: randomBytes(18).toString('base64url'),
    initialised_at: '',
  };
  // A data dir made before ADR 0105 gets its loader password now (and keeps it).
  const importerPassword = marker.importer_password ?? randomBytes(24).toString('base64url');
  const newSecrets = marker.importer_password === undefined;
  marker.importer_password = importerPassword;
  const config: WorkerConfig = {
    pgDataDir,
    host: '127.0.0.1',
    port: options.port,
    // A new data dir is a copy of the template (ADR 0155): initialised and seeded once.
    initialise: false,
    demoUser: DEMO_USER,
    demoPassword: DEMO_PASSWORD,
    adminPassword: marker.admin_password,
    importer: { user: IMPORTER_USER, password: importerPassword },
    retiredReader: RETIRED_IMPORT_READER_USER,
    deadlines: DeadlineBoard.allocate(),
  };

  let stopped: Promise<void> | undefined;
  const tick = initialise
    ? setInterval(
        () => progress(`still initialising PostGIS… (${Math.round((Date.now() - started) / 1000)} s)`),
        TICK_MS,
      )
    : undefined;
  let current: Running;
  try {
    if (initialise) {
      const template = await templateDataDir(
        { seed: demoSeedSql(DEMO_USER, DEMO_PASSWORD), seedVersion: SEED_VERSION },
        (dir) => buildTemplate(config, dir, progress),
        progress,
      );
      progress('creating the embedded PostGIS database (first start only) from its template');
      copyTemplate(template, pgDataDir);
    }
    // The worker listens on a port of its own; the supervisor's door owns the public one (ADR 0108).
    current = await launch({ ...config, port: 0 }, progress, () => stopped !== undefined);
  } catch (error) {
    releaseLock();
    process.off('exit', releaseLock);
    throw error;
  } finally {
    clearInterval(tick);
  }
  const { ready } = current;
  if (initialise || newSecrets) {
    if (initialise) marker.initialised_at = new Date().toISOString();
    writeFileSync(markerPath, `${JSON.stringify(marker, null, 2)}\n`, { mode: 0o600 });
  }

  // A restart takes over a warm standby: a worker that has loaded PGlite and PostGIS already and
  // opens the data dir only once the old worker is gone (ADR 0142). Without one (a second restart
  // right after the first, or a standby that failed) a new worker starts from scratch.
  const restartConfig = (): WorkerConfig => ({
    ...config,
    port: 0,
    initialise: false,
    restarted: true,
    deadlines: DeadlineBoard.allocate(),
  });
  let standby: Standby | undefined;
  let warming: NodeJS.Timeout | undefined;
  const warmStandby = () => {
    warming = undefined;
    if (stopped === undefined && standby === undefined) {
      standby = prepareStandby(restartConfig(), progress, () => stopped !== undefined);
    }
  };
  const relaunch = async (): Promise<Running> => {
    const ready = standby;
    standby = undefined;
    let next: Running | undefined;
    if (ready) {
      progress(`opening the data dir in the ${ready.warm ? 'warm' : 'still loading'} standby`);
      next = await ready.start(RESTART_TIMEOUT_MS).catch((error: unknown) => {
        if (stopped === undefined) {
          progress(`the warm standby did not start (${error instanceof Error ? error.message : error})`);
        }
        return undefined;
      });
    }
    next ??= await launch(restartConfig(), progress, () => stopped !== undefined, RESTART_TIMEOUT_MS);
    clearTimeout(warming);
    warming = setTimeout(warmStandby, STANDBY_AFTER_RESTART_MS);
    warming.unref();
    return next;
  };

  // A statement past its deadline is interrupted in place, or the worker restarted under it (and
  // after a wedge or a crash), verified by a probe query; clients wait at the door meanwhile (ADR 0108).
  let supervisor: PostgisSupervisor;
  try {
    supervisor = await PostgisSupervisor.start({
      port: options.port,
      first: current,
      relaunch,
      admin: { user: ready.superuser, password: marker.admin_password, database: ready.database },
      progress,
    });
  } catch (error) {
    await current.worker.terminate();
    releaseLock();
    process.off('exit', releaseLock);
    throw error;
  }

  warmStandby();

  const stop = async () => {
    await supervisor.stop();
    clearTimeout(warming);
    await standby?.discard();
    standby = undefined;
    releaseLock();
    process.off('exit', releaseLock);
  };
  return {
    host: '127.0.0.1',
    port: supervisor.port,
    database: ready.database,
    user: DEMO_USER,
    password: DEMO_PASSWORD,
    admin: { user: ready.superuser, password: marker.admin_password },
    importer: { user: IMPORTER_USER, password: importerPassword },
    firstInit: initialise,
    startupMs: Date.now() - started,
    stoppedStatements: () => supervisor.stoppedStatements(),
    standbyWarm: () => standby?.warm === true,
    stop: () => {
      stopped ??= stop();
      return stopped;
    },
  };
}

/**
 * Initialises and seeds a data dir in `pgDataDir` for the template (ADR 0155), as `config`'s
 * worker would, then closes it cleanly. Its passwords are random and thrown away: every start
 * sets the data dir's own.
 */
async function buildTemplate(
  config: WorkerConfig,
  pgDataDir: string,
  progress: (message: string) => void,
): Promise<void> {
  const running = await launch(
    {
      ...config,
      pgDataDir,
      port: 0,
      initialise: true,
      adminPassword: randomBytes(18).toString('base64url'),
      importer: { ...config.importer, password: randomBytes(24).toString('base64url') },
      deadlines: DeadlineBoard.allocate(),
    },
    progress,
    () => false,
  );
  await stopWorker(running.worker);
}

/** A worker on its way to serving: its `ready` message, or why it won't come. */
interface Spawned {
  worker: Worker;
  config: WorkerConfig;
  ready: Promise<Extract<WorkerMessage, { type: 'ready' }>>;
}

/** A worker that loaded PGlite and PostGIS and waits to open the data dir (ADR 0142). */
interface Standby {
  /** True once PGlite waits at the data dir with PostGIS's bundle unpacked and its modules compiled. */
  readonly warm: boolean;
  /** Opens the data dir (its last owner must be gone) and waits until the port accepts logins. */
  start(timeoutMs: number): Promise<Running>;
  /** Ends it unused. */
  discard(): Promise<void>;
}

/** Spawns a worker and follows its reports until it is ready, fails or exits. */
function spawn(config: WorkerConfig, progress: (message: string) => void, stopping: () => boolean): Spawned {
  const worker = spawnWorker(config);
  const ready = new Promise<Extract<WorkerMessage, { type: 'ready' }>>((resolve, reject) => {
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') resolve(message);
      else if (message.type === 'progress') progress(message.message);
      else if (message.type === 'failed') {
        reject(new Error(`embedded PostGIS failed: ${message.message}`));
        if (!stopping()) progress(`embedded PostGIS failed: ${message.message}`);
      }
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      reject(new Error(`embedded PostGIS worker exited with ${code}`));
      // 1 is a terminate(): the supervisor's restart or stop() says what it does itself.
      if (!stopping() && code !== 1) progress(`embedded PostGIS worker exited with ${code}`);
    });
  });
  ready.catch(() => {});
  return { worker, config, ready };
}

/** Waits until a spawned worker's port accepts logins (within `timeoutMs`, when given); ends it if not. */
async function serving(spawned: Spawned, timeoutMs?: number): Promise<Running> {
  const { worker, config } = spawned;
  let timer: NodeJS.Timeout | undefined;
  try {
    const ready = await Promise.race([
      spawned.ready,
      new Promise<never>((_, reject) => {
        if (timeoutMs !== undefined) {
          timer = setTimeout(() => reject(new Error(`no login within ${timeoutMs} ms`)), timeoutMs);
        }
      }),
    ]);
    // The owner calls stop(); a process that exits anyway doesn't wait for the database thread.
    worker.unref();
    return { worker, board: new DeadlineBoard(config.deadlines), ready };
  } catch (error) {
    await worker.terminate();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Starts a worker and waits until its port accepts logins (within `timeoutMs`, when given). */
function launch(
  config: WorkerConfig,
  progress: (message: string) => void,
  stopping: () => boolean,
  timeoutMs?: number,
): Promise<Running> {
  return serving(spawn(config, progress, stopping), timeoutMs);
}

/**
 * Starts a standby: PGlite's WebAssembly, its file system bundle and PostGIS's (unpacked, its
 * modules compiled) load now, beside the serving worker; the data dir opens on {@link Standby.start}.
 */
function prepareStandby(
  config: WorkerConfig,
  progress: (message: string) => void,
  stopping: () => boolean,
): Standby {
  const spawned = spawn({ ...config, standby: true }, progress, stopping);
  // An idle standby never keeps the process alive.
  spawned.worker.unref();
  const begun = Date.now();
  let warm = false;
  spawned.worker.on('message', (message: WorkerMessage) => {
    if (message.type !== 'standby') return;
    warm = true;
    progress(
      `a warm standby waits for the next restart (loaded in ${Date.now() - begun} ms; ${aheadText(message.ahead)})`,
    );
  });
  return {
    get warm() {
      return warm;
    },
    start: (timeoutMs) => {
      spawned.worker.postMessage({ type: 'go' });
      return serving(spawned, timeoutMs);
    },
    discard: async () => {
      await spawned.worker.terminate();
    },
  };
}

/** What a standby did ahead (ADR 0142), as the host logs it. */
function aheadText(ahead: StandbyAhead): string {
  const done = [
    ...(ahead.linked ? ['PostGIS linked'] : []),
    ...(ahead.touchedBytes > 0 ? [`${Math.round(ahead.touchedBytes / 1048576)} MB of memory touched`] : []),
  ];
  const skipped = ahead.problems.length > 0 ? `not done ahead: ${ahead.problems.join('; ')}` : '';
  return [done.join(', '), skipped].filter(Boolean).join('; ');
}

/**
 * The worker runs TypeScript: its bootstrap registers tsx's loader first (a Worker's `--import`
 * is not honoured on Node 20, and the parent may be vitest rather than tsx).
 */
function spawnWorker(config: WorkerConfig): Worker {
  const require = createRequire(import.meta.url);
  const tsxApi = pathToFileURL(
    join(require.resolve('tsx/package.json'), '..', 'dist/esm/api/index.mjs'),
  ).href;
  const entry = new URL('./postgis-worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: config });
}

function readMarker(path: string): Marker | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as Marker;
}

/** One process per data dir: PGlite has no file locking of its own, two openers corrupt it. */
function acquireLock(path: string): void {
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
  if (pid === process.pid || (pid > 0 && processRuns(pid))) {
    throw new Error(`the PostGIS data dir is in use by process ${pid} (${path})`);
  }
  writeFileSync(path, String(process.pid));
}
