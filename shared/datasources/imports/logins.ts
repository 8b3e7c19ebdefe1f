import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { importConfig } from '../../config/env.ts';
import { UnavailableError } from '../../domain/errors.ts';
import { captureClient } from '../../log/tracer.ts';
import { ImportDatabase, type ImportDatabaseConfig } from './database.ts';

/**
 * The import database's loader login (owns the schemas). Each published import is read by a login
 * of its own, derived from this one (ADR 0105): there is no shared serving login.
 */
export interface Logins {
  connection: ImportDatabaseConfig;
}

let secretCache: { arn: string; value: { username: string; password: string } } | undefined;

/** The logins of the import database: from the local configuration, or (AWS) its Secrets Manager secret. */
export async function logins(): Promise<Logins> {
  const cfg = importConfig();
  const db = cfg.database;
  if (!db) throw new UnavailableError('import_database_unavailable', 'No import database is configured.');
  if (db.user && db.password) {
    return {
      connection: {
        host: db.host,
        port: db.port,
        database: db.database,
        ...(db.sslmode ? { sslmode: db.sslmode } : {}),
        user: db.user,
        password: db.password,
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
      const out = await captureClient(new SecretsManagerClient({})).send(
        new GetSecretValueCommand({ SecretId: arn }),
      );
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
    },
  };
}

async function database(): Promise<ImportDatabase> {
  return new ImportDatabase((await logins()).connection);
}

export async function withDatabase<T>(fn: (db: ImportDatabase) => Promise<T>): Promise<T> {
  const db = await database();
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
