import { describe, expect, it } from 'vitest';
import type { DeletionOperation } from '#domain/deletion-model.ts';
import { apiKeyExpiry, EXPIRED_API_KEY_RETENTION_SECONDS, expiryEpoch, isExpired } from '#domain/expiry.ts';
import type { ImportJob } from '#domain/import-model.ts';
import type { HarvestJob } from '#domain/mosaic-harvest-jobs.ts';
import {
  type LoopJob,
  type StuckJobStore,
  type SweepMark,
  type SweepPorts,
  type Swept,
  sweepStuckWork,
} from '#domain/sweeps.ts';
import type { TileCacheJob } from '#domain/tile-cache-jobs.ts';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString();
const settings = { stuckAfterMs: 15 * 60_000, maxRestarts: 2 };

function deletion(over: Partial<Swept<DeletionOperation>> = {}): Swept<DeletionOperation> {
  return {
    id: 'd1',
    scope: 'service',
    workspace_id: 'ws',
    workspace_name: 'ws',
    target_id: 's',
    target_name: 's',
    status: 'running',
    phase: 'layers',
    progress: { total: 10, deleted: 3 },
    attempt_count: 1,
    created_at: minutesAgo(120),
    updated_at: minutesAgo(60),
    created_by: 'u',
    ...over,
  };
}

function importJob(over: Partial<Swept<ImportJob>> = {}): Swept<ImportJob> {
  return {
    id: 'i1',
    workspace_id: 'ws',
    name: 'parcels',
    source_kind: 'uri',
    source_uri: 's3://b/parcels.geojson',
    source_location: 's3://b/parcels.geojson',
    status: 'running',
    phase: 'transform',
    service_name: 'import-parcels',
    auto_publish: false,
    max_bytes: 1000,
    processed_bytes: 10,
    processed_features: 5,
    processed_layers: 0,
    total_layers: 1,
    retry_count: 0,
    run: 1,
    version: 4,
    created_by: 'u',
    created_at: minutesAgo(120),
    updated_at: minutesAgo(60),
    ...over,
  };
}

function harvestJob(over: Partial<Swept<HarvestJob>> = {}): Swept<HarvestJob> {
  return {
    id: 'h1',
    workspace_id: 'ws',
    service_id: 'm',
    status: 'running',
    phase: 'adding',
    pattern: '**/*.tif',
    remove_missing: false,
    cancel_requested: false,
    cursor: 'd001/t00100.tif',
    files_scanned: 100,
    granules_added: 90,
    granules_removed: 0,
    files_skipped: 10,
    files_failed: 0,
    failures: [],
    version: 2,
    created_at: minutesAgo(120),
    updated_at: minutesAgo(60),
    ...over,
  };
}

function tileJob(over: Partial<Swept<TileCacheJob>> = {}): Swept<TileCacheJob> {
  return {
    id: 't1',
    workspace_id: 'ws',
    type: 'seed',
    tile_matrix_set: 'WebMercatorQuad',
    layers: [],
    zoom_min: 0,
    zoom_max: 3,
    status: 'queued',
    cancel_requested: false,
    tiles_done: 0,
    tiles_rendered: 0,
    tiles_skipped: 0,
    tiles_removed: 0,
    bytes_written: 0,
    bytes_removed: 0,
    version: 1,
    created_at: minutesAgo(60),
    updated_at: minutesAgo(60),
    ...over,
  } as Swept<TileCacheJob>;
}

/** An in-memory job store: restart conditioned on the run and updated_at read, finish on unfinished. */
function fakeJobs<J extends LoopJob>(list: Swept<J>[]) {
  const jobs = new Map(list.map((j) => [j.id, j]));
  const store: StuckJobStore<J> = {
    working: async (visit) => {
      for (const j of [...jobs.values()])
        if (j.status === 'queued' || j.status === 'running') await visit({ ...j });
    },
    restart: async (job, mark, now) => {
      const stored = jobs.get(job.id);
      if (
        !stored ||
        !['queued', 'running'].includes(stored.status) ||
        stored.updated_at !== job.updated_at ||
        (stored.run ?? 1) !== (job.run ?? 1)
      )
        return undefined;
      const next = { ...stored, run: (job.run ?? 1) + 1, updated_at: now, sweep: mark };
      jobs.set(job.id, next);
      return next;
    },
    finish: async (job, status, now, error) => {
      const stored = jobs.get(job.id);
      if (!stored || !['queued', 'running'].includes(stored.status)) return false;
      jobs.set(job.id, { ...stored, status, updated_at: now, ...(error ? { error } : {}) });
      return true;
    },
  };
  return { store, jobs };
}

