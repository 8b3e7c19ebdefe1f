import { postgisLayerData } from '../datasources/layer-data.ts';
import { secretBox } from '../datasources/secret-box.ts';
import type { DataPlanePorts } from '../domain/data-plane.ts';
import { liveConnection } from '../domain/services.ts';
import { dynamoDataCatalog } from '../store/data-catalog.ts';

let ports: DataPlanePorts | undefined;

/** The data plane's ports (one per process): the catalog over the table, layer data over PostGIS. */
export function dataPlanePorts(): DataPlanePorts {
  ports ??= {
    catalog: dynamoDataCatalog(),
    data: postgisLayerData((service) => liveConnection(secretBox(), service)),
  };
  return ports;
}
