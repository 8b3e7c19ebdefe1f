import { describe, expect, it } from 'vitest';
import { UnavailableError } from '#domain/errors.ts';
import { type ImportJob, REASON_MARK, taskFailureOf } from '#domain/import-model.ts';
import { findClashes, withProposals } from '#domain/import-names.ts';
import { planJob } from '#domain/import-planning.ts';
import { completePlan, planWithNames } from '#domain/import-plans.ts';
import { ImportInputError, type ImportPlan } from '#domain/import-sources.ts';
import { fail, publicTaskError, runImportStep } from '#domain/import-steps.ts';
import {
  cancelJob,
  type ImportUploads,
  previewJob,
  retryImport,
  retryJob,
  rollbackJob,
} from '#domain/imports.ts';
import { barrier } from '../support/barrier.ts';
import {
  discoveryOf,
  engine,
  inputOf,
  job,
  limits,
  MemoryImports,
  planOf,
  refusal,
  starter,
  stepDeps,
  stored,
  WS,
} from '../support/memory-imports.ts';

/**
 * The import quota's bookkeeping in the domain (ADR 0110): which transitions reserve a plan's rows
 * and bytes of the workspace's quota and which release them, what a refusal says, and what a
 * failure shows a user. The store's own part (the conditioned counter) is tested against DynamoDB
 * Local in test/integration/import-usage.test.ts.
 */

const INTERNAL =
  /10\.0\.0\.5|5432|import_staging_[0-9a-f]{32}|geoplane_importer|\/tmp\/|ECONNREFUSED|TransientError/;

/** The upload store: a cancel past the upload only removes (nothing here). */
const uploads = { remove: async () => {} } as unknown as ImportUploads;

describe('setImportPlan and retryJob reserve the plan against the limits (ADR 0110)', () => {
  it("reserves a plan's rows and the file's bytes, and refuses the plan that would pass the workspace's quota (422)", async () => {
    const repo = new MemoryImports();
    const first = job({ discovery: discoveryOf({ a: 80, b: 60 }) });
    const second = job({ discovery: discoveryOf({ c: 90 }) });
    await repo.create(first);
    await repo.create(second);

    const queued = await planJob({ repo, starter, limits }, first, planOf('a'));

    expect(queued).toMatchObject({ status: 'queued', reserved_rows: 80, reserved_bytes: 1000 });
    expect(repo.used).toEqual({ rows: 80, bytes: 1000 });
    const error = await refusal(planJob({ repo, starter, limits }, second, planOf('c')));
    expect(error).toMatchObject({ name: 'RuleViolationError', reason: 'workspace_import_quota' });
    expect(error.message).toMatch(/hold 80 of its 150 import rows; this import needs 90/);
    expect(await stored(repo, second)).toMatchObject({ status: 'awaiting_plan', version: 1 });
    expect(repo.used).toEqual({ rows: 80, bytes: 1000 });
  });

  it("refuses a plan over one import's layers or rows (422), and a source layer twice (400), writing nothing", async () => {
    const repo = new MemoryImports();
    const j = job({ discovery: discoveryOf({ a: 60, b: 50, c: 1 }) });
    await repo.create(j);
    const put = (plan: ImportPlan) => refusal(planJob({ repo, starter, limits }, j, plan));

    expect(await put(planOf('a', 'b', 'c'))).toMatchObject({ reason: 'import_layer_limit' });
    expect(await put(planOf('a', 'b'))).toMatchObject({ reason: 'import_row_limit' });
    const twice = await put({
      layers: [
        ...planOf('a').layers,
        { ...(planOf('a').layers[0] as ImportPlan['layers'][0]), public_id: 'a2' },
      ],
    });
    expect(twice).toMatchObject({ reason: 'invalid_plan' });
    expect(await stored(repo, j)).toMatchObject({ version: 1 });
    expect(repo.used).toEqual({ rows: 0, bytes: 0 });
  });

  it('a new plan of a staged import swaps its reservation: a smaller one frees rows at once', async () => {
    const repo = new MemoryImports();
    repo.used = { rows: 140, bytes: 1000 };
    const j = job({
      status: 'ready_to_publish',
      discovery: discoveryOf({ a: 80, b: 20 }),
      plan: planOf('a'),
      reserved_rows: 80,
      reserved_bytes: 1000,
    });
    await repo.create(j);

    const next = await planJob({ repo, starter, limits }, j, planOf('b'));

    expect(next).toMatchObject({ status: 'queued', reserved_rows: 20, reserved_bytes: 1000 });
    expect(repo.used).toEqual({ rows: 80, bytes: 1000 });
  });

  it("explains the store's refusal when another import took the room between the read and the write", async () => {
    const repo = new MemoryImports();
    const j = job({ discovery: discoveryOf({ a: 60 }) });
    await repo.create(j);
    repo.beforeSave = () => {
      repo.used = { rows: 100, bytes: 0 };
    };

    const error = await refusal(planJob({ repo, starter, limits }, j, planOf('a')));

    expect(error).toMatchObject({ reason: 'workspace_import_quota' });
    expect(error.message).toMatch(/hold 100 of its 150 import rows; this import needs 60/);
  });

  it('a retried load reserves again (and is refused while the workspace has no room)', async () => {
    const repo = new MemoryImports();
    repo.used = { rows: 120, bytes: 0 };
    const j = job({
      status: 'failed',
      phase: 'transform',
      discovery: discoveryOf({ a: 60 }),
      plan: planOf('a'),
      error_message: 'bad geometry',
      error_reason: 'invalid_geometry',
    });
    await repo.create(j);

    expect(await refusal(retryJob({ repo, starter, limits }, j))).toMatchObject({
      reason: 'workspace_import_quota',
    });
    repo.used = { rows: 0, bytes: 0 };
    const retried = await retryJob({ repo, starter, limits }, j);
    expect(retried).toMatchObject({ status: 'queued', reserved_rows: 60, reserved_bytes: 1000 });
    expect(retried).not.toHaveProperty('error_reason');
    expect(repo.used).toEqual({ rows: 60, bytes: 1000 });
  });
});