/** In-memory ports: the deletions, imports and jobs as stored, the executions that run, what was started. */
function fakePorts(state: {
  deletions?: Swept<DeletionOperation>[];
  imports?: Swept<ImportJob>[];
  harvests?: Swept<HarvestJob>[];
  tileJobs?: Swept<TileCacheJob>[];
  running?: string[];
  maxRestarts?: number;
}) {
  const deletions = new Map((state.deletions ?? []).map((d) => [d.id, d]));
  const imports = new Map((state.imports ?? []).map((j) => [j.id, j]));
  const harvests = fakeJobs(state.harvests ?? []);
  const tileJobs = fakeJobs(state.tileJobs ?? []);
  const started: string[] = [];
  const inputs: unknown[] = [];
  const failures: { id: string; attempt: number; message: string }[] = [];
  const ports: SweepPorts = {
    settings: { ...settings, maxRestarts: state.maxRestarts ?? settings.maxRestarts },
    executions: {
      deletionRunning: async (name) => (state.running ?? []).includes(name),
      importRunning: async (name) => (state.running ?? []).includes(name),
      harvestRunning: async (name) => (state.running ?? []).includes(name),
      tileCacheJobRunning: async (name) => (state.running ?? []).includes(name),
    },
    deletions: {
      unfinished: async (visit) => {
        for (const d of [...deletions.values()])
          if (d.status === 'pending' || d.status === 'running') await visit({ ...d });
      },
      restart: async (op, mark: SweepMark, now) => {
        const stored = deletions.get(op.id);
        if (!stored || stored.updated_at !== op.updated_at || stored.attempt_count !== op.attempt_count)
          return undefined;
        const next = {
          ...stored,
          status: 'pending' as const,
          attempt_count: op.attempt_count + 1,
          updated_at: now,
          sweep: mark,
        };
        deletions.set(op.id, next);
        return next;
      },
    },
    deletionSteps: {
      recordFailure: async (id, attempt, message) => {
        failures.push({ id, attempt, message });
        const stored = deletions.get(id);
        if (stored && stored.attempt_count === attempt)
          deletions.set(id, { ...stored, status: 'failed', last_error: message });
      },
    },
    deletionStarter: {
      startDeletion: async (name) => {
        started.push(name);
      },
    },
    imports: {
      working: async (fn) => {
        for (const j of [...imports.values()]) await fn({ ...j });
      },
      save: async (previous, next) => {
        const stored = imports.get(previous.id);
        if (!stored || stored.version !== previous.version) {
          const { StateConflictError } = await import('#domain/errors.ts');
          throw new StateConflictError('concurrent_modification', 'changed');
        }
        imports.set(next.id, next);
      },
    },
    importStarter: {
      startImport: async (name) => {
        started.push(name);
      },
    },
    harvests: harvests.store,
    harvestStarter: {
      startHarvest: async (name, input) => {
        started.push(name);
        inputs.push(input);
      },
    },
    tileCacheJobs: tileJobs.store,
    tileCacheStarter: {
      startTileCacheJob: async (name, input) => {
        started.push(name);
        inputs.push(input);
      },
    },
  };
  return {
    ports,
    deletions,
    imports,
    harvests: harvests.jobs,
    tileJobs: tileJobs.jobs,
    started,
    inputs,
    failures,
  };
}

