import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import * as ex from '../examples.ts';
import {
  CreateHarvestJobInput,
  GranuleListQuery,
  HarvestInput,
  HarvestJobBody,
  HarvestJobList,
  HarvestResultBody,
  MosaicBody,
  MosaicGranuleBody,
} from '../mosaic-schemas.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, pageQuery } from '../schemas.ts';

const ServiceParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, service: IdOrName }),
);
const GranuleParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    workspace: IdOrName,
    service: IdOrName,
    granule: z.string().check(z.minLength(1), z.maxLength(128)),
  }),
);
const notMosaic = { description: 'the service is not a raster_mosaic' };

export const getMosaic = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
  }),
);

export const harvestMosaicGranules = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'harvestMosaicGranules',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest',
    handler: 'functions/mosaics/harvest-mosaic-granules.ts',
    takesCarriedService: true,
    permission: 'write',
    summary: 'Read GeoTIFF/COG headers under the root and add them as one new generation',
    description:
      '`uris` (paths relative to root_uri, or URIs inside it, optionally with `time`/`elevation`) or a glob `pattern` (default `**/*.{tif,tiff,TIF,TIFF}`). Sources already in the mosaic are skipped. The new granules (at most 90) become visible together as generation N+1; an unreadable source fails the harvest (422) and nothing changes. For larger roots start a harvest job (createMosaicHarvestJob; ADR 0136).',
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
  }),
);

export const listMosaicGranules = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
  }),
);

export const getMosaicGranule = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
  }),
);

export const deleteMosaicGranule = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteMosaicGranule',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/granules/{granule}',
    handler: 'functions/mosaics/delete-mosaic-granule.ts',
    takesCarriedService: true,
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
  }),
);

const JobParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    workspace: IdOrName,
    service: IdOrName,
    job: z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(128),
        z.meta({ description: 'The harvest job id (as `id` in the job body; case-insensitive).' }),
      ),
  }),
);
const harvestJobId = '0195d3a0-7c4e-7b1a-9f2e-3c4d5e6f7a8b';
/** The example job: running, a third of the way through a root of 3,000 files. */
const harvestJob = {
  id: harvestJobId,
  workspace_id: ex.ids.workspace,
  service_id: ex.ids.mosaic,
  status: 'running',
  phase: 'adding',
  pattern: '**/*.tif',
  remove_missing: false,
  cancel_requested: false,
  progress: {
    files_scanned: 1000,
    files_total: 3000,
    granules_added: 989,
    granules_removed: 0,
    files_skipped: 10,
    files_failed: 1,
  },
  failures: [
    {
      path: '2025/broken.tif',
      reason: 'unreadable_source',
      message: "Source '2025/broken.tif' is not a readable GeoTIFF (invalid magic number).",
    },
  ],
  generation: 14,
  version: 2,
  created_at: ex.created,
  updated_at: ex.updated,
  started_at: ex.created,
};
const { generation: _g, started_at: _s, ...unstarted } = harvestJob;
const queuedJob = {
  ...unstarted,
  status: 'queued',
  progress: { files_scanned: 0, granules_added: 0, granules_removed: 0, files_skipped: 0, files_failed: 0 },
  failures: [],
  version: 1,
  updated_at: ex.created,
};
const jobNotFound = { description: 'workspace, service or harvest job not found' };
const jobAccepted = (what: string) => ({
  description: what,
  schema: HarvestJobBody,
  headers: { Location: 'URL of the harvest job' },
});

export const createMosaicHarvestJob = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createMosaicHarvestJob',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest-jobs',
    handler: 'functions/mosaics/create-mosaic-harvest-job.ts',
    takesCarriedService: true,
    permission: 'write',
    summary: 'Harvest every GeoTIFF/COG under the root as a job, in chunks, with progress',
    description:
      "Answers 202 with the queued job and its Location. A workflow scans the files matching `pattern` in name order, in chunks; each chunk adds its new granules (at most 90) as one new generation together with the job's cursor and counters, so a stopped run resumes after the last chunk and never adds a file twice. Files already in the mosaic are skipped; unreadable files are counted and the first 20 kept in `failures`. One unfinished job per mosaic (409 naming it).",
    tags: ['mosaics'],
    request: { params: ServiceParams, body: CreateHarvestJobInput },
    responses: {
      202: jobAccepted('the job, queued'),
      400: { description: 'bad pattern (absolute, "..", unclosed "{") or unknown field' },
      404: { description: 'workspace or service not found' },
      409: {
        description:
          'a harvest job of this mosaic is not finished yet (reason harvest_job_running, its job_id)',
      },
      422: notMosaic,
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'ortho' },
      request: { pattern: '**/*.tif' },
      response: queuedJob,
    },
    data: ['GetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
    starts: ['harvest'],
  }),
);

export const listMosaicHarvestJobs = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listMosaicHarvestJobs',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest-jobs',
    handler: 'functions/mosaics/list-mosaic-harvest-jobs.ts',
    permission: 'read',
    summary: "List a mosaic's harvest jobs in the order they were created",
    tags: ['mosaics'],
    request: { params: ServiceParams, query: pageQuery(100) },
    responses: {
      200: { description: 'a page of jobs', schema: HarvestJobList },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace or service not found' },
      422: notMosaic,
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'ortho' },
      response: { jobs: [harvestJob] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const getMosaicHarvestJob = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getMosaicHarvestJob',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest-jobs/{job}',
    handler: 'functions/mosaics/get-mosaic-harvest-job.ts',
    permission: 'read',
    summary: 'Read a harvest job: status and progress (files scanned, granules added and removed)',
    tags: ['mosaics'],
    request: { params: JobParams },
    responses: {
      200: { description: 'the job', schema: HarvestJobBody },
      404: jobNotFound,
      422: notMosaic,
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'ortho', job: harvestJobId },
      response: harvestJob,
    },
    data: ['GetItem'],
  }),
);

export const cancelMosaicHarvestJob = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'cancelMosaicHarvestJob',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/services/{service}/mosaic/harvest-jobs/{job}',
    handler: 'functions/mosaics/cancel-mosaic-harvest-job.ts',
    takesCarriedService: true,
    permission: 'write',
    summary: 'Cancel a queued or running harvest job; the granules it already added stay',
    description:
      'Answers 202 with the job (`cancel_requested: true`); its next chunk ends it `cancelled` with the progress it had. Cancelling again answers the same; a finished job is a 409.',
    tags: ['mosaics'],
    request: { params: JobParams },
    responses: {
      202: jobAccepted('the job, asked to stop'),
      404: jobNotFound,
      409: { description: 'the job is already finished (reason harvest_job_finished)' },
      422: notMosaic,
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'ortho', job: harvestJobId },
      response: { ...harvestJob, cancel_requested: true, version: 3 },
    },
    data: ['GetItem', 'UpdateItem'],
  }),
);