describe('the quota read rides with the other reads (issue #27)', () => {
  it("retryImport reads the job and the workspace's usage in one round", async () => {
    const repo = new MemoryImports();
    const j = job({
      status: 'failed',
      phase: 'transform',
      discovery: discoveryOf({ a: 60 }),
      plan: planOf('a'),
      error_message: 'bad geometry',
      error_reason: 'invalid_geometry',
    });
    await repo.create(j);
    const round = barrier(2);
    const find = repo.find.bind(repo);
    const usage = repo.usage.bind(repo);
    repo.find = async (ws, id) => {
      await round.wait();
      return find(ws, id);
    };
    repo.usage = async () => {
      await round.wait();
      return usage();
    };

    const retried = await retryImport({ repo, starter, limits }, { workspaceId: WS, import: j.id });

    expect(retried).toMatchObject({ status: 'queued', reserved_rows: 60 });
    expect(round.started()).toBe(2);
  }, 2_000);

  it("setImportPlan reads the workspace's usage beside the plan's name lookups", async () => {
    const repo = new MemoryImports();
    const j = job({ discovery: discoveryOf({ a: 60 }) });
    await repo.create(j);
    const round = barrier(3);
    const usage = repo.usage.bind(repo);
    repo.usage = async () => {
      await round.wait();
      return usage();
    };
    const lookup = async () => {
      await round.wait();
      return undefined;
    };
    const names = { layers: { findPublicId: lookup }, services: { findByName: lookup } };

    const planned = await planJob({ repo, starter, limits, names }, j, planOf('a'));

    expect(planned).toMatchObject({ status: 'queued', reserved_rows: 60 });
    expect(round.started()).toBe(3);
  }, 2_000);
});

/** A job whose rollback runs, its service `svc-1` still there. */
const rollingBack = (over: Partial<ImportJob> = {}) =>
  job({ status: 'rolling_back', phase: 'rollback', service_id: 'svc-1', ...over });