describe('sweepStuckWork: deletions', () => {
  it('leaves an operation alone that made progress within the window', async () => {
    const f = fakePorts({ deletions: [deletion({ updated_at: minutesAgo(5) })] });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.progressing).toBe(1);
    expect(f.started).toEqual([]);
    expect(f.deletions.get('d1')?.attempt_count).toBe(1);
  });

  it('leaves a stuck-looking operation alone while its execution still runs', async () => {
    const f = fakePorts({ deletions: [deletion()], running: ['d1'] });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.running).toBe(1);
    expect(f.started).toEqual([]);
  });

  it('restarts a stuck operation whose execution no longer runs under a new attempt', async () => {
    const f = fakePorts({ deletions: [deletion()] });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.restarted).toBe(1);
    expect(report.items).toEqual([{ kind: 'deletion', id: 'd1', outcome: 'restarted', detail: 'attempt 2' }]);
    expect(f.started).toEqual(['d1-attempt-2']);
    const stored = f.deletions.get('d1');
    expect(stored).toMatchObject({ status: 'pending', attempt_count: 2, updated_at: NOW.toISOString() });
    expect(stored?.sweep).toEqual({
      restarts: 1,
      attempt: 2,
      progress: 'layers:3',
      at: NOW.toISOString(),
    });
  });

  it('fails it with a clear last_error once the restart budget is spent without progress', async () => {
    const stuck = deletion({
      status: 'pending',
      attempt_count: 3,
      sweep: { restarts: 2, attempt: 3, progress: 'layers:3', at: minutesAgo(60) },
    });
    const f = fakePorts({ deletions: [stuck] });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.failed).toBe(1);
    expect(f.started).toEqual([]);
    expect(f.failures).toHaveLength(1);
    expect(f.failures[0]?.attempt).toBe(3);
    expect(f.failures[0]?.message).toMatch(
      /no progress for 60 minute\(s\).*after 2 automatic restart\(s\).*limit 2.*retry the deletion/,
    );
    expect(f.deletions.get('d1')?.status).toBe('failed');
  });

  it('counts the budget afresh after progress since the last restart', async () => {
    const progressed = deletion({
      attempt_count: 3,
      progress: { total: 10, deleted: 7 },
      sweep: { restarts: 2, attempt: 3, progress: 'layers:3', at: minutesAgo(90) },
    });
    const f = fakePorts({ deletions: [progressed] });
    await sweepStuckWork(f.ports, NOW);
    expect(f.started).toEqual(['d1-attempt-4']);
    expect(f.deletions.get('d1')?.sweep?.restarts).toBe(1);
  });

  it("counts the budget afresh after a user's retry (a new attempt the sweep didn't start)", async () => {
    const retried = deletion({
      attempt_count: 5,
      sweep: { restarts: 2, attempt: 3, progress: 'layers:3', at: minutesAgo(300) },
    });
    const f = fakePorts({ deletions: [retried] });
    await sweepStuckWork(f.ports, NOW);
    expect(f.started).toEqual(['d1-attempt-6']);
  });

  it('restarts again until the budget is spent, then fails (budget 2: two restarts, then failed)', async () => {
    const f = fakePorts({ deletions: [deletion()] });
    let now = NOW;
    for (let round = 0; round < 3; round++) {
      await sweepStuckWork(f.ports, now);
      now = new Date(now.getTime() + 20 * 60_000);
    }
    expect(f.started).toEqual(['d1-attempt-2', 'd1-attempt-3']);
    expect(f.deletions.get('d1')?.status).toBe('failed');
  });

  it('skips an operation that changed between the read and the restart', async () => {
    const f = fakePorts({ deletions: [deletion()] });
    const restart = f.ports.deletions.restart;
    f.ports.deletions.restart = async (op, mark, now) => {
      f.deletions.set(op.id, { ...op, updated_at: NOW.toISOString() });
      return restart(op, mark, now);
    };
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.changed).toBe(1);
    expect(f.started).toEqual([]);
  });

  it("reports one item's error and goes on with the others", async () => {
    const f = fakePorts({ deletions: [deletion(), deletion({ id: 'd2' })] });
    f.ports.executions.deletionRunning = async (name) => {
      if (name === 'd1') throw new Error('DescribeExecution unavailable');
      return false;
    };
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts).toMatchObject({ error: 1, restarted: 1 });
    expect(report.items).toContainEqual({
      kind: 'deletion',
      id: 'd1',
      outcome: 'error',
      detail: 'DescribeExecution unavailable',
    });
    expect(f.started).toEqual(['d2-attempt-2']);
  });
});

