/*
 * The data-source ports (the PostGIS gateway, the secret box). Kept apart from the raster readers
 * so a handler that reaches PostGIS doesn't bundle the GeoTIFF parser, and the other way round.
 */
export { postgisGateway } from '#datasources/gateway.ts';
export { secretBox } from '#datasources/secret-box.ts';

import { loadPg } from '#datasources/pg-driver.ts';
import { warmSqlParser } from '#datasources/sql-guard.ts';

/**
 * Called at init by a handler whose requests reach PostGIS (ADR 0100): the driver (a sidecar
 * loaded on first use otherwise) starts loading during the Lambda's init phase, beside the
 * handler's first DynamoDB reads, and with `sql` the SQL parser's WebAssembly too (the handlers
 * whose requests parse user SQL). A failure here surfaces at the first use, as before.
 */
export function preloadPostgis(options: { sql?: boolean } = {}): void {
  loadPg().catch(() => {});
  if (options.sql) warmSqlParser();
}
