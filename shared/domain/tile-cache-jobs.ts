/**
 * Tile cache jobs (ADR 0139): seed (render what is missing), reseed (render everything again) and
 * truncate (remove what is stored) for some or all of a workspace's layers, a zoom range and a
 * bbox, as durable jobs. A workflow step runs chunks of tiles; each chunk's progress (the cursor
 * and the counters) is one conditional write, so a run killed at any point resumes after the last
 * committed chunk; a chunk re-run renders the same tiles again (a tile is stored once, by key).
 * Cancel sets a flag the next chunk honours. One unfinished job per workspace.
 */
import {
  currentFingerprint,
  type DataCatalog,
  type LayerData,
  type ServedLayer,
  serves,
  tileBudgetOf,
} from './data-plane.ts';
import { InvalidInputError, NotFoundError, RuleViolationError } from './errors.ts';
import { timeOrderedId } from './import-model.ts';
import {
  cancelJob,
  failJob,
  isFinished,
  JOB_STATUSES,
  type JobNames,
  type JobRecord,
  type JobTransitions,
  mapLimited,
  startedJob,
  startJob,
} from './jobs.ts';
import type { Layer } from './layers.ts';
import type { Page, WorkspacePageQuery } from './page.ts';
import { defaultSettings } from './settings.ts';
import {
  type Bbox,
  CACHED_TILE_MATRIX_SET,
  layerTilePrefix,
  MAX_CACHED_ZOOM,
  parseTileKey,
  type TileCachePorts,
  type TileXYZ,
  tileIn,
  tileKey,
  tileRange,
  tilesIn,
  workspaceTilePrefix,
} from './tile-cache.ts';

export type TileCacheJobType = 'seed' | 'reseed' | 'truncate';
export const TILE_CACHE_JOB_TYPES: readonly TileCacheJobType[] = ['seed', 'reseed', 'truncate'];
export { JOB_STATUSES as TILE_CACHE_JOB_STATUSES };

/** Tiles one seed or reseed job may cover (layers × tiles of the range). */
export const MAX_SEED_TILES = 1_000_000;
/** Layers one job may name. */
export const MAX_JOB_LAYERS = 50;
/** Tiles one seed chunk renders; stored keys one truncate chunk lists. */
export const SEED_CHUNK = 32;
export const TRUNCATE_CHUNK = 500;
/** Tiles rendered at once within a chunk. */
const SEED_PARALLELISM = 4;

/** Named layers looked up at once when a job is created. */
const LAYER_LOOKUPS = 8;

/** A layer a job works on, as it was named when the job was created. */
export interface JobLayer {
  id: string;
  public_id: string;
  service_id: string;
}

export interface TileCacheJobProgress {
  /** Seed and reseed: tiles the job covers (layers × tiles); truncate: unknown until it is done. */
  tiles_total?: number;
  /** Seed/reseed: tiles looked at; truncate: stored tiles looked at. */
  tiles_done: number;
  tiles_rendered: number;
  /** Seed: tiles already stored; every type: tiles of a layer no longer served. */
  tiles_skipped: number;
  tiles_removed: number;
  bytes_written: number;
  bytes_removed: number;
}

export interface TileCacheJob extends JobRecord, TileCacheJobProgress {
  type: TileCacheJobType;
  tile_matrix_set: typeof CACHED_TILE_MATRIX_SET;
  /** The layers named; empty for a truncate of the whole workspace (every layer, gone ones too). */
  layers: JobLayer[];
  zoom_min: number;
  zoom_max: number;
  bbox?: [number, number, number, number];
  /** Seed/reseed: the next tile position; truncate: `<layer index>:<last key>`. */
  cursor?: string;
}

/** Port: tile cache jobs and their transitions. */
export interface TileCacheJobRepository extends JobTransitions<TileCacheJob> {
  /** Writes a queued job with the workspace's job marker; a StateConflictError names an unfinished job. */
  create(job: TileCacheJob): Promise<void>;
  find(workspaceId: string, jobId: string): Promise<TileCacheJob | undefined>;
  /** The workspace's jobs in the order they were created. */
  list(workspaceId: string, limit: number, cursor?: string): Promise<Page<TileCacheJob>>;
  /** The job's cursor and counters IF it is running, not cancelled and its cursor is `previous`. */
  commitProgress(previous: TileCacheJob, next: TileCacheJob, now: string): Promise<boolean>;
  /** The id of the workspace's unfinished job (its marker), if any. */
  runningJob(workspaceId: string): Promise<string | undefined>;
}

/** What a tile cache execution receives: the job it runs. */
export interface TileCacheWorkflowInput {
  job_id: string;
  workspace_id: string;
}