describe('sweepStuckWork: imports', () => {
  it('leaves a progressing import and one whose execution runs alone', async () => {
    const f = fakePorts({
      imports: [importJob({ updated_at: minutesAgo(1) }), importJob({ id: 'i2' })],
      running: ['import-i2-1'],
    });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts).toMatchObject({ progressing: 1, running: 1 });
    expect(f.started).toEqual([]);
  });

  it('restarts a stuck import as a new run in the same status (no history event: status and phase unchanged)', async () => {
    const f = fakePorts({ imports: [importJob()] });
    await sweepStuckWork(f.ports, NOW);
    expect(f.started).toEqual(['import-i1-2']);
    const stored = f.imports.get('i1');
    expect(stored).toMatchObject({ status: 'running', phase: 'transform', run: 2, version: 5 });
    expect(stored?.sweep).toMatchObject({ restarts: 1, attempt: 2 });
  });

  it('fails a stuck import once its budget is spent, with an error_message that says what to do', async () => {
    const job = importJob({
      status: 'publishing',
      phase: 'publish',
      run: 4,
      sweep: { restarts: 2, attempt: 4, progress: 'publishing:publish:10:5:0', at: minutesAgo(60) },
    });
    const f = fakePorts({ imports: [job] });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.failed).toBe(1);
    expect(f.started).toEqual([]);
    const stored = f.imports.get('i1');
    expect(stored?.status).toBe('failed');
    expect(stored?.phase).toBe('publish');
    expect(stored?.error_message).toMatch(
      /scheduled sweep: no progress for 60 minute\(s\).*retry the import/,
    );
  });

  it('treats a job changed meanwhile as not stuck', async () => {
    const f = fakePorts({ imports: [importJob()] });
    f.ports.imports.working = async (fn) => fn({ ...importJob(), version: 3 });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.changed).toBe(1);
    expect(f.started).toEqual([]);
  });
});

