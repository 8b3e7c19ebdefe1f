/**
 * The import domain's in-memory ports for unit tests of its rules (not of the store: the DynamoDB
 * repository is tested against DynamoDB Local in test/integration): a repository that keeps the
 * workspace's usage as the store does, the limits, a discovery, a plan, a job, an engine and the
 * step's ports. Shared by import-quotas.test.ts and import-dead-ends.test.ts.
 */
import { RuleViolationError, StateConflictError } from '#domain/errors.ts';
import { type ImportEvent, type ImportJob, isEventWorthy, timeOrderedId } from '#domain/import-model.ts';
import type { ImportQuotas, ImportUsage } from '#domain/import-plans.ts';
import type { Discovery, ImportPlan } from '#domain/import-sources.ts';
import type { ImportEngine, ImportStepDeps } from '#domain/import-steps.ts';
import type { ImportRepository } from '#domain/imports.ts';
import { CONCURRENT_MODIFICATION } from '#domain/last-writer-wins.ts';

export const WS = 'ws-1';

/** An in-memory ImportRepository that keeps the workspace's usage as the DynamoDB store does. */
export class MemoryImports implements ImportRepository {
  readonly jobs = new Map<string, ImportJob>();
  readonly events: ImportEvent[] = [];
  used: ImportUsage = { rows: 0, bytes: 0 };
  /** Runs before a save is applied (a competing writer). */
  beforeSave?: () => void;

  async create(job: ImportJob): Promise<void> {
    this.jobs.set(job.id, structuredClone(job));
  }
  async find(_ws: string, id: string): Promise<ImportJob | undefined> {
    const job = this.jobs.get(id);
    return job && structuredClone(job);
  }
  async list() {
    return { items: [...this.jobs.values()] };
  }
  async history() {
    return { items: this.events };
  }
  async save(previous: ImportJob, next: ImportJob, quota?: ImportUsage): Promise<void> {
    const hook = this.beforeSave;
    this.beforeSave = undefined;
    hook?.();
    const stored = this.jobs.get(previous.id);
    if (stored?.version !== previous.version)
      throw new StateConflictError(CONCURRENT_MODIFICATION, 'The import was changed by another request.');
    const delta = {
      rows: (next.reserved_rows ?? 0) - (previous.reserved_rows ?? 0),
      bytes: (next.reserved_bytes ?? 0) - (previous.reserved_bytes ?? 0),
    };
    for (const part of ['rows', 'bytes'] as const) {
      if (delta[part] <= 0) continue;
      if (!quota) throw new Error('a growing reservation without a quota');
      if (this.used[part] + delta[part] > quota[part])
        throw new RuleViolationError('workspace_import_quota', 'no room');
    }
    this.used = { rows: this.used.rows + delta.rows, bytes: this.used.bytes + delta.bytes };
    this.jobs.set(next.id, structuredClone(next));
    if (isEventWorthy(previous, next)) this.events.push(next as unknown as ImportEvent);
  }
  async usage(): Promise<ImportUsage> {
    return { ...this.used };
  }
  async progress(): Promise<boolean> {
    return true;
  }
  async findByService() {
    return undefined;
  }
  async firstWhere() {
    return undefined;
  }
  async working() {}
}

export const limits: ImportQuotas = {
  maxLayers: 2,
  maxRows: 100,
  maxBytes: 10_000,
  workspaceMaxRows: 150,
  workspaceMaxBytes: 100_000,
};

export function discoveryOf(counts: Record<string, number>, size = 1000): Discovery {
  return {
    format: 'geopackage',
    size_bytes: size,
    warnings: [],
    layers: Object.entries(counts).map(([name, n]) => ({
      name,
      fields: [{ name: 'name', type: 'text' as const }],
      geometry_type: 'Point' as const,
      srid: 4326,
      feature_count: n,
      bbox: null,
    })),
  };
}

export const planOf = (...layers: string[]): ImportPlan => ({
  layers: layers.map((name) => ({
    source_layer: name,
    public_id: name,
    enabled: true,
    public: false,
    fields: [{ source: 'name', target: 'name', include: true }],
  })),
});

export function job(over: Partial<ImportJob> = {}): ImportJob {
  const ts = '2026-03-01T00:00:00.000Z';
  return {
    id: timeOrderedId(),
    workspace_id: WS,
    name: 'f',
    source_kind: 'upload',
    source_location: 'uploads/f.gpkg',
    status: 'awaiting_plan',
    phase: 'transform',
    service_name: 'svc',
    auto_publish: false,
    max_bytes: 10_000,
    processed_bytes: 0,
    processed_features: 0,
    processed_layers: 0,
    total_layers: 0,
    retry_count: 0,
    run: 1,
    version: 1,
    created_by: 'u',
    created_at: ts,
    updated_at: ts,
    ...over,
  };
}

export const starter = { startImport: async () => {} };

export async function stored(repo: MemoryImports, j: ImportJob): Promise<ImportJob> {
  return (await repo.find(WS, j.id)) as ImportJob;
}

export async function refusal(work: Promise<unknown>) {
  try {
    await work;
  } catch (error) {
    return error as { name: string; reason: string; message: string };
  }
  throw new Error('not refused');
}

/** An engine whose behaviour each test sets. */
export function engine(over: Partial<ImportEngine> = {}): ImportEngine & { dropped: string[] } {
  const dropped: string[] = [];
  return {
    dropped,
    discover: async () => discoveryOf({ a: 10 }),
    load: async () => ({
      done: true,
      processed_bytes: 0,
      processed_features: 0,
      processed_layers: 0,
      warnings: [],
    }),
    publishTables: async () => {},
    applyTargets: async () => [],
    revertTargets: async () => [],
    dropStaging: async (id: string) => {
      dropped.push(`staging:${id}`);
    },
    dropAll: async (id: string) => {
      dropped.push(`all:${id}`);
    },
    tableName: (id: string) => id.toLowerCase(),
    servingConnection: async () =>
      ({ host: 'h', port: 1, database: 'd', user: 'u', password: 'p', schemas: ['import_1'] }) as never,
    ...over,
  };
}

export function stepDeps(
  repo: MemoryImports,
  eng: ImportEngine,
  over: Partial<ImportStepDeps> = {},
): ImportStepDeps {
  return {
    repo,
    engine: eng,
    services: { findByName: async () => undefined, findById: async () => undefined } as never,
    layers: { findPublicId: async () => undefined } as never,
    gateway: {} as never,
    box: { encrypt: async () => 'x', decrypt: async () => 'p' } as never,
    deletions: {} as never,
    workspaces: {} as never,
    limits,
    ...over,
  };
}

export const inputOf = (j: ImportJob) => ({ import_id: j.id, workspace_id: j.workspace_id, run: j.run });
