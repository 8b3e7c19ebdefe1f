import type { PostgisConnectionInfo } from '#domain/datasource.ts';
import type { Discovery, ImportPlan } from '#domain/import-sources.ts';
import type { ImportEngine, LoadResult } from '#domain/import-steps.ts';
import type { TargetOutcome, TargetTable } from '#domain/import-targets.ts';
import type { ImportJob } from '#domain/imports.ts';
import { ImportDatabase, withDatabase } from './database.ts';
import { discover, readRows } from './formats/index.ts';
import { logins } from './logins.ts';
import { loadImport } from './pipeline.ts';
import { releaseSourceFile, sourceFile } from './sources.ts';

/** Every plan layer is loaded (a plan layer's `enabled` is the published layer's flag). */
function loadablePlan(plan: ImportPlan): ImportPlan {
  return { layers: plan.layers.map((l) => ({ ...l, enabled: true })) };
}

/** The import engine of ADR 0083: format readers + the import database, behind the domain's port. */
export class PostgisImportEngine implements ImportEngine {
  async discover(job: ImportJob, onBytes: (bytes: number) => void): Promise<Discovery> {
    const path = await sourceFile(job);
    return discover(path, job.source_filename ?? job.source_location, { onBytes });
  }

  async load(
    job: ImportJob & { plan: ImportPlan; discovery: Discovery },
    budgetMs: number,
    shouldStop: () => Promise<boolean>,
    onProgress: (p: Omit<LoadResult, 'done'>) => Promise<void>,
  ): Promise<LoadResult> {
    const path = await sourceFile(job);
    const filename = job.source_filename ?? job.source_location;
    const result = await withDatabase((db) =>
      loadImport({
        db,
        importId: job.id,
        plan: loadablePlan(job.plan),
        discovery: job.discovery,
        source: {
          rows: (layer, { shape, ...options }) => readRows(path, filename, layer, shape, options),
        },
        budgetMs,
        run: job.run,
        shouldStop,
        onProgress: (p) => onProgress(p),
      }),
    );
    // Loaded: the copy is not read again (a new plan's load downloads the file once more).
    if (result.done) await releaseSourceFile(job.id);
    return result;
  }

  async publishTables(job: ImportJob & { plan: ImportPlan }): Promise<void> {
    await withDatabase((db) =>
      db.publish(
        job.id,
        job.plan.layers.map((l) => ImportDatabase.tableName(l.public_id)),
      ),
    );
  }

  applyTargets(job: ImportJob, targets: TargetTable[], expireBefore: Date): Promise<TargetOutcome[]> {
    return withDatabase((db) => db.applyTargets(job.id, targets, expireBefore));
  }

  revertTargets(importId: string): Promise<TargetOutcome[]> {
    return withDatabase((db) => db.revertTargets(importId));
  }

  dropStaging(importId: string, run: number): Promise<void> {
    return withDatabase((db) => db.dropStaging(importId, run));
  }

  async dropAll(importId: string, run: number): Promise<void> {
    await withDatabase((db) => db.dropAll(importId, run));
    await releaseSourceFile(importId);
  }

  tableName(publicId: string): string {
    return ImportDatabase.tableName(publicId);
  }

  /** The import's own login (ADR 0105): it reads its published schema and nothing else. */
  async servingConnection(importId: string): Promise<PostgisConnectionInfo & { password: string }> {
    const { connection } = await logins();
    const db = new ImportDatabase(connection);
    return {
      host: connection.host,
      port: connection.port,
      database: connection.database,
      ...db.reader(importId),
      ...(connection.sslmode ? { sslmode: connection.sslmode } : {}),
      schemas: [db.schemas(importId).published],
    };
  }
}
