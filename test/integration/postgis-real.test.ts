import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSlowSchema, postgisAdapterSuite } from '../support/postgis-suite.ts';
import {
  REAL_POSTGRES_SKIP_REASON,
  REAL_POSTGRES_URL,
  type RealPostgis,
  startRealPostgis,
} from '../support/real-postgres.ts';

// The adapter suite of postgis.test.ts against a real PostgreSQL 15 + PostGIS 3 (ADR 0076): a
// fresh database and demo role per run on the server of GEOPLANE_TEST_POSTGRES_URL.
const url = REAL_POSTGRES_URL;
const ci = process.env.CI === 'true' || process.env.CI === '1';
if (!url) console.warn(REAL_POSTGRES_SKIP_REASON);

if (!url && ci) {
  describe('real PostgreSQL + PostGIS target under CI', () => {
    it('has GEOPLANE_TEST_POSTGRES_URL (CI must run the suite against a real PostgreSQL)', () => {
      expect.fail(`${REAL_POSTGRES_SKIP_REASON}; CI=${process.env.CI} requires it`);
    });
  });
}

describe.skipIf(!url)('real PostgreSQL + PostGIS (GEOPLANE_TEST_POSTGRES_URL)', () => {
  let real: RealPostgis | undefined;

  beforeAll(async () => {
    real = await startRealPostgis(url as string);
    await addSlowSchema(real.admin, real.demo.user);
  }, 60_000);

  afterAll(async () => {
    await real?.stop();
  });

  postgisAdapterSuite(() => real as RealPostgis);
});
