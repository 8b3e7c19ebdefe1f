import { postgisLayerData } from '../datasources/layer-data.ts';
import type { PostgisConnection } from '../datasources/postgis.ts';
import { secretBox } from '../datasources/secret-box.ts';
import type { DataPlanePorts } from '../domain/data-plane.ts';
import { liveConnection, type Service } from '../domain/services.ts';
import { dynamoDataCatalog } from '../store/data-catalog.ts';

/**
 * How long a service's opened connection details (its password decrypted) are reused: keyed by
 * the service's version, so a changed password is used at once; saves a KMS Decrypt per request.
 */
const CONNECTION_TTL_MS = 5 * 60_000;
const MAX_CONNECTIONS = 256;
const connections = new Map<string, { at: number; connection: Promise<PostgisConnection> }>();

function connect(service: Service): Promise<PostgisConnection> {
  const key = `${service.workspace_id}/${service.id}@${service.version}`;
  const kept = connections.get(key);
  if (kept && Date.now() - kept.at < CONNECTION_TTL_MS) return kept.connection;
  const connection = liveConnection(secretBox(), service);
  connections.delete(key);
  connections.set(key, { at: Date.now(), connection });
  if (connections.size > MAX_CONNECTIONS) connections.delete(connections.keys().next().value as string);
  connection.catch(() => {
    if (connections.get(key)?.connection === connection) connections.delete(key);
  });
  return connection;
}

let ports: DataPlanePorts | undefined;

/** The data plane's ports (one per process): the catalog over the table, layer data over PostGIS. */
export function dataPlanePorts(): DataPlanePorts {
  ports ??= {
    catalog: dynamoDataCatalog(),
    data: postgisLayerData(connect),
  };
  return ports;
}
