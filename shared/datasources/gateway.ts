import { importConfig } from '#config/env.ts';
import type { PostgisConnectionInfo } from '#domain/datasource.ts';
import { DomainError, InvalidInputError } from '#domain/errors.ts';
import { CONNECTION_LOGIN_RESERVED, type ServiceGateway } from '#domain/services.ts';
import { isForeignReaderLogin } from './imports/readers.ts';
import { connectionTargets } from './network-policy.ts';
import { testConnection } from './postgis.ts';
import { discoverLayers, probeLayer } from './postgis-discovery.ts';
import { checkIdColumn, describeSql } from './postgis-sql-views.ts';
import { checkSql } from './sql-guard.ts';

/**
 * The import database's own logins are never a service's (ADR 0105): not the loader (it owns
 * every workspace's staged data; its name is known where the host configures it, locally), and
 * not another import's reader login (only the service of that import reads as it). Names are
 * compared as PostgreSQL folds them, case-insensitively.
 */
function refuseReservedLogin(c: Pick<PostgisConnectionInfo, 'user' | 'schemas'>): void {
  const loader = importConfig().database?.user;
  const user = c.user.toLowerCase();
  if ((loader && user === loader.toLowerCase()) || isForeignReaderLogin(user, c.schemas)) {
    throw new InvalidInputError(
      CONNECTION_LOGIN_RESERVED,
      `The login '${c.user}' is reserved for GeoPlane's import database; a service can't connect as it.`,
    );
  }
}

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
  async checkTarget(connection) {
    refuseReservedLogin(connection);
    try {
      await connectionTargets().check(connection.host, connection.port);
    } catch (error) {
      // Only a refusal is a verdict; a name that does not resolve now is checked again on connecting.
      if (error instanceof DomainError) throw error;
    }
  },
};
