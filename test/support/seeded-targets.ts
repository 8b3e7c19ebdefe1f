import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import type { PostgisConnection } from '#datasources/postgis.ts';
import { startEmbeddedPostgis } from '#infra/local/postgis.ts';
import { freePort } from './ports.ts';
import { REAL_POSTGRES_SKIP_REASON, REAL_POSTGRES_URL, startRealPostgis } from './real-postgres.ts';

/** A PostGIS target a suite reads through its demo login, seeded through its admin pool. */
export interface SeededTarget {
  kind: 'embedded' | 'postgresql';
  demo: PostgisConnection;
  admin: pg.Pool;
}

/** Seeds a target's tables, readable by `demoUser`. */
export type Seed = (admin: pg.Pool, demoUser: string) => Promise<void>;

/**
 * Declares `suite` on both PostGIS targets, each seeded by `seed`: the embedded PostGIS (a data
 * dir of its own) always, and Debian's PostgreSQL 15 + PostGIS 3 when GEOPLANE_TEST_POSTGRES_URL
 * is set (CI sets it). `realOnly` adds what only the real PostgreSQL can run (ST_AsMVT, …).
 */
export function onBothTargets(
  embeddedTitle: string,
  seed: Seed,
  suite: (target: () => SeededTarget) => void,
  realOnly?: (target: () => SeededTarget) => void,
): void {
  describe(embeddedTitle, () => {
    let dataDir: string | undefined;
    let stop: (() => Promise<void>) | undefined;
    let target: SeededTarget | undefined;
    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'geoplane-seeded-'));
      const pgis = await startEmbeddedPostgis({ dataDir, port: await freePort() });
      stop = () => pgis.stop();
      const admin = new pg.Pool({
        host: pgis.host,
        port: pgis.port,
        database: pgis.database,
        user: pgis.admin.user,
        password: pgis.admin.password,
        max: 2,
      });
      await seed(admin, pgis.user);
      const demo = {
        host: pgis.host,
        port: pgis.port,
        database: pgis.database,
        user: pgis.user,
        password: pgis.password,
      };
      target = { kind: 'embedded', demo, admin };
    }, 180_000);
    afterAll(async () => {
      await target?.admin.end();
      await stop?.();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });
    suite(() => target as SeededTarget);
  });

  const url = REAL_POSTGRES_URL;
  if (!url) console.warn(REAL_POSTGRES_SKIP_REASON);
  describe.skipIf(!url)('real PostgreSQL + PostGIS (GEOPLANE_TEST_POSTGRES_URL)', () => {
    let real: Awaited<ReturnType<typeof startRealPostgis>> | undefined;
    let target: SeededTarget | undefined;
    beforeAll(async () => {
      real = await startRealPostgis(url as string);
      await seed(real.admin, real.demo.user);
      target = { kind: 'postgresql', demo: real.demo, admin: real.admin };
    }, 60_000);
    afterAll(async () => {
      await real?.stop();
    });
    suite(() => target as SeededTarget);
    realOnly?.(() => target as SeededTarget);
  });
}
