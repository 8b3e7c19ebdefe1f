import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ImportDatabase, withDatabase } from '#datasources/imports/database.ts';
import { closeKeptConnections } from '#datasources/imports/database-connection.ts';
import { PostgisImportEngine } from '#datasources/imports/engine.ts';
import { forgetLogins } from '#datasources/imports/logins.ts';
import { featureRows, loadImport } from '#datasources/imports/pipeline.ts';
import type { Discovery, ImportPlan, SourceFeature } from '#domain/import-sources.ts';
import type { ImportJob } from '#domain/imports.ts';
import { type EmbeddedPostgis, startEmbeddedPostgis } from '#infra/local/postgis.ts';
import { type ImportRoleNames, importRolesSql } from '#infra/local/postgis-seed.ts';
import {
  dropImportRoles,
  REAL_POSTGRES_SKIP_REASON,
  REAL_POSTGRES_URL,
  startRealPostgis,
} from '../support/real-postgres.ts';

// ADR 0118: the loader's password in Secrets Manager is rotated while functions are warm. A warm
// function's cached secret is refused (28P01), read again and the work retried once; published
// imports keep reading with the passwords their services hold, and a publish retried after the
// rotation re-keys no reader away from them (reader passwords come from the secret's `reader_key`).
// Both targets check passwords: the embedded PostGIS verifies them against pg_authid itself.

const secrets = vi.hoisted(() => ({
  current: { username: '', password: '', reader_key: '' } as Record<string, string>,
  reads: 0,
}));
vi.mock('@aws-sdk/client-secrets-manager', () => ({
  GetSecretValueCommand: class {
    constructor(readonly input: { SecretId: string }) {}
  },
  SecretsManagerClient: class {
    // What the product's client builder (awsClient) takes off every client's stack.
    readonly middlewareStack = { remove: () => true };
    async send() {
      secrets.reads++;
      return { SecretString: JSON.stringify(secrets.current) };
    }
  },
}));

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:geoplane/imports-Test01';

interface Target {
  address: { host: string; port: number; database: string; sslmode: 'disable' | 'prefer' };
  loader: string;
  admin: pg.Pool;
}

const discovery: Discovery = {
  format: 'geojson',
  size_bytes: 0,
  layers: [
    {
      name: 'sites',
      fields: [{ name: 'name', type: 'text' }],
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 5,
      bbox: null,
    },
  ],
  warnings: [],
};
const plan: ImportPlan = {
  layers: [
    {
      source_layer: 'sites',
      public_id: 'sites',
      enabled: true,
      public: true,
      fields: [{ source: 'name', target: 'name', include: true }],
    },
  ],
};
const features: SourceFeature[] = Array.from({ length: 5 }, (_, i) => ({
  properties: { name: `s${i}` },
  geometry: { type: 'Point', coordinates: [i, i] },
}));

/** Loads and publishes one import the way the import steps do (loader from the secret). */
async function importAndPublish(importId: string): Promise<void> {
  const result = await withDatabase((db) =>
    loadImport({
      db,
      importId,
      plan,
      discovery,
      source: featureRows({
        features: () =>
          (async function* () {
            yield* features;
          })(),
      }),
      budgetMs: 60_000,
    }),
  );
  expect(result.done).toBe(true);
  await new PostgisImportEngine().publishTables({ id: importId, plan } as ImportJob & { plan: ImportPlan });
}

