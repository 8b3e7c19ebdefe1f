import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { importConfig } from '../../config/env.ts';
import type { PostgisConnectionInfo } from '../../domain/datasource.ts';
import { UnavailableError } from '../../domain/errors.ts';
import type { Discovery, ImportPlan } from '../../domain/import-sources.ts';
import type { ImportEngine, LoadResult } from '../../domain/import-steps.ts';
import type { ImportJob, ImportPreviews } from '../../domain/imports.ts';
import { ImportDatabase, type ImportDatabaseConfig } from './database.ts';
import { discover, readFeatures } from './formats/index.ts';
import { loadImport } from './pipeline.ts';
import { releaseSourceFile, sourceFile } from './sources.ts';

/** The import database's logins: the loader (owns the schemas) and the serving login. */
interface Logins {
  connection: Omit<ImportDatabaseConfig, 'servingUser'> & { servingUser: string; servingPassword: string };
}

let secretCache:
  | {
      arn: string;
      value: { username: string; password: string; serving_username: string; serving_password: string };
    }
  | undefined;

/** The logins of the import database: from the local configuration, or (AWS) its Secrets Manager secret. */
async function logins(): Promise<Logins> {
  const cfg = importConfig();
  const db = cfg.database;
  if (!db) throw new UnavailableError('import_database_unavailable', 'No import database is configured.');
  if (db.user && db.password && db.serving_user && db.serving_password !== undefined) {
    return {
      connection: {
        host: db.host,
        port: db.port,
        database: db.database,
        ...(db.sslmode ? { sslmode: db.sslmode } : {}),
        user: db.user,
        password: db.password,
        servingUser: db.serving_user,
        servingPassword: db.serving_password,
      },
    };
  }
  const arn = cfg.databaseSecretArn;
  if (!arn)
    throw new UnavailableError(
      'import_database_unavailable',
      'The import database has no credentials configured.',
    );
  if (secretCache?.arn !== arn) {
    try {
      const out = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: arn }));
      secretCache = { arn, value: JSON.parse(out.SecretString ?? '{}') };
    } catch {
      throw new UnavailableError(
        'import_database_unavailable',
        'The import database secret could not be read.',
      );
    }
  }
  const s = secretCache.value;
  return {
    connection: {
      host: db.host,
      port: db.port,
      database: db.database,
      ...(db.sslmode ? { sslmode: db.sslmode } : {}),
      user: s.username,
      password: s.password,
      servingUser: s.serving_username,
      servingPassword: s.serving_password,
    },
  };
}

async function database(): Promise<ImportDatabase> {
  const { connection } = await logins();
  const { servingPassword: _, ...config } = connection;
  return new ImportDatabase(config);
}

async function withDatabase<T>(fn: (db: ImportDatabase) => Promise<T>): Promise<T> {
  const db = await database();
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** Every plan layer is loaded (a plan layer's `enabled` is the published layer's flag). */
function loadablePlan(plan: ImportPlan): ImportPlan {
  return { layers: plan.layers.map((l) => ({ ...l, enabled: true })) };
}

/** The import engine of ADR 0083: format readers + the import database, behind the domain's port. */
export class PostgisImportEngine implements ImportEngine, ImportPreviews {
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
          features: (layer, options) => readFeatures(path, filename, layer, options),
        },
        budgetMs,
        run: job.run,
        shouldStop,
        onProgress: (p) => onProgress(p),
      }),
    );
    if (result.done && job.source_kind === 'uri') await releaseSourceFile(job.id);
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

  async servingConnection(importId: string): Promise<PostgisConnectionInfo & { password: string }> {
    const { connection } = await logins();
    return {
      host: connection.host,
      port: connection.port,
      database: connection.database,
      user: connection.servingUser,
      password: connection.servingPassword,
      ...(connection.sslmode ? { sslmode: connection.sslmode } : {}),
      schemas: [new ImportDatabase({ ...connection }).schemas(importId).published],
    };
  }

  preview(importId: string, table: string, limit: number) {
    return withDatabase((db) => db.preview(importId, table, limit));
  }
}