describe('sweepStuckWork: mosaic harvest and tile cache jobs', () => {
  it('leaves a progressing job and one whose execution runs alone', async () => {
    const f = fakePorts({
      harvests: [harvestJob({ updated_at: minutesAgo(2) }), harvestJob({ id: 'h2' })],
      tileJobs: [tileJob({ run: 2 })],
      running: ['h2', 't1-run-2'],
    });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts).toMatchObject({ progressing: 1, running: 2, restarted: 0 });
    expect(f.started).toEqual([]);
  });

  it('restarts a stuck harvest whose execution is gone as a new run, under a new execution name', async () => {
    const f = fakePorts({ harvests: [harvestJob()] });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.items).toEqual([{ kind: 'harvest', id: 'h1', outcome: 'restarted', detail: 'run 2' }]);
    expect(f.started).toEqual(['h1-run-2']);
    expect(f.inputs).toEqual([{ job_id: 'h1', workspace_id: 'ws', service_id: 'm' }]);
    const stored = f.harvests.get('h1');
    // Same status, cursor and version (its ETag): the new run goes on after the committed cursor.
    expect(stored).toMatchObject({ status: 'running', cursor: 'd001/t00100.tif', version: 2, run: 2 });
    expect(stored?.sweep).toEqual({
      restarts: 1,
      attempt: 2,
      progress: 'running:adding:d001/t00100.tif:100:0',
      at: NOW.toISOString(),
    });
  });

  it('restarts a tile cache job whose start was lost (queued, no execution)', async () => {
    const f = fakePorts({ tileJobs: [tileJob()] });
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.items).toEqual([
      { kind: 'tile_cache_job', id: 't1', outcome: 'restarted', detail: 'run 2' },
    ]);
    expect(f.started).toEqual(['t1-run-2']);
    expect(f.inputs).toEqual([{ job_id: 't1', workspace_id: 'ws' }]);
    expect(f.tileJobs.get('t1')).toMatchObject({ status: 'queued', run: 2, updated_at: NOW.toISOString() });
  });

  it.each([
    ['harvest', 'h1', /create a new harvest job/, 'harvest_failed'],
    ['tile_cache_job', 't1', /create a new tile cache job/, 'tile_cache_job_failed'],
  ] as const)(
    'fails a stuck %s once the budget is spent, with an error that says what to do',
    async (kind, id, hint, reason) => {
      const f =
        kind === 'harvest'
          ? fakePorts({
              harvests: [
                harvestJob({
                  run: 3,
                  sweep: {
                    restarts: 2,
                    attempt: 3,
                    progress: 'running:adding:d001/t00100.tif:100:0',
                    at: minutesAgo(60),
                  },
                }),
              ],
            })
          : fakePorts({
              tileJobs: [
                tileJob({
                  run: 3,
                  sweep: { restarts: 2, attempt: 3, progress: 'queued::0:0', at: minutesAgo(60) },
                }),
              ],
            });
      const report = await sweepStuckWork(f.ports, NOW);
      expect(report.items).toEqual([{ kind, id, outcome: 'failed' }]);
      expect(f.started).toEqual([]);
      const stored = (kind === 'harvest' ? f.harvests : f.tileJobs).get(id) as LoopJob & {
        error?: { reason: string; message: string };
      };
      expect(stored.status).toBe('failed');
      expect(stored.error?.reason).toBe(reason);
      expect(stored.error?.message).toMatch(/scheduled sweep: no progress for 60 minute\(s\)/);
      expect(stored.error?.message).toMatch(hint);
    },
  );

  it('counts the budget afresh after progress since the last restart', async () => {
    const f = fakePorts({
      harvests: [
        harvestJob({
          run: 3,
          files_scanned: 200,
          sweep: {
            restarts: 2,
            attempt: 3,
            progress: 'running:adding:d001/t00100.tif:100:0',
            at: minutesAgo(90),
          },
        }),
      ],
    });
    await sweepStuckWork(f.ports, NOW);
    expect(f.started).toEqual(['h1-run-4']);
    expect(f.harvests.get('h1')?.sweep?.restarts).toBe(1);
  });

  it('skips a job that changed between the read and the restart', async () => {
    const f = fakePorts({ harvests: [harvestJob()] });
    const store = f.ports.harvests;
    f.ports.harvests = {
      ...store,
      working: async (visit) => visit({ ...harvestJob(), updated_at: minutesAgo(59) }),
    };
    const report = await sweepStuckWork(f.ports, NOW);
    expect(report.counts.changed).toBe(1);
    expect(f.started).toEqual([]);
  });
});

describe('expiry (the TTL attribute)', () => {
  it('rounds the epoch up, so an item never expires before its moment', () => {
    expect(expiryEpoch('2026-11-24T12:00:00.000Z')).toBe(Date.parse('2026-11-24T12:00:00Z') / 1000);
    expect(expiryEpoch('2026-11-24T12:00:00.001Z')).toBe(Date.parse('2026-11-24T12:00:01Z') / 1000);
  });

  it('gives a key with expires_at a TTL on its hash item at expiry and on its record after the retention', () => {
    const at = '2026-12-01T00:00:00.000Z';
    expect(apiKeyExpiry({ expires_at: at })).toEqual({
      credential: Date.parse(at) / 1000,
      record: Date.parse(at) / 1000 + EXPIRED_API_KEY_RETENTION_SECONDS,
    });
  });

  it('gives a key without expires_at no TTL', () => {
    expect(apiKeyExpiry({})).toBeUndefined();
  });

  it('calls an item expired only once its epoch is in the past', () => {
    const epoch = Math.floor(NOW.getTime() / 1000);
    expect(isExpired(epoch - 1, NOW)).toBe(true);
    expect(isExpired(epoch, NOW)).toBe(false);
    expect(isExpired(epoch + 60, NOW)).toBe(false);
    expect(isExpired(undefined, NOW)).toBe(false);
  });
});
