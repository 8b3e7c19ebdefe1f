import { DomainError } from '../domain/errors.ts';
import type { ServiceGateway } from '../domain/services.ts';
import { connectionTargets } from './network-policy.ts';
import { checkIdColumn, describeSql, discoverLayers, probeLayer, testConnection } from './postgis.ts';
import { checkSql } from './sql-guard.ts';

/**
 * The PostGIS data source gateway (the same `pg` code locally and against RDS/Aurora). Every
 * connection it opens goes to an address the network policy checked (ADR 0074).
 */
export const postgisGateway: ServiceGateway = {
  testConnection,
  discoverLayers,
  probeLayer: (c, sourceLayer) => probeLayer(c, sourceLayer),
  describeSql,
  checkIdColumn,
  guardSql: checkSql,
  async checkTarget(host, port) {
    try {
      await connectionTargets().check(host, port);
    } catch (error) {
      // Only a refusal is a verdict; a name that does not resolve now is checked again on connecting.
      if (error instanceof DomainError) throw error;
    }
  },
};