/** Port: starts the tile cache workflow (execution name = the job id). */
export interface TileCacheStarter {
  startTileCacheJob(name: string, input: TileCacheWorkflowInput): Promise<void>;
}

export interface CreateTileCacheJobInput {
  type: TileCacheJobType;
  layers?: string[];
  zoom_min?: number;
  zoom_max?: number;
  bbox?: number[];
  tile_matrix_set?: string;
}

/** How a tile cache job is named in answers and failures. */
export const TILE_CACHE_JOB: JobNames = {
  name: 'Tile cache job',
  finished: 'tile_cache_job_finished',
  workflow: 'tile cache',
  failed: 'tile_cache_job_failed',
};

const notFound = (id: string) =>
  new NotFoundError('tile_cache_job_not_found', `Tile cache job '${id.slice(0, 64)}' not found.`);

/** What a use case on one job is asked: its workspace and the `{job}` of the path. */
export interface TileCacheJobCommand {
  workspaceId: string;
  job: string;
  ifMatch?: string;
}

/** A job of the workspace (getTileCacheJob, its progress; 404 otherwise). */
export async function requireTileCacheJob(
  { jobs: repo }: { jobs: TileCacheJobRepository },
  { workspaceId, job: jobId }: TileCacheJobCommand,
): Promise<TileCacheJob> {
  const job = await repo.find(workspaceId, jobId.toLowerCase());
  if (!job) throw notFound(jobId);
  return job;
}

function invalid(message: string, field: string): InvalidInputError {
  return new InvalidInputError('invalid_tile_cache_job', message, { field });
}

/** The bbox, checked: west < east, south < north, inside lon/lat (no antimeridian crossing). */
function checkedBbox(bbox: number[] | undefined): Bbox | undefined {
  if (bbox === undefined) return undefined;
  const [w, s, e, n] = bbox as [number, number, number, number];
  if (bbox.length !== 4 || !bbox.every(Number.isFinite))
    throw invalid('bbox must be four numbers: west, south, east, north (CRS84).', 'bbox');
  if (w < -180 || e > 180 || s < -90 || n > 90)
    throw invalid('bbox must lie within longitude -180..180 and latitude -90..90.', 'bbox');
  if (!(w < e) || !(s < n))
    throw invalid(
      'bbox must have west < east and south < north (a box across the antimeridian is two jobs).',
      'bbox',
    );
  return [w, s, e, n];
}

/** Ports the job use cases read the catalog through. */
export interface TileCacheJobDeps {
  jobs: TileCacheJobRepository;
  catalog: DataCatalog;
  starter: TileCacheStarter;
}

/** Whether the layer's tiles are served (and so may be seeded). */
function servable(layer: Layer): boolean {
  return layer.enabled;
}

/**
 * Creates a queued job and starts its workflow. Seed and reseed need the workspace's vector
 * tiles and tile cache on and name at most {@link MAX_SEED_TILES} tiles; truncate needs neither.
 */