describe('the import step reserves before loading and releases what it drops (ADR 0110)', () => {
  it('a discovered file within the limits reserves its default plan as the load starts', async () => {
    const repo = new MemoryImports();
    const j = job({ status: 'running', phase: 'discover' });
    await repo.create(j);

    await runImportStep(stepDeps(repo, engine()), inputOf(j), 1000);

    expect(await stored(repo, j)).toMatchObject({ status: 'running', phase: 'transform', reserved_rows: 10 });
    expect(repo.used).toEqual({ rows: 10, bytes: 1000 });
  });

  it('a file over the limits fails before anything is staged, keeping discovery and plan for a smaller plan', async () => {
    const repo = new MemoryImports();
    const j = job({ status: 'running', phase: 'discover' });
    await repo.create(j);
    const eng = engine({ discover: async () => discoveryOf({ a: 70, b: 70 }) });

    await runImportStep(stepDeps(repo, eng), inputOf(j), 1000);

    const failed = await stored(repo, j);
    expect(failed).toMatchObject({ status: 'failed', phase: 'transform', error_reason: 'import_row_limit' });
    expect(failed.error_message).toMatch(/loads 140 features; an import loads at most 100/);
    expect(failed.discovery?.layers).toHaveLength(2);
    expect(failed.plan?.layers).toHaveLength(2);
    expect(repo.used).toEqual({ rows: 0, bytes: 0 });
    expect(eng.dropped).toEqual([]);

    const smaller = await planJob({ repo, starter, limits }, failed, planOf('a'));
    expect(smaller.status).toBe('failed');
    expect(smaller).not.toHaveProperty('reserved_rows');
    const retried = await retryJob({ repo, starter, limits }, smaller);
    expect(retried).toMatchObject({ status: 'queued', phase: 'transform', reserved_rows: 70 });
  });

  it("fails the import with the workspace's numbers when its quota has no room", async () => {
    const repo = new MemoryImports();
    repo.used = { rows: 145, bytes: 0 };
    const j = job({ status: 'running', phase: 'discover' });
    await repo.create(j);

    await runImportStep(stepDeps(repo, engine()), inputOf(j), 1000);

    const failed = await stored(repo, j);
    expect(failed).toMatchObject({ status: 'failed', error_reason: 'workspace_import_quota' });
    expect(failed.error_message).toMatch(/hold 145 of its 150 import rows; this import needs 10/);
  });

  it('a load that fails on its file drops the staging and releases the reservation; its message holds no internal path', async () => {
    const repo = new MemoryImports();
    repo.used = { rows: 10, bytes: 1000 };
    const j = job({
      status: 'running',
      phase: 'transform',
      discovery: discoveryOf({ a: 10 }),
      plan: planOf('a'),
      reserved_rows: 10,
      reserved_bytes: 1000,
    });
    await repo.create(j);
    const eng = engine({
      load: async () => {
        throw new ImportInputError(
          'invalid_shapefile',
          "The shapefile 'a' cannot be read: ENOENT: no such file or directory, open '/tmp/geoplane-shp-1/a.dbf'",
        );
      },
    });

    await runImportStep(stepDeps(repo, eng), inputOf(j), 1000);

    const failed = await stored(repo, j);
    expect(failed).toMatchObject({ status: 'failed', error_reason: 'invalid_shapefile' });
    expect(failed.error_message).toMatch(/open 'a\.dbf'/);
    expect(failed.error_message).not.toMatch(INTERNAL);
    expect(failed).not.toHaveProperty('reserved_rows');
    expect(repo.used).toEqual({ rows: 0, bytes: 0 });
    expect(eng.dropped).toEqual([`staging:${j.id}`]);
  });

  it('a failed publish keeps its reservation (its tables are still there); a cancel releases it once they are dropped', async () => {
    const repo = new MemoryImports();
    repo.used = { rows: 10, bytes: 1000 };
    const j = job({
      status: 'publishing',
      phase: 'publish',
      discovery: discoveryOf({ a: 10 }),
      plan: planOf('a'),
      reserved_rows: 10,
      reserved_bytes: 1000,
    });
    await repo.create(j);
    const eng = engine();
    const deps = stepDeps(repo, eng);

    await fail(deps, inputOf(j), { reason: 'internal_error', message: 'x' });
    expect(await stored(repo, j)).toMatchObject({ status: 'failed', reserved_rows: 10 });
    expect(repo.used).toEqual({ rows: 10, bytes: 1000 });

    const { job: cancelling } = await cancelJob({ repo, uploads, starter }, await stored(repo, j));
    await runImportStep(deps, inputOf(cancelling), 1000);
    expect(await stored(repo, j)).toMatchObject({ status: 'cancelled' });
    expect(await stored(repo, j)).not.toHaveProperty('reserved_rows');
    expect(repo.used).toEqual({ rows: 0, bytes: 0 });
  });
});

