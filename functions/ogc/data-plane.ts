import { dataOpenApi } from '#api/data-openapi.ts';
import { dataRoutes } from '#api/data-routes.ts';
import * as plane from '#domain/data-plane.ts';
import { type DataOperationFn, makeDataHandler } from '#http/make-data-handler.ts';
import { accessPorts } from '#wiring/access.ts';
import { dataPlanePorts } from '#wiring/data-plane.ts';
import { preloadPostgis } from '#wiring/datasources.ts';

// Items and tiles come from PostGIS, and a SQL layer's parse its SQL: both load during init.
preloadPostgis({ sql: true });

const ports = dataPlanePorts;

/** Every operation of the data route table: one use-case call each (ADR 0123). */
const operations: Record<string, DataOperationFn> = {
  getDataLanding: (r) => plane.dataLanding(ports(), r),
  getDataConformance: (r) => plane.dataConformance(ports(), r),
  getDataApi: (r) =>
    plane.dataApi(ports(), r, dataOpenApi(dataRoutes, r.links.root, `OGC API of '${r.workspace.name}'`)),
  listDataCollections: (r) => plane.dataCollections(ports(), r),
  getDataCollection: (r, p) => plane.dataCollection(ports(), r, p.collectionId as string),
  getDataQueryables: (r, p) => plane.dataQueryables(ports(), r, p.collectionId as string),
  getDataItems: (r, p) => plane.dataItems(ports(), r, p.collectionId as string),
  getDataItem: (r, p) => plane.dataItem(ports(), r, p.collectionId as string, p.featureId as string),
  listDataTileMatrixSets: (r) => plane.dataTileMatrixSets(ports(), r),
  getDataTileMatrixSet: (r, p) => plane.dataTileMatrixSet(ports(), r, p.tileMatrixSetId as string),
  listDataTilesets: (r) => plane.datasetTilesets(ports(), r),
  getDataTileset: (r, p) => plane.datasetTileset(ports(), r, p.tileMatrixSetId as string),
  getDataTile: (r, p) => plane.datasetTile(ports(), r, p.tileMatrixSetId as string, tileAddress(p)),
  listCollectionTilesets: (r, p) => plane.collectionTilesets(ports(), r, p.collectionId as string),
  getCollectionTileset: (r, p) =>
    plane.collectionTileset(ports(), r, p.collectionId as string, p.tileMatrixSetId as string),
  getCollectionTile: (r, p) =>
    plane.collectionTile(ports(), r, p.collectionId as string, p.tileMatrixSetId as string, tileAddress(p)),
  listDataStyles: (r) => plane.dataStyles(ports(), r),
  getDataStyle: (r, p) => plane.dataStyle(ports(), r, p.styleId as string),
};

/** OGC API Tiles' `{tileMatrix}/{tileRow}/{tileCol}` as z/y/x. */
function tileAddress(p: Record<string, string>) {
  return { z: p.tileMatrix as string, y: p.tileRow as string, x: p.tileCol as string };
}

/** The data plane: every entry of the data route table (DESIGN §8a). */
export const handler = makeDataHandler(dataRoutes, operations, accessPorts);
