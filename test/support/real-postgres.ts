import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { demoSeedSql, serviceRoleHardeningSql } from '#infra/local/postgis-seed.ts';
import type { PostgisTarget } from './postgis-suite.ts';

/** Where the PostGIS suite finds a real PostgreSQL + PostGIS (a superuser URL); `.ci/run` sets it. */
export const REAL_POSTGRES_URL = process.env.GEOPLANE_TEST_POSTGRES_URL;
export const REAL_POSTGRES_SKIP_REASON =
  'GEOPLANE_TEST_POSTGRES_URL not set: the real PostgreSQL + PostGIS target is skipped (bash .ci/run starts one; bash .ci/postgres.sh starts one by hand)';

/** A fresh database and demo role on a real PostgreSQL, seeded like the embedded PostGIS. */
export interface RealPostgis extends PostgisTarget {
  /** Drops the database (closing its connections) and the role. */
  stop(): Promise<void>;
}

/**
 * Creates a database and a login role with unique names (roles are cluster-global) on the server
 * of `url`, seeds them with the embedded PostGIS's demo data and hardening (ADR 0030, 0035) and
 * ANALYZEs, so ST_EstimatedExtent has statistics as on the embedded one.
 */
export async function startRealPostgis(url: string): Promise<RealPostgis> {
  const parsed = new URL(url);
  const server = {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
  const maintenanceDb = decodeURIComponent(parsed.pathname.slice(1)) || 'postgres';
  const suffix = `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const database = `geoplane_test_${suffix}`;
  const demoUser = `geoplane_demo_${suffix}`;
  const demoPassword = randomBytes(18).toString('base64url');
  const ident = pg.escapeIdentifier;

  const maintenance = async (sql: string) => {
    const client = new pg.Client({ ...server, database: maintenanceDb, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const stop = async () => {
    await admin?.end().catch(() => {});
    // FORCE: the adapter's pools may still hold idle connections to it.
    await maintenance(`DROP DATABASE IF EXISTS ${ident(database)} WITH (FORCE)`);
    await maintenance(`DROP ROLE IF EXISTS ${ident(demoUser)}`);
  };

  let admin: pg.Pool | undefined;
  await maintenance(`CREATE DATABASE ${ident(database)}`);
  try {
    admin = new pg.Pool({ ...server, database, max: 2 });
    // A connection the server ends while idle (the database dropped by another suite's teardown)
    // is the pool's error event: without a listener it is an uncaught exception.
    admin.on('error', () => {});
    await admin.query(
      `BEGIN;\n${demoSeedSql(demoUser, demoPassword)}\n${serviceRoleHardeningSql()}\nCOMMIT;`,
    );
    await admin.query('ANALYZE');
    return {
      kind: 'postgresql',
      demo: { host: server.host, port: server.port, database, user: demoUser, password: demoPassword },
      superuser: {
        host: server.host,
        port: server.port,
        database,
        user: server.user,
        password: server.password,
      },
      admin,
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}

/**
 * Drops what an import suite made on the real PostgreSQL at `url` (roles are cluster-wide, so they
 * outlive the suite's database): the import logins a failed test left in `readers`, then the
 * loader, the readers group and the role admin.
 */
export async function dropImportRoles(
  url: string,
  roles: { readers: string; roleAdmin: string },
  loader: string,
): Promise<void> {
  const server = new URL(url);
  const client = new pg.Client({
    host: server.hostname,
    port: Number(server.port || 5432),
    user: decodeURIComponent(server.username),
    password: decodeURIComponent(server.password),
    database: decodeURIComponent(server.pathname.slice(1)) || 'postgres',
  });
  await client.connect();
  try {
    const { rows } = await client.query<{ rolname: string }>(
      `SELECT r.rolname FROM pg_roles r JOIN pg_auth_members m ON m.member = r.oid
       JOIN pg_roles g ON g.oid = m.roleid WHERE g.rolname = $1`,
      [roles.readers],
    );
    for (const role of [...rows.map((r) => r.rolname), loader, roles.readers, roles.roleAdmin]) {
      await client.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
    }
  } finally {
    await client.end();
  }
}
