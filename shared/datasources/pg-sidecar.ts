/*
 * The PostgreSQL driver's sidecar (ADR 0100): `pg` built as its own module beside the PostGIS
 * bundles (`infra/bundling.ts`), imported by `pg-driver.ts` on the first connection. Third-party
 * code only.
 */
import pg from 'pg';

export default pg;
