import * as z from 'zod/mini';
import * as ex from '../examples.ts';
import {
  GranuleListQuery,
  HarvestInput,
  HarvestResultBody,
  MosaicBody,
  MosaicGranuleBody,
} from '../mosaic-schemas.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName } from '../schemas.ts';

const ServiceParams = z.strictObject({ workspace: IdOrName, service: IdOrName });
const GranuleParams = z.strictObject({
  workspace: IdOrName,
  service: IdOrName,
  granule: z.string().check(z.minLength(1), z.maxLength(128)),
});
const notMosaic = { description: 'the service is not a raster_mosaic' };

export const getMosaic = defineOperation({
  operationId: 'getMosaic',
  method: 'GET',
  path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic',
  handler: 'functions/mosaics/get-mosaic.ts',
  permission: 'read',
  summary: "Read a raster mosaic's active generation and granule count",
  tags: ['mosaics'],
  request: { params: ServiceParams },
  responses: {
    200: { description: 'the mosaic', schema: MosaicBody },
    404: { description: 'workspace or service not found' },
    422: notMosaic,
  },
  examples: {
    params: { workspace: 'roads-demo', service: 'ortho' },
    response: {
      workspace_id: ex.ids.workspace,
      service_id: ex.ids.mosaic,
      root_uri: 's3://imagery-bucket/ortho/',
      generation: 3,
      granule_count: 120,
      updated_at: ex.updated,
    },
  },
  data: ['GetItem'],
});

export const harvestMosaicGranules = defineOperation({
  operationId: 'harvestMosaicGranules',
  method: 'POST',
  path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest',
  handler: 'functions/mosaics/harvest-mosaic-granules.ts',
  permission: 'write',
  summary: 'Read GeoTIFF/COG headers under the root and add them as one new generation',
  description:
    '`uris` (paths relative to root_uri, or URIs inside it, optionally with `time`/`elevation`) or a glob `pattern` (default `**/*.{tif,tiff,TIF,TIFF}`). Sources already in the mosaic are skipped. The new granules (at most 90) become visible together as generation N+1; an unreadable source fails the harvest (422) and nothing changes.',
  tags: ['mosaics'],
  request: { params: ServiceParams, body: HarvestInput },
  responses: {
    200: { description: 'the harvest outcome', schema: HarvestResultBody },
    400: {
      description:
        'bad request: a source outside root_uri or with "..", both uris and pattern, more than 90 new sources',
    },
    404: { description: 'workspace or service not found' },
    422: { description: 'a source is missing or not a readable GeoTIFF, nothing matched, or not a mosaic' },
  },
  examples: {
    params: { workspace: 'roads-demo', service: 'ortho' },
    request: { uris: [{ uri: '2025/tile_0_0.tif', time: '2025-06-01T00:00:00Z' }] },
    response: { generation: 4, granule_count: 121, added: [ex.granule], skipped: [] },
  },
  data: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
  readsMosaicSources: true,
});

export const listMosaicGranules = defineOperation({
  operationId: 'listMosaicGranules',
  method: 'GET',
  path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules',
  handler: 'functions/mosaics/list-mosaic-granules.ts',
  permission: 'read',
  summary: 'List the granules of the active generation, a page at a time',
  description:
    '`bbox=minx,miny,maxx,maxy` keeps granules whose bbox intersects it; `time=<instant>` or `time=<start>/<end>` (`..` for open) keeps granules with a time inside. Default limit 100; a page may hold fewer items than the limit while `next_cursor` is present.',
  tags: ['mosaics'],
  request: { params: ServiceParams, query: GranuleListQuery },
  responses: {
    200: {
      description: 'a page of granules',
      schema: z
        .strictObject({
          generation: z.int(),
          granules: z.array(MosaicGranuleBody),
          next_cursor: z.optional(z.string()),
        })
        .check(z.meta({ id: 'MosaicGranuleList' })),
    },
    400: { description: 'bad bbox, time, limit or cursor' },
    404: { description: 'workspace or service not found' },
    422: notMosaic,
  },
  examples: {
    params: { workspace: 'roads-demo', service: 'ortho' },
    query: { bbox: '2600000,1200000,2602000,1202000', time: '2025-01-01T00:00:00Z/2025-12-31T23:59:59Z' },
    response: { generation: 3, granules: [ex.granule] },
  },
  data: ['GetItem', 'Query'],
});

export const getMosaicGranule = defineOperation({
  operationId: 'getMosaicGranule',
  method: 'GET',
  path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules/{granule}',
  handler: 'functions/mosaics/get-mosaic-granule.ts',
  permission: 'read',
  summary: 'Read a granule of the active generation',
  tags: ['mosaics'],
  request: { params: GranuleParams },
  responses: {
    200: { description: 'the granule', schema: MosaicGranuleBody },
    404: { description: 'workspace, service or granule (in the active generation) not found' },
    422: notMosaic,
  },
  examples: {
    params: { workspace: 'roads-demo', service: 'ortho', granule: ex.ids.granule },
    response: ex.granule,
  },
  data: ['GetItem'],
});

export const deleteMosaicGranule = defineOperation({
  operationId: 'deleteMosaicGranule',
  method: 'DELETE',
  path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules/{granule}',
  handler: 'functions/mosaics/delete-mosaic-granule.ts',
  permission: 'write',
  summary: 'Remove a granule by committing a new atomic generation of the mosaic',
  description:
    'Generation N+1 without the granule is committed in one transaction conditioned on N; other granules keep their ids.',
  tags: ['mosaics'],
  request: { params: GranuleParams },
  responses: {
    204: { description: 'removed' },
    404: { description: 'workspace, service or granule (in the active generation) not found' },
    422: {
      description: 'the mosaic must retain at least one granule, or the service is not a raster_mosaic',
    },
  },
  examples: { params: { workspace: 'roads-demo', service: 'ortho', granule: ex.ids.granule } },
  data: ['GetItem', 'UpdateItem', 'ConditionCheckItem'],
});
