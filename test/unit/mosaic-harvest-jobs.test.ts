import { describe, expect, it } from 'vitest';
import { RuleViolationError, StateConflictError } from '#domain/errors.ts';
import {
  cancelHarvestJob,
  canTransition,
  createHarvestJob,
  firstAfter,
  type HarvestChunk,
  type HarvestJob,
  type HarvestJobRepository,
  type HarvestJobStatus,
  harvestGranuleId,
  isFinished,
  MAX_RECORDED_FAILURES,
  runHarvestStep,
} from '#domain/mosaic-harvest-jobs.ts';
import { type Granule, isActive, type MosaicRepository, type MosaicState } from '#domain/mosaics.ts';
import type { Service } from '#domain/services.ts';

const service = {
  id: '11111111-1111-4111-8111-111111111111',
  workspace_id: '22222222-2222-4222-8222-222222222222',
  name: 'ortho',
  type: 'raster_mosaic',
  status: 'active',
  connection: { root_uri: '/data/ortho' },
} as unknown as Service;

/** The mosaic in memory: granules with their lifetimes, the committed generation. */
class MemoryMosaic implements Pick<MosaicRepository, 'state' | 'activeSources' | 'listGranules'> {
  granules: Granule[] = [];
  current: MosaicState = { generation: 0, granule_count: 0 };
  async state() {
    return { ...this.current };
  }
  async activeSources(_w: string, _s: string, generation: number) {
    return new Set(this.granules.filter((g) => isActive(g, generation)).map((g) => g.source_uri));
  }
  async listGranules(
    _w: string,
    _s: string,
    generation: number,
    _f: unknown,
    limit: number,
    cursor?: string,
  ) {
    const start = cursor ? Number(cursor) : 0;
    const slice = this.granules.slice(start, start + limit);
    const next = start + limit < this.granules.length ? String(start + limit) : undefined;
    return { items: slice.filter((g) => isActive(g, generation)), nextCursor: next };
  }
}

/** The job store in memory, with the conditions of the DynamoDB one. */
class MemoryJobs implements HarvestJobRepository {
  jobs = new Map<string, HarvestJob>();
  lock: string | undefined;
  commits = 0;
  /** Called before each commit (a test cancels or kills there). */
  beforeCommit?: (n: number) => void;
  constructor(private readonly mosaic: MemoryMosaic) {}
  async create(job: HarvestJob) {
    if (this.lock) throw new StateConflictError('harvest_job_running', `Harvest job '${this.lock}' runs.`);
    this.lock = job.id;
    this.jobs.set(job.id, structuredClone(job));
  }
  async find(_w: string, _s: string, id: string) {
    const job = this.jobs.get(id);
    return job ? structuredClone(job) : undefined;
  }
  async list() {
    return { items: [...this.jobs.values()] };
  }
  async requestCancel(job: HarvestJob, now: string) {
    const stored = this.jobs.get(job.id) as HarvestJob;
    if (stored.version !== job.version || isFinished(stored.status)) return false;
    stored.cancel_requested = true;
    stored.version++;
    stored.updated_at = now;
    return true;
  }
  async markRunning(job: HarvestJob) {
    const stored = this.jobs.get(job.id) as HarvestJob;
    if (stored.status !== 'queued') return false;
    stored.status = 'running';
    stored.version++;
    return true;
  }
  async commitChunk(job: HarvestJob, chunk: HarvestChunk) {
    this.beforeCommit?.(this.commits);
    const stored = this.jobs.get(job.id) as HarvestJob;
    if (
      stored.status !== 'running' ||
      stored.cancel_requested ||
      stored.phase !== chunk.phase ||
      stored.cursor !== chunk.previous
    )
      return 'job_changed' as const;
    const change = chunk.add ?? chunk.remove;
    if (change && change.base.generation !== this.mosaic.current.generation)
      return 'generation_moved' as const;
    this.commits++;
    if (chunk.add) {
      this.mosaic.granules.push(...chunk.add.granules);
      this.mosaic.current = {
        generation: chunk.add.base.generation + 1,
        granule_count: chunk.add.base.granule_count + chunk.add.granules.length,
      };
    }
    if (chunk.remove) {
      const next = chunk.remove.base.generation + 1;
      for (const g of this.mosaic.granules)
        if (chunk.remove.granuleIds.includes(g.id)) g.removed_generation = next;
      this.mosaic.current = {
        generation: next,
        granule_count: chunk.remove.base.granule_count - chunk.remove.granuleIds.length,
      };
    }
    const { status, version, cancel_requested } = stored;
    this.jobs.set(job.id, { ...structuredClone(chunk.next), status, version, cancel_requested });
    return 'ok' as const;
  }
  async finish(
    job: HarvestJob,
    status: HarvestJobStatus,
    now: string,
    error?: { reason: string; message: string },
  ) {
    const stored = this.jobs.get(job.id) as HarvestJob;
    if (isFinished(stored.status)) return false;
    Object.assign(stored, {
      status,
      finished_at: now,
      version: stored.version + 1,
      ...(error ? { error } : {}),
    });
    if (this.lock === job.id) this.lock = undefined;
    return true;
  }
  async working() {}
}