describe('an internal failure reaches the job as a reason and a fixed message only (ADR 0110)', () => {
  it('an outage: the step hands the state machine the reason alone, and the recorder stores no address', async () => {
    const repo = new MemoryImports();
    const j = job({
      status: 'cancelling',
      phase: 'transform',
      discovery: discoveryOf({ a: 1 }),
      plan: planOf('a'),
    });
    await repo.create(j);
    const outage = new UnavailableError(
      'import_database_unavailable',
      'The import database 10.0.0.5:5432/geoplane is unavailable: connect ECONNREFUSED 10.0.0.5:5432.',
    );
    const deps = stepDeps(
      repo,
      engine({
        dropAll: async () => {
          throw outage;
        },
      }),
    );
    const thrown = await refusal(runImportStep(deps, inputOf(j), 1000));
    const transient = Object.assign(new Error(thrown.message), { name: 'TransientError' });

    const carried = publicTaskError(transient, thrown);

    expect(carried.name).toBe('TransientError');
    expect(carried.message).toBe(`${REASON_MARK}import_database_unavailable`);
    // What Lambda puts in the Catch's Cause, and what the recorder makes of it.
    const cause = JSON.stringify({ errorType: carried.name, errorMessage: carried.message, trace: ['at x'] });
    await fail(deps, inputOf(j), taskFailureOf({ Error: carried.name, Cause: cause }));
    const failed = await stored(repo, j);
    expect(failed).toMatchObject({ status: 'failed', error_reason: 'import_database_unavailable' });
    expect(failed.error_message).toMatch(/import database/);
    expect(failed.error_message).not.toMatch(INTERNAL);
    expect(repo.events.at(-1)?.error_message).toBe(failed.error_message);
  });

  it("a rollback's teardown names its deletion for the state machine to run (nested), saves its id and drops nothing yet", async () => {
    const repo = new MemoryImports();
    const j = rollingBack();
    await repo.create(j);
    const operation = {
      id: 'op-1',
      status: 'running',
      attempt_count: 2,
      updated_at: new Date().toISOString(),
    };
    const eng = engine();
    const deps = stepDeps(repo, eng, {
      services: {
        findById: async () => ({ id: 'svc-1', name: 'roads', status: 'deleting', deletion_id: 'op-1' }),
      } as never,
      workspaces: { findById: async () => ({ id: WS, name: 'ws', status: 'active' }) } as never,
      deletions: {
        find: async (id: string) => (id === 'op-1' ? { operation, plan: {} } : undefined),
        markRetry: async () => {
          throw new Error('a running deletion is not retried');
        },
      } as never,
    });

    const result = await runImportStep(deps, inputOf(j), 1000);

    expect(result).toMatchObject({
      done: false,
      deletion: { name: 'op-1-attempt-2', input: { operation_id: 'op-1', attempt: 2 } },
    });
    expect(result.wait_seconds).toBeGreaterThanOrEqual(2);
    expect(await stored(repo, j)).toMatchObject({ status: 'rolling_back', rollback_operation_id: 'op-1' });
    expect(eng.dropped).toEqual([]);
  });

  it("a rollback's teardown goes on once its deletion completed: tables dropped, rolled_back", async () => {
    const repo = new MemoryImports();
    const j = rollingBack({ rollback_operation_id: 'op-1' });
    await repo.create(j);
    const eng = engine();
    const deps = stepDeps(repo, eng, {
      services: { findById: async () => ({ id: 'svc-1', status: 'deleting', deletion_id: 'op-1' }) } as never,
      deletions: {
        find: async () => ({ operation: { id: 'op-1', status: 'completed' }, plan: {} }),
      } as never,
    });

    expect(await runImportStep(deps, inputOf(j), 1000)).toEqual({ done: true, wait_seconds: 0 });

    expect(await stored(repo, j)).toMatchObject({ status: 'rolled_back' });
    expect(eng.dropped).toContain(`all:${j.id}`);
  });

  it("a rollback whose deletion failed doesn't show the deletion's internal error", async () => {
    const repo = new MemoryImports();
    const j = rollingBack({ rollback_operation_id: 'op-1' });
    await repo.create(j);
    const deps = stepDeps(repo, engine(), {
      services: { findById: async () => ({ id: 'svc-1' }) } as never,
      deletions: {
        find: async () => ({
          operation: {
            status: 'failed',
            last_error: 'TransientError: connect ECONNREFUSED 10.0.0.5:5432 (user "geoplane_importer")',
          },
        }),
      } as never,
    });

    await runImportStep(deps, inputOf(j), 1000);

    const failed = await stored(repo, j);
    expect(failed).toMatchObject({ status: 'failed', error_reason: 'rollback_failed' });
    expect(failed.error_message).toMatch(/deletion operation op-1/);
    expect(failed.error_message).not.toMatch(INTERNAL);
  });

  it("a layer the service can't read while publishing: the driver's words and the schema stay in the log", async () => {
    const repo = new MemoryImports();
    const j = job({
      status: 'publishing',
      phase: 'publish',
      plan: planOf('a'),
      discovery: discoveryOf({ a: 1 }),
      service_id: 'svc-1',
    });
    await repo.create(j);
    const service = {
      id: 'svc-1',
      workspace_id: WS,
      name: 'svc',
      type: 'postgis',
      enabled: true,
      connection: { host: 'h', port: 1, database: 'd', user: 'u', schemas: ['import_1'] },
    };
    const deps = stepDeps(repo, engine(), {
      services: { findByName: async () => service, findById: async () => service } as never,
      layers: { findPublicId: async () => undefined } as never,
      gateway: {
        probeLayer: async () => ({
          ok: false,
          reason:
            'permission denied for schema import_staging_0190f7a2000070008000000000000001 at 10.0.0.5:5432 (user "geoplane_importer")',
        }),
      } as never,
    });

    await runImportStep(deps, inputOf(j), 1000);

    const failed = await stored(repo, j);
    expect(failed).toMatchObject({ status: 'failed', error_reason: 'source_unreadable' });
    expect(failed.error_message).toMatch(/Layer 'a' could not be published/);
    expect(failed.error_message).not.toMatch(/permission denied/);
    expect(failed.error_message).not.toMatch(INTERNAL);
  });

  it("a preview while the import database is down answers 503 without the database's address", async () => {
    const outage = new UnavailableError(
      'import_database_unavailable',
      'The import database 10.0.0.5:5432/geoplane is unavailable: connect ECONNREFUSED 10.0.0.5:5432.',
    );
    const previews = {
      preview: async () => {
        throw outage;
      },
      tableName: (id: string) => id,
    };
    const staged = job({ status: 'ready_to_publish', plan: planOf('a') });

    const error = (await refusal(previewJob(previews, staged, undefined, 10))) as unknown as UnavailableError;

    expect(error).toMatchObject({ name: 'UnavailableError', reason: 'import_database_unavailable' });
    expect(error.message).not.toMatch(INTERNAL);
    expect(error.cause).toBe(outage);
  });
});

