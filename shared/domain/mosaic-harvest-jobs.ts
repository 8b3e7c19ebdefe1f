/**
 * Mosaic harvest jobs (ADR 0136): a harvest of a whole root (100,000 files) as a durable job. The
 * job item holds the status, the cursor and the progress; a workflow step scans the root in
 * chunks, each chunk's granules committed as one new generation in the same transaction as the
 * job's cursor and counters, so a run killed at any point resumes after the last committed chunk
 * and never adds a file twice. Cancel sets a flag the next chunk honours.
 */
import { createHash } from 'node:crypto';
import { InvalidInputError, NotFoundError, RuleViolationError } from './errors.ts';
import { timeOrderedId } from './import-model.ts';
import {
  cancelJob,
  canTransition,
  failJob,
  isFinished,
  isStale,
  JOB_STATUSES,
  type JobNames,
  type JobRecord,
  type JobStatus,
  type JobTransitions,
  mapLimited,
  STALE_JOB_MS,
  startedJob,
  startJob,
} from './jobs.ts';
import {
  DEFAULT_HARVEST_PATTERN,
  type Granule,
  type GranuleHeader,
  globToRegExp,
  isActive,
  MAX_GRANULES_PER_HARVEST,
  type MosaicRepository,
  type MosaicState,
  normaliseRoot,
  type RasterSources,
  requireMosaic,
  sourceUri,
} from './mosaics.ts';
import type { Page } from './page.ts';
import type { Service } from './services.ts';

export type HarvestJobStatus = JobStatus;
export const HARVEST_JOB_STATUSES = JOB_STATUSES;
export { canTransition, isFinished, isStale, STALE_JOB_MS };
/** `adding` scans the files after the cursor; `removing` (with `remove_missing`) pages the granules. */
export type HarvestJobPhase = 'adding' | 'removing';

/** Files one chunk looks at, at most (with at most {@link MAX_GRANULES_PER_HARVEST} new granules). */
export const FILES_PER_CHUNK = 1000;
/** Failures a job keeps with their reasons (the count goes on). */
export const MAX_RECORDED_FAILURES = 20;
/** The cursor of a `removing` phase that has seen its last page. */
export const REMOVAL_DONE = '~done';

export interface HarvestJobProgress {
  /** Files after the cursor looked at (matching the pattern). */
  files_scanned: number;
  /** Files matching the pattern when the job last listed the root. */
  files_total?: number;
  granules_added: number;
  granules_removed: number;
  /** Files already in the mosaic (left as they are). */
  files_skipped: number;
  /** Files that are not readable GeoTIFFs (see `failures`). */
  files_failed: number;
}

export interface HarvestFailure {
  path: string;
  reason: string;
  message: string;
}

export interface HarvestJob extends JobRecord, HarvestJobProgress {
  service_id: string;
  phase: HarvestJobPhase;
  pattern: string;
  remove_missing: boolean;
  /** `adding`: the last root-relative path committed; `removing`: the granule page cursor. */
  cursor?: string;
  failures: HarvestFailure[];
  /** The mosaic generation the job last committed. */
  generation?: number;
}

/** What one chunk commits with the job's cursor and counters (in one transaction). */
export interface HarvestChunk {
  /** The cursor the job had when the chunk was read (the commit is conditioned on it). */
  previous: string | undefined;
  phase: HarvestJobPhase;
  /** The job after the chunk: cursor, phase, counters, failures. */
  next: HarvestJob;
  /** Granules added as generation base+1. */
  add?: { service: Service; base: MosaicState; granules: Granule[] };
  /** Granules removed as generation base+1. */
  remove?: { service: Service; base: MosaicState; granuleIds: string[] };
}

/** Port: harvest jobs and their transitions (each one transaction). */
export interface HarvestJobRepository extends JobTransitions<HarvestJob> {
  /** Writes a queued job with the mosaic's harvest marker; a StateConflictError names an unfinished job. */
  create(job: HarvestJob, service: Service): Promise<void>;
  find(workspaceId: string, serviceId: string, jobId: string): Promise<HarvestJob | undefined>;
  /** The mosaic's jobs, newest first. */
  list(workspaceId: string, serviceId: string, limit: number, cursor?: string): Promise<Page<HarvestJob>>;
  /**
   * The chunk's granules, the job's cursor and counters in one transaction conditioned on the
   * job (running, not cancelled, cursor = previous) and the mosaic (generation = base):
   * `job_changed` or `generation_moved` when a condition failed.
   */
  commitChunk(
    job: HarvestJob,
    chunk: HarvestChunk,
    now: string,
  ): Promise<'ok' | 'job_changed' | 'generation_moved'>;
}

