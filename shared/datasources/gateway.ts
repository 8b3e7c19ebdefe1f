import type { DataSourceGateway } from '../domain/datasource.ts';
import { checkIdColumn, describeSql, discoverLayers, probeLayer, testConnection } from './postgis.ts';
import { checkSql } from './sql-guard.ts';

/** The PostGIS data source gateway (the same `pg` code locally and against RDS/Aurora). */
export const postgisGateway: DataSourceGateway = {
  testConnection,
  discoverLayers,
  probeLayer: (c, sourceLayer) => probeLayer(c, sourceLayer),
  describeSql,
  checkIdColumn,
  guardSql: checkSql,
};