describe('names first, clashes early (ADR 0126)', () => {
  const taken = (ids: string[], services: string[] = []) => ({
    layers: {
      findPublicId: async (_: string, id: string) =>
        ids.includes(id) ? ({ kind: 'layer' } as never) : undefined,
    },
    services: {
      findByName: async (_: string, n: string) =>
        services.includes(n) ? ({ id: `svc-${n}` } as never) : undefined,
    },
  });

  it('a partial plan takes the discovered fields; names given at creation go into the default plan', () => {
    const discovery = discoveryOf({ a: 1, b: 2 });
    const plan = completePlan(
      { layers: [{ source_layer: 'b', public_id: 'bee', enabled: true, public: false }] },
      discovery,
    );
    expect(plan.layers[0]).toMatchObject({
      public_id: 'bee',
      geometry_column: 'geom',
      fields: [{ source: 'name', target: 'name', type: 'text', include: true }],
    });
    const named = planWithNames(planOf('a', 'b'), [
      { public_id: 'first' },
      { source_layer: 'b', public_id: 'second' },
      { source_layer: 'zz', public_id: 'x' },
    ]);
    expect(named.plan.layers.map((l) => l.public_id)).toEqual(['first', 'second']);
    expect(named.unmatched).toEqual(['zz']);
  });

  it('proposes free names that avoid the plan and each other; auto_publish takes them', async () => {
    const clashes = await findClashes(taken(['a', 'a_2', 'b'], ['svc']), WS, planOf('a', 'b', 'a_3'), 'svc');
    expect(clashes).toEqual([
      { kind: 'service_name', name: 'svc', proposed: 'svc_2' },
      { kind: 'public_id', name: 'a', proposed: 'a_4', source_layer: 'a' },
      { kind: 'public_id', name: 'b', proposed: 'b_2', source_layer: 'b' },
    ]);
    const renamed = withProposals(planOf('a', 'b', 'a_3'), 'svc', clashes);
    expect(renamed.plan.layers.map((l) => l.public_id)).toEqual(['a_4', 'b_2', 'a_3']);
    expect(renamed.service_name).toBe('svc_2');
    expect(renamed.clashes.every((c) => c.renamed)).toBe(true);
  });

  it('looks every name up in one round: the service name and each new layer’s public id at once', async () => {
    // Each lookup waits until every lookup of the round has started: lookups made one after the
    // other would never get there (the first would wait for ever), so the test times out.
    const expected = 4;
    const round = barrier(expected);
    const lookup = async () => {
      await round.wait();
      return undefined;
    };
    const deps = {
      layers: { findPublicId: lookup },
      services: { findByName: lookup },
    };
    expect(await findClashes(deps, WS, planOf('a', 'b', 'c'), 'svc')).toEqual([]);
    expect(round.started()).toBe(expected);
  }, 2_000);

  it('keeps the round bounded: a plan of 40 layers has at most 16 public ids and the service name in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const lookup = async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
      return undefined;
    };
    const deps = { layers: { findPublicId: lookup }, services: { findByName: lookup } };
    const names = Array.from({ length: 40 }, (_, i) => `l${i}`);
    expect(await findClashes(deps, WS, planOf(...names), 'svc')).toEqual([]);
    expect(most).toBe(17);
  });

  it('discovery stops at awaiting_plan on a clash, before loading; auto_publish renames and loads', async () => {
    for (const auto of [false, true]) {
      const repo = new MemoryImports();
      const j = job({ status: 'running', phase: 'discover', auto_publish: auto });
      await repo.create(j);
      let loaded = false;
      const deps = stepDeps(
        repo,
        engine({
          load: async () => {
            loaded = true;
            return {
              done: false,
              processed_bytes: 0,
              processed_features: 0,
              processed_layers: 0,
              warnings: [],
            };
          },
        }),
        taken(['a']) as never,
      );
      await runImportStep(deps, inputOf(j), 1000);
      const after = await stored(repo, j);
      expect(loaded).toBe(false);
      if (auto) {
        expect(after).toMatchObject({ status: 'running', phase: 'transform' });
        expect(after.plan?.layers[0]?.public_id).toBe('a_2');
        expect(after.warnings?.join(' ')).toMatch(/auto_publish publishes it as 'a_2'/);
      } else {
        expect(after).toMatchObject({ status: 'awaiting_plan', phase: 'transform' });
        expect(after.clashes).toEqual([{ kind: 'public_id', name: 'a', proposed: 'a_2', source_layer: 'a' }]);
        expect(after.reserved_rows).toBeUndefined();
      }
    }
  });

  it('a publish that fails after creating its service takes the layers and the service back', async () => {
    const repo = new MemoryImports();
    const j = job({
      status: 'publishing',
      phase: 'publish',
      plan: planOf('a', 'b'),
      discovery: discoveryOf({ a: 1, b: 1 }),
    });
    await repo.create(j);
    const service = {
      id: 'svc-1',
      workspace_id: WS,
      name: 'svc',
      type: 'postgis',
      status: 'active',
      enabled: true,
      connection: {
        host: 'h',
        port: 1,
        database: 'd',
        user: 'u',
        schemas: [`import_${j.id.replaceAll('-', '')}`],
      },
    };
    let services: (typeof service)[] = [];
    const layers: { id: string; public_id: string }[] = [];
    const removed: string[] = [];
    const deps = stepDeps(repo, engine(), {
      services: {
        findByName: async () => services[0],
        findById: async () => services[0],
        create: async () => {
          services = [service];
        },
      } as never,
      layers: {
        findPublicId: async () => undefined,
        create: async (l: { id: string; public_id: string }) => {
          if (l.public_id === 'b') throw new Error('the store broke');
          layers.push(l);
        },
        list: async () => ({ items: [...layers] }),
        delete: async (l: { id: string }) => {
          layers.splice(
            layers.findIndex((x) => x.id === l.id),
            1,
          );
          removed.push(l.id);
        },
      } as never,
      gateway: {
        checkTarget: async () => {},
        testConnection: async () => ({ ok: true }),
        guardSql: async () => {},
        probeLayer: async () => ({ ok: true, layer: { geometry_type: 'POINT', srid: 4326 } }),
      } as never,
      workspaces: { findById: async () => ({ id: WS, status: 'active' }) } as never,
      deletions: {
        hideService: async () => {},
        servicePlan: async () => ({
          layers: { count: layers.length },
          layer_groups: { count: 0 },
          mosaic_granules: 0,
        }),
        removeHiddenService: async () => {
          services = [];
        },
      } as never,
    });
    const thrown = await runImportStep(deps, inputOf(j), 1000).catch((e: unknown) => e);
    expect(String(thrown)).toMatch(/the store broke/);
    const after = await stored(repo, j);
    expect(after.status).toBe('publishing');
    expect(after.service_id).toBeUndefined();
    expect(services).toEqual([]);
    expect(layers).toEqual([]);
    expect(removed).toHaveLength(1);
  });

  it('a publish whose step died (a timeout) is undone by the failure recorder: no service, failed, the plan editable', async () => {
    const repo = new MemoryImports();
    const j = job({
      status: 'publishing',
      phase: 'publish',
      plan: planOf('a'),
      discovery: discoveryOf({ a: 1 }),
      service_id: 'svc-1',
    });
    await repo.create(j);
    let services: { id: string; workspace_id: string; name: string; type: string }[] = [
      { id: 'svc-1', workspace_id: WS, name: 'svc', type: 'postgis' },
    ];
    const layers = [{ id: 'l-1', public_id: 'a' }];
    const reverted: string[] = [];
    const deps = stepDeps(
      repo,
      engine({
        revertTargets: async (id: string) => {
          reverted.push(id);
          return [];
        },
      }),
      {
        services: { findById: async () => services[0], findByName: async () => services[0] } as never,
        layers: {
          list: async () => ({ items: [...layers] }),
          delete: async () => {
            layers.pop();
          },
        } as never,
        workspaces: { findById: async () => ({ id: WS, status: 'active' }) } as never,
        deletions: {
          hideService: async () => {},
          servicePlan: async () => ({ layers: { count: 0 }, layer_groups: { count: 0 }, mosaic_granules: 0 }),
          removeHiddenService: async () => {
            services = [];
          },
        } as never,
      },
    );
    await fail(deps, inputOf(j), taskFailureOf({ Error: 'States.Timeout', Cause: '' }));
    const after = await stored(repo, j);
    expect(after).toMatchObject({ status: 'failed', error_reason: 'import_step_timeout' });
    expect(after.service_id).toBeUndefined();
    expect(services).toEqual([]);
    expect(layers).toEqual([]);
    // Without a target nothing is reverted in the import database (its tables stay for a retry).
    expect(reverted).toEqual([]);
    const replanned = await planJob({ repo, starter: { startImport: async () => {} }, limits }, after, {
      layers: [{ source_layer: 'a', public_id: 'a2', enabled: true, public: false }],
    });
    expect(replanned).toMatchObject({ status: 'failed', reload: true });
  });
});