/** What a harvest execution receives: the job it runs. */
export interface HarvestWorkflowInput {
  job_id: string;
  workspace_id: string;
  service_id: string;
}

/** Port: starts the harvest workflow (execution name = the job id). */
export interface HarvestStarter {
  startHarvest(name: string, input: HarvestWorkflowInput): Promise<void>;
}

export interface CreateHarvestJobInput {
  pattern?: string;
  remove_missing?: boolean;
}

/** How a harvest job is named in answers and failures. */
export const HARVEST_JOB: JobNames = {
  name: 'Harvest job',
  finished: 'harvest_job_finished',
  workflow: 'harvest',
  failed: 'harvest_failed',
};

const notFound = (id: string) => new NotFoundError('harvest_job_not_found', `Harvest job '${id}' not found.`);

/** What a use case on one harvest job is asked: the mosaic the request resolved and the `{job}` of the path. */
export interface HarvestJobCommand {
  service: Service;
  job: string;
  ifMatch?: string;
}

/** A job of the mosaic (getMosaicHarvestJob; 404 otherwise). */
export async function requireHarvestJob(
  { jobs: repo }: { jobs: HarvestJobRepository },
  { service, job: jobId }: HarvestJobCommand,
): Promise<HarvestJob> {
  const mosaic = requireMosaic(service);
  const job = await repo.find(mosaic.workspace_id, mosaic.id, jobId.toLowerCase());
  if (!job) throw notFound(jobId);
  return job;
}

/**
 * Creates a queued job and starts its workflow. One unfinished job per mosaic (409 naming it); a
 * workflow that can't be started fails the job at once, so its marker doesn't block the next one.
 */