const header = { crs: 'EPSG:4326', srid: 4326, bbox: [0, 0, 1, 1] as [number, number, number, number] };
function sources(files: string[], broken: string[] = []) {
  let reads = 0;
  return {
    reads: () => reads,
    checkRoot: async () => undefined,
    list: async (_root: string, pattern: RegExp) =>
      [...files, ...broken].filter((f) => pattern.test(f)).reverse(),
    readHeader: async (_root: string, rel: string) => {
      reads++;
      if (broken.includes(rel))
        throw new RuleViolationError('unreadable_source', `Source '${rel}' is broken.`);
      return {
        ...header,
        width: 1,
        height: 1,
        band_count: 1,
        data_type: 'Byte',
        resolution_x: 1,
        resolution_y: 1,
      };
    },
  };
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `d/t${String(i).padStart(5, '0')}.tif`);

function setup(files: string[], broken: string[] = []) {
  const mosaic = new MemoryMosaic();
  const jobs = new MemoryJobs(mosaic);
  const src = sources(files, broken);
  const deps = {
    jobs,
    mosaics: mosaic as unknown as MosaicRepository,
    sources: src,
    service: async () => service,
  };
  const starts: string[] = [];
  const starter = { startHarvest: async (name: string) => void starts.push(name) };
  return { mosaic, jobs, src, deps, starter, starts };
}

const input = (job: HarvestJob) => ({
  job_id: job.id,
  workspace_id: job.workspace_id,
  service_id: job.service_id,
});

describe('harvest job status transitions', () => {
  it.each([
    ['queued', 'running', true],
    ['queued', 'cancelled', true],
    ['queued', 'failed', true],
    ['queued', 'succeeded', false],
    ['running', 'succeeded', true],
    ['running', 'failed', true],
    ['running', 'cancelled', true],
    ['running', 'queued', false],
    ['succeeded', 'running', false],
    ['failed', 'running', false],
    ['cancelled', 'running', false],
    ['cancelled', 'succeeded', false],
  ] as const)('%s → %s is %s', (from, to, allowed) => {
    expect(canTransition(from, to)).toBe(allowed);
  });

  it('counts only succeeded, failed and cancelled as finished', () => {
    expect(
      ['queued', 'running', 'succeeded', 'failed', 'cancelled'].filter((s) =>
        isFinished(s as HarvestJobStatus),
      ),
    ).toEqual(['succeeded', 'failed', 'cancelled']);
  });
});

describe('harvest job helpers', () => {
  it('finds the first path after a cursor in a sorted listing', () => {
    const paths = ['a', 'b', 'c', 'd'];
    expect(firstAfter(paths, undefined)).toBe(0);
    expect(firstAfter(paths, 'b')).toBe(2);
    expect(firstAfter(paths, 'bb')).toBe(2);
    expect(firstAfter(paths, 'd')).toBe(4);
    expect(firstAfter(paths, '0')).toBe(0);
  });

  it('derives the same granule id for the same job and file, another for another', () => {
    const a = harvestGranuleId('job-1', 'x/a.tif');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(harvestGranuleId('job-1', 'x/a.tif')).toBe(a);
    expect(harvestGranuleId('job-1', 'x/b.tif')).not.toBe(a);
    expect(harvestGranuleId('job-2', 'x/a.tif')).not.toBe(a);
  });
});

