/*
 * The data-source ports (the PostGIS gateway, the secret box). Kept apart from the raster readers
 * so a handler that reaches PostGIS doesn't bundle the GeoTIFF parser, and the other way round.
 */
export { postgisGateway } from '../datasources/gateway.ts';
export { secretBox } from '../datasources/secret-box.ts';
/** For the handlers whose requests parse SQL: load the SQL parser during init (ADR 0100). */
export { warmSqlParser } from '../datasources/sql-guard.ts';