export async function createHarvestJob(
  deps: { jobs: HarvestJobRepository; starter: HarvestStarter },
  { service, body: input, now = new Date() }: { service: Service; body: CreateHarvestJobInput; now?: Date },
): Promise<HarvestJob> {
  const mosaic = requireMosaic(service);
  const pattern = input.pattern ?? DEFAULT_HARVEST_PATTERN;
  globToRegExp(pattern);
  const ts = now.toISOString();
  const job: HarvestJob = {
    id: timeOrderedId(now.getTime()),
    workspace_id: mosaic.workspace_id,
    service_id: mosaic.id,
    status: 'queued',
    phase: 'adding',
    pattern,
    remove_missing: input.remove_missing ?? false,
    cancel_requested: false,
    files_scanned: 0,
    granules_added: 0,
    granules_removed: 0,
    files_skipped: 0,
    files_failed: 0,
    failures: [],
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  await deps.jobs.create(job, mosaic);
  return startJob(deps.jobs, HARVEST_JOB, job, () =>
    deps.starter.startHarvest(job.id, {
      job_id: job.id,
      workspace_id: job.workspace_id,
      service_id: job.service_id,
    }),
  );
}

/**
 * Asks an unfinished job to stop: the next chunk sees the flag and the job ends `cancelled` with
 * the progress it had (granules already committed stay). Asking again answers as before; a
 * finished job is a 409. A stale job (no live execution) is ended `cancelled` at once.
 */
export async function cancelHarvestJob(
  { jobs: repo }: { jobs: HarvestJobRepository },
  { service, job: jobId, ifMatch, now = new Date() }: HarvestJobCommand & { now?: Date },
): Promise<HarvestJob> {
  return cancelJob(
    repo,
    HARVEST_JOB,
    {
      read: () => requireHarvestJob({ jobs: repo }, { service, job: jobId }),
      reload: (job) => repo.find(job.workspace_id, job.service_id, job.id),
    },
    ifMatch,
    now,
  );
}

/** A deterministic granule id per (job, file): a re-run of a chunk writes the same items. */
export function harvestGranuleId(jobId: string, relative: string): string {
  const hex = createHash('sha256').update(`${jobId}\n${relative}`).digest('hex');
  const variant = ((Number.parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Index of the first path after `cursor` in the sorted `paths`. */
export function firstAfter(paths: readonly string[], cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  let lo = 0;
  let hi = paths.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((paths[mid] as string) <= cursor) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Ports of a harvest step. */
export interface HarvestStepDeps {
  jobs: HarvestJobRepository;
  mosaics: MosaicRepository;
  sources: RasterSources;
  /** The service as it is now (undefined when it is gone). */
  service(workspaceId: string, serviceId: string): Promise<Service | undefined>;
  now?: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * One task of the harvest workflow: chunks until the job is finished or `budgetMs` is spent.
 * Returns `done` when the job is finished (succeeded, cancelled, or failed for a gone service).
 */
export async function runHarvestStep(
  deps: HarvestStepDeps,
  input: HarvestWorkflowInput,
  budgetMs: number,
): Promise<{ done: boolean }> {
  const now = deps.now ?? Date.now;
  const deadline = now() + budgetMs;
  const load = () => deps.jobs.find(input.workspace_id, input.service_id, input.job_id);
  const found = await load();
  if (!found || isFinished(found.status)) return { done: true };
  let job: HarvestJob = found;
  const current = await deps.service(input.workspace_id, input.service_id);
  if (current?.status !== 'active' || current.type !== 'raster_mosaic') {
    await deps.jobs.finish(job, 'failed', iso(now()), {
      reason: 'service_not_found',
      message: 'The mosaic service no longer exists.',
    });
    return { done: true };
  }
  const service = requireMosaic(current);
  const started = await startedJob(deps.jobs, job, load, () => iso(now()));
  if (!started) return { done: true };
  job = started;
  const root = service.connection.root_uri;
  const pattern = globToRegExp(job.pattern);
  // Listed once per task; the sort order is the cursor's (code-unit order).
  const listing = (await deps.sources.list(root, pattern))
    .slice()
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let base = await deps.mosaics.state(service.workspace_id, service.id);
  let active = await deps.mosaics.activeSources(service.workspace_id, service.id, base.generation);
  const refresh = async () => {
    base = await deps.mosaics.state(service.workspace_id, service.id);
    active = await deps.mosaics.activeSources(service.workspace_id, service.id, base.generation);
  };
  while (now() < deadline) {
    if (job.cancel_requested) {
      await deps.jobs.finish(job, 'cancelled', iso(now()));
      return { done: true };
    }
    const chunk: HarvestChunk | 'finished' =
      job.phase === 'adding'
        ? await addingChunk(deps, job, service, root, listing, base, active)
        : await removingChunk(deps, job, service, root, pattern, listing, base);
    if (chunk === 'finished') {
      await deps.jobs.finish(job, 'succeeded', iso(now()));
      return { done: true };
    }
    const outcome = await deps.jobs.commitChunk(job, chunk, iso(now()));
    if (outcome === 'generation_moved') {
      await refresh();
      continue;
    }
    if (outcome === 'job_changed') {
      const reloaded = await load();
      if (!reloaded || isFinished(reloaded.status)) return { done: true };
      job = reloaded;
      continue;
    }
    if (chunk.add) {
      for (const g of chunk.add.granules) active.add(g.source_uri);
      base = {
        generation: base.generation + 1,
        granule_count: base.granule_count + chunk.add.granules.length,
      };
    }
    if (chunk.remove) {
      base = {
        generation: base.generation + 1,
        granule_count: base.granule_count - chunk.remove.granuleIds.length,
      };
    }
    job = chunk.next;
  }
  return { done: false };
}

/** The next chunk of the `adding` phase, or the switch to `removing`, or `finished`. */
async function addingChunk(
  deps: HarvestStepDeps,
  job: HarvestJob,
  service: Service,
  root: string,
  listing: string[],
  base: MosaicState,
  active: Set<string>,
): Promise<HarvestChunk | 'finished'> {
  const start = firstAfter(listing, job.cursor);
  if (start >= listing.length) {
    if (!job.remove_missing) return 'finished';
    const { cursor: _c, ...rest } = job;
    return {
      previous: job.cursor,
      phase: 'adding',
      next: { ...rest, phase: 'removing', files_total: listing.length },
    };
  }
  const scanned: string[] = [];
  const fresh: string[] = [];
  for (let i = start; i < listing.length && scanned.length < FILES_PER_CHUNK; i++) {
    const rel = listing[i] as string;
    if (!active.has(sourceUri(root, rel))) {
      if (fresh.length >= MAX_GRANULES_PER_HARVEST) break;
      fresh.push(rel);
    }
    scanned.push(rel);
  }
  const read = await mapLimited(fresh, 8, async (rel) => {
    try {
      return { rel, header: await deps.sources.readHeader(root, rel) };
    } catch (error) {
      if (error instanceof RuleViolationError || error instanceof InvalidInputError) {
        return { rel, failure: { path: rel, reason: error.reason, message: error.message } };
      }
      throw error;
    }
  });
  const ts = new Date((deps.now ?? Date.now)()).toISOString();
  const granules: Granule[] = [];
  const failures: HarvestFailure[] = [];
  for (const r of read) {
    if ('failure' in r && r.failure) failures.push(r.failure);
    else
      granules.push({
        id: harvestGranuleId(job.id, r.rel),
        workspace_id: service.workspace_id,
        service_id: service.id,
        source_uri: sourceUri(root, r.rel),
        ...(r.header as GranuleHeader),
        added_generation: base.generation + 1,
        created_at: ts,
      });
  }
  const next: HarvestJob = {
    ...job,
    cursor: scanned[scanned.length - 1] as string,
    files_total: listing.length,
    files_scanned: job.files_scanned + scanned.length,
    files_skipped: job.files_skipped + (scanned.length - fresh.length),
    granules_added: job.granules_added + granules.length,
    files_failed: job.files_failed + failures.length,
    failures: [...job.failures, ...failures].slice(0, MAX_RECORDED_FAILURES),
    ...(granules.length > 0 ? { generation: base.generation + 1 } : {}),
  };
  return {
    previous: job.cursor,
    phase: 'adding',
    next,
    ...(granules.length > 0 ? { add: { service, base, granules } } : {}),
  };
}

/** The next page of the `removing` phase: granules under the pattern whose file is gone. */
async function removingChunk(
  deps: HarvestStepDeps,
  job: HarvestJob,
  service: Service,
  root: string,
  pattern: RegExp,
  listing: string[],
  base: MosaicState,
): Promise<HarvestChunk | 'finished'> {
  if (job.cursor === REMOVAL_DONE) return 'finished';
  const page = await deps.mosaics.listGranules(
    service.workspace_id,
    service.id,
    base.generation,
    {},
    MAX_GRANULES_PER_HARVEST,
    job.cursor,
  );
  const present = new Set(listing.map((rel) => sourceUri(root, rel)));
  const prefix = `${normaliseRoot(root)}/`;
  const missing = page.items.filter(
    (g) =>
      isActive(g, base.generation) &&
      g.source_uri.startsWith(prefix) &&
      pattern.test(g.source_uri.slice(prefix.length)) &&
      !present.has(g.source_uri),
  );
  // The mosaic keeps at least one granule (spec 4.17).
  const removable = missing.slice(0, Math.max(0, Math.min(missing.length, base.granule_count - 1)));
  const next: HarvestJob = {
    ...job,
    cursor: page.nextCursor ?? REMOVAL_DONE,
    granules_removed: job.granules_removed + removable.length,
    ...(removable.length > 0 ? { generation: base.generation + 1 } : {}),
  };
  return {
    previous: job.cursor,
    phase: 'removing',
    next,
    ...(removable.length > 0 ? { remove: { service, base, granuleIds: removable.map((g) => g.id) } } : {}),
  };
}

/** Records why the workflow failed: the job ends `failed` (its committed granules stay). */
export async function failHarvestJob(
  repo: HarvestJobRepository,
  input: HarvestWorkflowInput,
  message: string,
  now = new Date(),
): Promise<void> {
  const job = await repo.find(input.workspace_id, input.service_id, input.job_id);
  await failJob(repo, HARVEST_JOB, job, message, now);
}

/** The API view of a job. */
export function presentHarvestJob(job: HarvestJob) {
  return {
    id: job.id,
    workspace_id: job.workspace_id,
    service_id: job.service_id,
    status: job.status,
    phase: job.phase,
    pattern: job.pattern,
    remove_missing: job.remove_missing,
    cancel_requested: job.cancel_requested,
    progress: {
      files_scanned: job.files_scanned,
      ...(job.files_total !== undefined ? { files_total: job.files_total } : {}),
      granules_added: job.granules_added,
      granules_removed: job.granules_removed,
      files_skipped: job.files_skipped,
      files_failed: job.files_failed,
    },
    failures: job.failures,
    ...(job.generation !== undefined ? { generation: job.generation } : {}),
    ...(job.error ? { error: job.error } : {}),
    version: job.version,
    created_at: job.created_at,
    updated_at: job.updated_at,
    ...(job.started_at ? { started_at: job.started_at } : {}),
    ...(job.finished_at ? { finished_at: job.finished_at } : {}),
  };
}

/** listMosaicHarvestJobs: one page of a raster mosaic's harvest jobs, newest first (422 for another type). */
export async function listHarvestJobs(
  { jobs }: { jobs: HarvestJobRepository },
  { service, limit, cursor }: { service: Service; limit: number; cursor?: string },
): Promise<Page<HarvestJob>> {
  const mosaic = requireMosaic(service);
  return jobs.list(mosaic.workspace_id, mosaic.id, limit, cursor);
}