export async function createTileCacheJob(
  deps: TileCacheJobDeps,
  {
    workspaceId,
    body: input,
    now = new Date(),
  }: { workspaceId: string; body: CreateTileCacheJobInput; now?: Date },
): Promise<TileCacheJob> {
  if (input.tile_matrix_set !== undefined && input.tile_matrix_set !== CACHED_TILE_MATRIX_SET)
    throw invalid(`Only ${CACHED_TILE_MATRIX_SET} tiles are rendered and cached.`, 'tile_matrix_set');
  const seeding = input.type !== 'truncate';
  if (seeding && (input.zoom_min === undefined || input.zoom_max === undefined))
    throw invalid('A seed or reseed job names its zoom range: zoom_min and zoom_max.', 'zoom_min');
  const zoomMin = input.zoom_min ?? 0;
  const zoomMax = input.zoom_max ?? MAX_CACHED_ZOOM;
  if (zoomMin > zoomMax) throw invalid('zoom_min must not exceed zoom_max.', 'zoom_min');
  const bbox = checkedBbox(input.bbox);
  const names = [...new Set(input.layers ?? [])];
  if (names.length > MAX_JOB_LAYERS) throw invalid(`A job names at most ${MAX_JOB_LAYERS} layers.`, 'layers');

  let layers: JobLayer[];
  if (names.length > 0) {
    layers = [];
    // Looked up together, a few at a time; judged in the order named (the first missing one is named).
    const found = await mapLimited(names, LAYER_LOOKUPS, (name) =>
      deps.catalog.collection(workspaceId, name),
    );
    for (const [i, name] of names.entries()) {
      const layer = found[i]?.layer;
      if (!layer)
        throw new NotFoundError('layer_not_found', `Layer '${name.slice(0, 128)}' does not exist.`, {
          layer: name,
        });
      if (seeding && !servable(layer))
        throw new RuleViolationError(
          'layer_not_served',
          `Layer '${name}' is disabled; enable it to seed its tiles.`,
          {
            layer: name,
          },
        );
      layers.push({ id: layer.id, public_id: layer.public_id, service_id: layer.service_id });
    }
  } else if (seeding) {
    const all = (await deps.catalog.layers(workspaceId, MAX_JOB_LAYERS + 1)).filter(servable);
    if (all.length > MAX_JOB_LAYERS)
      throw invalid(
        `The workspace serves more than ${MAX_JOB_LAYERS} layers; name the ones to seed.`,
        'layers',
      );
    if (all.length === 0) throw new RuleViolationError('no_layers', 'The workspace serves no layer to seed.');
    layers = all.map((l) => ({ id: l.id, public_id: l.public_id, service_id: l.service_id }));
  } else layers = [];

  let total: number | undefined;
  if (seeding) {
    const stored = await deps.catalog.protocolSettings(workspaceId);
    const tiles = stored.tiles ?? defaultSettings['ogc-tiles'];
    if (!tiles.enabled || !tiles.settings.vector_tiles.enabled || !tiles.settings.cache_enabled)
      throw new RuleViolationError(
        'tile_cache_disabled',
        "The workspace's OGC API Tiles settings have vector tiles or the tile cache off; nothing would be kept.",
      );
    total = layers.length * tilesIn(zoomMin, zoomMax, bbox);
    if (total > MAX_SEED_TILES)
      throw invalid(
        `The job covers ${total} tiles; at most ${MAX_SEED_TILES} per job (narrow the zoom range, the bbox or the layers).`,
        'zoom_max',
      );
  }

  const ts = now.toISOString();
  const job: TileCacheJob = {
    id: timeOrderedId(now.getTime()),
    workspace_id: workspaceId,
    type: input.type,
    tile_matrix_set: CACHED_TILE_MATRIX_SET,
    layers,
    zoom_min: zoomMin,
    zoom_max: zoomMax,
    ...(bbox ? { bbox: [...bbox] as [number, number, number, number] } : {}),
    status: 'queued',
    cancel_requested: false,
    ...(total !== undefined ? { tiles_total: total } : {}),
    tiles_done: 0,
    tiles_rendered: 0,
    tiles_skipped: 0,
    tiles_removed: 0,
    bytes_written: 0,
    bytes_removed: 0,
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  await deps.jobs.create(job);
  return startJob(deps.jobs, TILE_CACHE_JOB, job, () =>
    deps.starter.startTileCacheJob(job.id, { job_id: job.id, workspace_id: workspaceId }),
  );
}

/**
 * Asks an unfinished job to stop: the next chunk sees the flag and the job ends `cancelled` with
 * the progress it had. Asking again answers as before; a finished job is a 409; a stale job (no
 * live execution) is ended at once.
 */
export async function cancelTileCacheJob(
  { jobs: repo }: { jobs: TileCacheJobRepository },
  { workspaceId, job: jobId, ifMatch, now = new Date() }: TileCacheJobCommand & { now?: Date },
): Promise<TileCacheJob> {
  return cancelJob(
    repo,
    TILE_CACHE_JOB,
    {
      read: () => requireTileCacheJob({ jobs: repo }, { workspaceId, job: jobId }),
      reload: (job) => repo.find(job.workspace_id, job.id),
    },
    ifMatch,
    now,
  );
}

/** The job as the API shows it. */
export function presentTileCacheJob(job: TileCacheJob) {
  const { cursor: _cursor, ...shown } = job;
  return { ...shown, layers: job.layers.map((l) => l.public_id) };
}

/** A page of the workspace's jobs as the API shows them. */
export async function listTileCacheJobs(
  { jobs: repo }: { jobs: TileCacheJobRepository },
  { workspaceId, limit, cursor }: WorkspacePageQuery,
) {
  const page = await repo.list(workspaceId, limit, cursor);
  return {
    jobs: page.items.map(presentTileCacheJob),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  };
}

/** `…/progress`: how far the job is, its rate and what is left, from its counters. */
export function tileCacheJobProgress(job: TileCacheJob, now = new Date()) {
  const started = job.started_at ? Date.parse(job.started_at) : undefined;
  const until = job.finished_at ? Date.parse(job.finished_at) : now.getTime();
  const seconds = started !== undefined ? Math.max(0.001, (until - started) / 1000) : undefined;
  const rate = seconds !== undefined ? job.tiles_done / seconds : undefined;
  const total = job.tiles_total;
  const percent =
    job.status === 'succeeded'
      ? 100
      : total
        ? Math.min(100, Math.floor((job.tiles_done / total) * 1000) / 10)
        : undefined;
  const left = total !== undefined ? Math.max(0, total - job.tiles_done) : undefined;
  return {
    job_id: job.id,
    type: job.type,
    status: job.status,
    cancel_requested: job.cancel_requested,
    tiles_done: job.tiles_done,
    ...(total !== undefined ? { tiles_total: total } : {}),
    ...(percent !== undefined ? { percent } : {}),
    ...(rate !== undefined ? { tiles_per_second: Math.round(rate * 10) / 10 } : {}),
    ...(left !== undefined && rate && !isFinished(job.status) ? { eta_seconds: Math.ceil(left / rate) } : {}),
    updated_at: job.updated_at,
  };
}

/** The tile at a seed position: layer index, then zoom, column, row (in that order). */
export function seedTileAt(job: Pick<TileCacheJob, 'zoom_min' | 'zoom_max' | 'bbox'>, position: number) {
  const perLayer = tilesIn(job.zoom_min, job.zoom_max, job.bbox);
  const layer = Math.floor(position / perLayer);
  let rest = position % perLayer;
  for (let z = job.zoom_min; z <= job.zoom_max; z++) {
    const r = tileRange(z, job.bbox);
    const cols = r.x1 - r.x0 + 1;
    const rows = r.y1 - r.y0 + 1;
    if (rest < cols * rows) {
      return { layer, tile: { z, x: r.x0 + Math.floor(rest / rows), y: r.y0 + (rest % rows) } as TileXYZ };
    }
    rest -= cols * rows;
  }
  throw new Error(`Seed position ${position} is beyond the job.`);
}

/** Ports of a tile cache step. */
export interface TileCacheStepDeps {
  jobs: TileCacheJobRepository;
  catalog: DataCatalog;
  data: LayerData;
  cache: TileCachePorts;
  now?: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One task of the tile cache workflow: chunks until the job is finished or `budgetMs` is spent.
 * Returns `done` when the job is finished.
 */
export async function runTileCacheStep(
  deps: TileCacheStepDeps,
  input: TileCacheWorkflowInput,
  budgetMs: number,
): Promise<{ done: boolean }> {
  const clock = deps.now ?? Date.now;
  const deadline = clock() + budgetMs;
  const load = () => deps.jobs.find(input.workspace_id, input.job_id);
  const found = await load();
  if (!found || isFinished(found.status)) return { done: true };
  const started = await startedJob(deps.jobs, found, load, () => iso(clock()));
  if (!started) return { done: true };
  let job: TileCacheJob = started;
  const served = job.type === 'truncate' ? undefined : await servedLayers(deps, job);
  while (clock() < deadline) {
    if (job.cancel_requested) {
      await deps.jobs.finish(job, 'cancelled', iso(clock()));
      return { done: true };
    }
    const next: TileCacheJob | 'finished' =
      job.type === 'truncate' ? await truncateChunk(deps, job) : await seedChunk(deps, job, served ?? []);
    if (next === 'finished') {
      await deps.jobs.finish(job, 'succeeded', iso(clock()));
      return { done: true };
    }
    if (!(await deps.jobs.commitProgress(job, next, iso(clock())))) {
      // Cancelled, finished elsewhere, or another run moved it: read it again and go on from there.
      const again = await load();
      if (!again || isFinished(again.status)) return { done: true };
      job = again;
      continue;
    }
    job = { ...next, updated_at: iso(clock()) };
  }
  return { done: false };
}

/** The job's layers as they are now, each with its service (undefined: no longer served). */
async function servedLayers(
  deps: TileCacheStepDeps,
  job: TileCacheJob,
): Promise<(ServedLayer | undefined)[]> {
  return Promise.all(
    job.layers.map(async (named) => {
      const { layer, service } = await deps.catalog.collection(job.workspace_id, named.public_id);
      if (!layer || layer.id !== named.id || !layer.enabled) return undefined;
      if (!serves(service)) return undefined;
      return { layer, service };
    }),
  );
}

/** The next seed chunk's job (cursor and counters moved), or `finished`. */
async function seedChunk(
  deps: TileCacheStepDeps,
  job: TileCacheJob,
  served: readonly (ServedLayer | undefined)[],
): Promise<TileCacheJob | 'finished'> {
  const total = job.tiles_total ?? 0;
  const from = Number(job.cursor ?? 0);
  if (from >= total) return 'finished';
  const to = Math.min(total, from + SEED_CHUNK);
  const stored = await deps.catalog.protocolSettings(job.workspace_id);
  const tiles = stored.tiles ?? defaultSettings['ogc-tiles'];
  const budget = tileBudgetOf(tiles);
  const state = await deps.cache.state(job.workspace_id);
  const positions = Array.from({ length: to - from }, (_, i) => from + i);
  const outcomes = await mapLimited(positions, SEED_PARALLELISM, async (position) => {
    const { layer, tile } = seedTileAt(job, position);
    const s = served[layer];
    if (!s || !tiles.settings.cache_enabled) return { kind: 'skipped' as const };
    const key = tileKey(job.workspace_id, s.layer.id, currentFingerprint(s, budget, state), tile);
    if (job.type === 'seed' && (await deps.cache.store.get(key))) return { kind: 'skipped' as const };
    const rendered = await deps.data.tile(
      [s],
      { z: String(tile.z), x: String(tile.x), y: String(tile.y) },
      budget,
    );
    if (job.type === 'seed') {
      const fresh = await deps.cache.store.putNew(key, rendered);
      return {
        kind: 'rendered' as const,
        entries: fresh ? 1 : 0,
        bytes: fresh ? rendered.bytes.byteLength : 0,
      };
    }
    const before = await deps.cache.store.replace(key, rendered);
    return {
      kind: 'rendered' as const,
      entries: before === undefined ? 1 : 0,
      bytes: rendered.bytes.byteLength - (before ?? 0),
    };
  });
  let entries = 0;
  let bytes = 0;
  let rendered = 0;
  let skipped = 0;
  for (const o of outcomes) {
    if (o.kind === 'skipped') skipped++;
    else {
      rendered++;
      entries += o.entries;
      bytes += o.bytes;
    }
  }
  if (entries !== 0 || bytes !== 0) await deps.cache.stored(job.workspace_id, entries, bytes);
  return {
    ...job,
    cursor: String(to),
    tiles_done: job.tiles_done + positions.length,
    tiles_rendered: job.tiles_rendered + rendered,
    tiles_skipped: job.tiles_skipped + skipped,
    bytes_written: job.bytes_written + Math.max(0, bytes),
  };
}

/** The truncate cursor: which named layer (0 for the whole workspace) and the last key listed. */
function truncateCursor(cursor: string | undefined): { layer: number; after?: string } {
  if (!cursor) return { layer: 0 };
  const cut = cursor.indexOf(':');
  const after = cursor.slice(cut + 1);
  return { layer: Number(cursor.slice(0, cut)), ...(after ? { after } : {}) };
}

/** The next truncate chunk's job, or `finished`. */
async function truncateChunk(deps: TileCacheStepDeps, job: TileCacheJob): Promise<TileCacheJob | 'finished'> {
  const at = truncateCursor(job.cursor);
  const prefixes = job.layers.length
    ? job.layers.map((l) => layerTilePrefix(job.workspace_id, l.id))
    : [workspaceTilePrefix(job.workspace_id)];
  if (at.layer >= prefixes.length) return 'finished';
  const page = await deps.cache.store.list(prefixes[at.layer] as string, at.after, TRUNCATE_CHUNK);
  const doomed = page.tiles.filter((t) => {
    const parsed = parseTileKey(t.key);
    return parsed !== undefined && tileIn(parsed.tile, job.zoom_min, job.zoom_max, job.bbox);
  });
  await deps.cache.store.remove(doomed.map((t) => t.key));
  const bytes = doomed.reduce((n, t) => n + t.bytes, 0);
  if (doomed.length > 0) await deps.cache.stored(job.workspace_id, -doomed.length, -bytes);
  const cursor = page.next ? `${at.layer}:${page.next}` : `${at.layer + 1}:`;
  return {
    ...job,
    cursor,
    tiles_done: job.tiles_done + page.tiles.length,
    tiles_removed: job.tiles_removed + doomed.length,
    bytes_removed: job.bytes_removed + bytes,
  };
}

/** The statuses a job can have, for filters and schemas. */
export const tileCacheJobStatuses = JOB_STATUSES;

/** The workflow's failure path: the job ends `failed` with the reason; what it did stays. */
export async function failTileCacheJob(
  repo: TileCacheJobRepository,
  input: TileCacheWorkflowInput,
  message: string,
  now = new Date(),
): Promise<void> {
  await failJob(repo, TILE_CACHE_JOB, await repo.find(input.workspace_id, input.job_id), message, now);
}