describe('rollbackImport reads beside its transition (issue #27)', () => {
  it("reads the import's service while the transition is written", async () => {
    const repo = new MemoryImports();
    const serviceId = '0b0e6a4c-55d5-4d56-9a3f-3f1c0d2b8a11';
    const j = job({ status: 'published', service_id: serviceId, completed_at: new Date().toISOString() });
    await repo.create(j);
    const round = barrier(2);
    const save = repo.save.bind(repo);
    repo.save = async (previous, next, quota) => {
      await round.wait();
      return save(previous, next, quota);
    };
    const asked: string[] = [];
    const services = {
      findById: async (_ws: string, id: string) => {
        asked.push(id);
        await round.wait();
        return undefined;
      },
    };

    const rolled = await rollbackJob(
      { repo, starter, services, deletions: {} } as never,
      { id: WS } as never,
      j,
      'u',
    );

    expect(rolled).toMatchObject({ status: 'rolling_back', phase: 'rollback' });
    expect(asked).toEqual([serviceId]);
    expect(round.started()).toBe(2);
  }, 2_000);

  it("a refused transition answers its refusal, and the unused read's failure goes nowhere", async () => {
    const repo = new MemoryImports();
    const j = job({ status: 'publishing', service_id: '0b0e6a4c-55d5-4d56-9a3f-3f1c0d2b8a11' });
    await repo.create(j);
    const services = {
      findById: async () => {
        throw new Error('the table is unreachable');
      },
    };
    await expect(
      rollbackJob({ repo, starter, services, deletions: {} } as never, { id: WS } as never, j, 'u'),
    ).rejects.toThrow(/rollback/);
    expect((await repo.find(WS, j.id))?.status).toBe('publishing');
  });
});