/** Counts the published rows as the import's service would, with the password it stored. */
async function readAsService(service: { user: string; password: string }, importId: string, target: Target) {
  const client = new pg.Client({
    ...target.address,
    ssl: false,
    user: service.user,
    password: service.password,
    connectionTimeoutMillis: 5_000,
  });
  await client.connect();
  try {
    const schema = new ImportDatabase({ ...target.address, user: '', password: '' }).schemas(
      importId,
    ).published;
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(schema)}.sites`,
    );
    return rows[0] as { n: number };
  } finally {
    await client.end();
  }
}

function rotationSuite(target: () => Target): void {
  beforeEach(() => {
    vi.stubEnv('IMPORT_DATABASE', JSON.stringify(target().address));
    vi.stubEnv('IMPORT_DATABASE_SECRET_ARN', SECRET_ARN);
    forgetLogins();
  });

  it('reads the secret again when the rotated loader is refused, and published imports keep reading', async () => {
    // Prepare: one import published with the first password; its service's password is stored.
    const engine = new PostgisImportEngine();
    const first = randomUUID();
    await importAndPublish(first);
    const firstService = await engine.servingConnection(first);
    expect(await readAsService(firstService, first, target())).toEqual({ n: 5 });
    const readsBefore = secrets.reads;

    // Act: the loader's password is rotated (database, then the secret's AWSCURRENT) while the
    // function keeps the old one cached; the next import runs, and the first one's publish is retried.
    const rotated = randomBytes(18).toString('base64url');
    await target().admin.query(
      `ALTER ROLE ${pg.escapeIdentifier(target().loader)} PASSWORD ${pg.escapeLiteral(rotated)}`,
    );
    secrets.current = { ...secrets.current, password: rotated };
    // The connection the last session left open has closed (its time is up, or the function was
    // replaced): the next session logs in with the password it has.
    await closeKeptConnections();
    const second = randomUUID();
    await importAndPublish(second);
    const secondService = await engine.servingConnection(second);
    await engine.publishTables({ id: first, plan } as ImportJob & { plan: ImportPlan });

    // Assess: one refused login, one fresh read of the secret, and every import still reads.
    expect(secrets.reads).toBe(readsBefore + 1);
    expect(await readAsService(secondService, second, target())).toEqual({ n: 5 });
    expect(await readAsService(firstService, first, target())).toEqual({ n: 5 });
    expect(await engine.servingConnection(first)).toEqual(firstService);
    await withDatabase((db) => db.dropAll(first));
    await withDatabase((db) => db.dropAll(second));
  });

  it('surfaces a loader the database keeps refusing as the import database being unavailable, after one re-read', async () => {
    // Prepare: the secret names a password the database never had.
    secrets.current = { ...secrets.current, password: 'not-the-password' };
    const readsBefore = secrets.reads;

    // Act + Assess
    await expect(withDatabase((db) => db.importRelations())).rejects.toMatchObject({
      name: 'UnavailableError',
      reason: 'import_database_unavailable',
    });
    expect(secrets.reads).toBe(readsBefore + 2);
  });
}

describe('import database secret rotation on the embedded PostGIS', () => {
  let dataDir: string;
  let pgis: EmbeddedPostgis;
  let target: Target;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'geoplane-rotation-'));
    pgis = await startEmbeddedPostgis({ dataDir, port: 0, onProgress: () => {} });
    const base = { host: pgis.host, port: pgis.port, database: pgis.database };
    const admin = new pg.Pool({ ...base, user: pgis.admin.user, password: pgis.admin.password, max: 1 });
    // An idle connection the server ends is the pool's error event: never an uncaught exception.
    admin.on('error', () => {});
    target = { address: { ...base, sslmode: 'disable' }, loader: pgis.importer.user, admin };
    secrets.current = {
      username: pgis.importer.user,
      password: pgis.importer.password,
      reader_key: randomBytes(32).toString('base64url'),
    };
  }, 180_000);

  afterAll(async () => {
    await target?.admin.end();
    await pgis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  rotationSuite(() => target);
});

const url = REAL_POSTGRES_URL;
if (!url) console.warn(`import secret rotation: ${REAL_POSTGRES_SKIP_REASON}`);

describe.skipIf(!url)(
  'import database secret rotation on a real PostgreSQL (GEOPLANE_TEST_POSTGRES_URL)',
  () => {
    let real: Awaited<ReturnType<typeof startRealPostgis>> | undefined;
    let target: Target;
    const suffix = randomBytes(4).toString('hex');
    const loader = { user: `geoplane_rotation_${suffix}`, password: randomBytes(18).toString('base64url') };
    const roles: ImportRoleNames = {
      readers: `geoplane_rotation_readers_${suffix}`,
      roleAdmin: `geoplane_rotation_role_admin_${suffix}`,
    };

    beforeAll(async () => {
      real = await startRealPostgis(url as string);
      await real.admin.query(importRolesSql(loader, roles));
      target = {
        address: {
          host: real.superuser.host,
          port: real.superuser.port,
          database: real.superuser.database,
          sslmode: 'prefer',
        },
        loader: loader.user,
        admin: real.admin,
      };
      secrets.current = {
        username: loader.user,
        password: loader.password,
        reader_key: randomBytes(32).toString('base64url'),
      };
    }, 60_000);

    afterAll(async () => {
      await real?.stop();
      await dropImportRoles(url as string, roles, loader.user);
    });

    rotationSuite(() => target);
  },
);