describe('harvest job use cases', () => {
  it('creates one queued job per mosaic and starts its workflow; a second is a 409', async () => {
    const { deps, starter, starts } = setup(names(3));
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    expect(job).toMatchObject({ status: 'queued', pattern: '**/*.{tif,tiff,TIF,TIFF}', version: 1 });
    expect(starts).toEqual([job.id]);
    await expect(createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} })).rejects.toMatchObject(
      {
        reason: 'harvest_job_running',
      },
    );
  });

  it('fails the job (and frees the mosaic) when its workflow cannot be started', async () => {
    const { deps } = setup(names(3));
    const broken = { startHarvest: async () => Promise.reject(new Error('no workflow')) };
    await expect(
      createHarvestJob({ jobs: deps.jobs, starter: broken }, { service, body: {} }),
    ).rejects.toThrow('no workflow');
    const [job] = [...deps.jobs.jobs.values()];
    expect(job?.status).toBe('failed');
    expect(deps.jobs.lock).toBeUndefined();
  });

  it('harvests in chunks of at most 90 new granules, in name order, and records the first failures', async () => {
    const broken = Array.from({ length: 25 }, (_, i) => `b/x${String(i).padStart(2, '0')}.tif`);
    const { deps, starter, mosaic } = setup(names(500), broken);
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    const result = await runHarvestStep(deps, input(job), 60_000);
    expect(result.done).toBe(true);
    const end = deps.jobs.jobs.get(job.id) as HarvestJob;
    expect(end).toMatchObject({
      status: 'succeeded',
      files_scanned: 525,
      files_total: 525,
      granules_added: 500,
      files_failed: 25,
      files_skipped: 0,
    });
    expect(end.failures).toHaveLength(MAX_RECORDED_FAILURES);
    expect(end.failures[0]).toMatchObject({ path: 'b/x00.tif', reason: 'unreadable_source' });
    expect(mosaic.current).toEqual({ generation: deps.jobs.commits, granule_count: 500 });
    expect(deps.jobs.commits).toBe(Math.ceil(500 / 90));
    expect(new Set(mosaic.granules.map((g) => g.source_uri)).size).toBe(500);
  });

  it('resumes after the last committed chunk: a rerun adds every file exactly once', async () => {
    const { deps, starter, mosaic } = setup(names(400));
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    // The first run dies while committing its third chunk (as a kill -9 would).
    deps.jobs.beforeCommit = (n) => {
      if (n === 2) throw new Error('killed');
    };
    await expect(runHarvestStep(deps, input(job), 60_000)).rejects.toThrow('killed');
    expect(deps.jobs.jobs.get(job.id)).toMatchObject({ status: 'running', granules_added: 180 });
    deps.jobs.beforeCommit = undefined;
    expect((await runHarvestStep(deps, input(job), 60_000)).done).toBe(true);
    expect(deps.jobs.jobs.get(job.id)).toMatchObject({
      status: 'succeeded',
      granules_added: 400,
      files_scanned: 400,
    });
    expect(mosaic.granules).toHaveLength(400);
    expect(new Set(mosaic.granules.map((g) => g.id)).size).toBe(400);
  });

  it('hands back when its budget is spent and goes on from its cursor next time', async () => {
    const { deps, starter } = setup(names(300));
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    let t = 0;
    const clock = { ...deps, now: () => (t += 10) };
    const first = await runHarvestStep(clock, input(job), 45);
    expect(first.done).toBe(false);
    const partial = deps.jobs.jobs.get(job.id) as HarvestJob;
    expect(partial.granules_added).toBeGreaterThan(0);
    expect(partial.granules_added).toBeLessThan(300);
    expect((await runHarvestStep(deps, input(job), 60_000)).done).toBe(true);
    expect(deps.jobs.jobs.get(job.id)?.granules_added).toBe(300);
  });

  it('honours a cancel at the next chunk: the job ends cancelled with the granules it committed', async () => {
    const { deps, starter, mosaic } = setup(names(500));
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    deps.jobs.beforeCommit = (n) => {
      // The cancel lands while the third chunk is about to commit (what requestCancel writes).
      if (n === 2)
        void deps.jobs.requestCancel(deps.jobs.jobs.get(job.id) as HarvestJob, new Date().toISOString());
    };
    expect((await runHarvestStep(deps, input(job), 60_000)).done).toBe(true);
    const end = deps.jobs.jobs.get(job.id) as HarvestJob;
    expect(end).toMatchObject({ status: 'cancelled', cancel_requested: true, granules_added: 180 });
    expect(mosaic.current.granule_count).toBe(180);
    expect(mosaic.granules).toHaveLength(180);
    await expect(cancelHarvestJob({ jobs: deps.jobs }, { service, job: job.id })).rejects.toMatchObject({
      reason: 'harvest_job_finished',
    });
  });

  it('ends a job whose execution is gone (nothing committed for 15 minutes) at once on cancel, freeing the mosaic', async () => {
    const { deps, starter } = setup(names(5));
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    const soon = new Date(Date.parse(job.updated_at) + 14 * 60_000);
    expect((await cancelHarvestJob({ jobs: deps.jobs }, { service, job: job.id, now: soon })).status).toBe(
      'queued',
    );
    // The request was a change (updated_at): stale 15 minutes after it.
    expect((await cancelHarvestJob({ jobs: deps.jobs }, { service, job: job.id, now: soon })).status).toBe(
      'queued',
    );
    const later = new Date(soon.getTime() + 16 * 60_000);
    const ended = await cancelHarvestJob({ jobs: deps.jobs }, { service, job: job.id, now: later });
    expect(ended).toMatchObject({ status: 'cancelled', cancel_requested: true });
    expect(deps.jobs.lock).toBeUndefined();
    // A late execution finds it finished and does nothing.
    expect((await runHarvestStep(deps, input(job), 60_000)).done).toBe(true);
    expect(deps.jobs.commits).toBe(0);
  });

  it('refuses a stale If-Match on cancel (412) and changes nothing', async () => {
    const { deps, starter } = setup(names(5));
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    await expect(
      cancelHarvestJob({ jobs: deps.jobs }, { service, job: job.id, ifMatch: '"7"' }),
    ).rejects.toMatchObject({
      name: 'VersionMismatchError',
    });
    expect(deps.jobs.jobs.get(job.id)?.cancel_requested).toBe(false);
  });

  it('skips files already in the mosaic and, with remove_missing, removes granules whose file is gone (keeping one)', async () => {
    const files = names(200);
    const { deps, starter, mosaic, src } = setup(files);
    const first = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    await runHarvestStep(deps, input(first), 60_000);
    // 150 files disappear; 10 new ones arrive.
    const now = [...files.slice(0, 50), ...names(210).slice(200)];
    deps.sources = { ...src, list: async () => [...now] };
    const second = await createHarvestJob(
      { jobs: deps.jobs, starter },
      { service, body: { remove_missing: true } },
    );
    expect((await runHarvestStep(deps, input(second), 60_000)).done).toBe(true);
    expect(deps.jobs.jobs.get(second.id)).toMatchObject({
      status: 'succeeded',
      files_scanned: 60,
      files_skipped: 50,
      granules_added: 10,
      granules_removed: 150,
    });
    expect(mosaic.current.granule_count).toBe(60);
    const active = await mosaic.activeSources('', '', mosaic.current.generation);
    expect([...active].sort()).toEqual(now.map((r) => `/data/ortho/${r}`).sort());
  });

  it('fails the job when the mosaic service is gone', async () => {
    const { deps, starter } = setup(names(5));
    const job = await createHarvestJob({ jobs: deps.jobs, starter }, { service, body: {} });
    const gone = { ...deps, service: async () => undefined };
    expect((await runHarvestStep(gone, input(job), 60_000)).done).toBe(true);
    expect(deps.jobs.jobs.get(job.id)).toMatchObject({
      status: 'failed',
      error: { reason: 'service_not_found' },
    });
  });
});
