import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { importConfig } from '#config/env.ts';
import { UnavailableError } from '#domain/errors.ts';
import { awsClient } from '#telemetry/aws-clients.ts';
import type { ImportDatabaseConfig } from './database-connection.ts';

/**
 * The import database's loader login (owns the schemas). Each published import is read by a login
 * of its own, derived from the reader key (ADR 0105, 0118): there is no shared serving login.
 */
export interface Logins {
  connection: ImportDatabaseConfig;
}

/** The secret's fields (Secrets Manager JSON): `reader_key` is optional and never rotated (ADR 0118). */
interface LoaderSecret {
  username: string;
  password: string;
  reader_key?: string;
}

/**
 * The secret as last read, kept while it works: an authentication failure drops it, so a rotated
 * password is read again on the next try (ADR 0118).
 */
let secretCache: { arn: string; value: LoaderSecret } | undefined;

async function readSecret(arn: string): Promise<LoaderSecret> {
  if (secretCache?.arn === arn) return secretCache.value;
  let value: Partial<LoaderSecret>;
  try {
    const out = await awsClient(new SecretsManagerClient({})).send(
      new GetSecretValueCommand({ SecretId: arn }),
    );
    value = JSON.parse(out.SecretString ?? '{}') as Partial<LoaderSecret>;
  } catch {
    throw new UnavailableError(
      'import_database_unavailable',
      'The import database secret could not be read.',
    );
  }
  if (typeof value.username !== 'string' || typeof value.password !== 'string') {
    throw new UnavailableError(
      'import_database_unavailable',
      'The import database secret has no username and password.',
    );
  }
  const secret: LoaderSecret = {
    username: value.username,
    password: value.password,
    ...(typeof value.reader_key === 'string' && value.reader_key !== ''
      ? { reader_key: value.reader_key }
      : {}),
  };
  secretCache = { arn, value: secret };
  return secret;
}

/** Forgets the secret read last: the next `logins()` reads it again. */
export function forgetLogins(): void {
  secretCache = undefined;
}

/** The logins of the import database: from the local configuration, or (AWS) its Secrets Manager secret. */
export async function logins(): Promise<Logins> {
  const cfg = importConfig();
  const db = cfg.database;
  if (!db) throw new UnavailableError('import_database_unavailable', 'No import database is configured.');
  const address = {
    host: db.host,
    port: db.port,
    database: db.database,
    ...(db.sslmode ? { sslmode: db.sslmode } : {}),
  };
  if (db.user && db.password) {
    return {
      connection: {
        ...address,
        user: db.user,
        password: db.password,
        ...(db.readerKey ? { readerKey: db.readerKey } : {}),
      },
    };
  }
  const arn = cfg.databaseSecretArn;
  if (!arn)
    throw new UnavailableError(
      'import_database_unavailable',
      'The import database has no credentials configured.',
    );
  const s = await readSecret(arn);
  return {
    connection: {
      ...address,
      user: s.username,
      password: s.password,
      ...(s.reader_key ? { readerKey: s.reader_key } : {}),
    },
  };
}

/**
 * True when PostgreSQL refused the login itself: 28P01 (invalid_password) or 28000
 * (invalid_authorization_specification), found on the error or any of its causes.
 */
export function isAuthenticationFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === '28P01' || code === '28000') return true;
  }
  return false;
}

/**
 * Runs `fn` with the loader's login. When the login is refused (its password was rotated since the
 * secret was read), the secret is read again and `fn` runs once more: every unit of work given here
 * is idempotent (loads resume from their checkpoint, publish and drops are idempotent, previews
 * and the readiness probe read), and a refused login did nothing (ADR 0118). `withDatabase`
 * (database.ts) runs the import's steps through it; the readiness probe only connects.
 */
export async function withLogin<T>(fn: (connection: ImportDatabaseConfig) => Promise<T>): Promise<T> {
  try {
    return await fn((await logins()).connection);
  } catch (error) {
    if (!isAuthenticationFailure(error)) throw error;
    forgetLogins();
    return await fn((await logins()).connection);
  }
}
