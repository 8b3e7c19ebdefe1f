import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { CACHE_TYPES } from '#domain/tile-cache.ts';
import { MAX_JOB_LAYERS, MAX_SEED_TILES, TILE_CACHE_JOB_TYPES } from '#domain/tile-cache-jobs.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, pageQuery } from '../schemas.ts';

/*
 * The caches and the persistent tile cache (ADR 0139, issue #26): the peer server's `cache` and
 * `tile-cache` operations with its paths and ids.
 */

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const JobId = /* @__PURE__ */ shakable(() =>
  z
    .string()
    .check(
      z.minLength(1),
      z.maxLength(64),
      z.meta({ description: 'The tile cache job id (as `id` in the job body; case-insensitive).' }),
    ),
);
const JobParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName, job: JobId }));
const CacheTypeParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    cacheType: z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(64),
        z.meta({ description: `The cache to clear: ${CACHE_TYPES.join(', ')}.` }),
      ),
  }),
);

const CacheType = /* @__PURE__ */ shakable(() => z.enum(CACHE_TYPES));
const Epochs = /* @__PURE__ */ shakable(() =>
  z.strictObject({ tiles: z.int(), descriptions: z.int(), connections: z.int() }),
);
const Status = /* @__PURE__ */ shakable(() =>
  z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
);
const Zoom = /* @__PURE__ */ shakable(() => z.int().check(z.minimum(0), z.maximum(24)));

const TileCacheJobBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z.string(),
      workspace_id: z.string(),
      type: z.enum(TILE_CACHE_JOB_TYPES),
      tile_matrix_set: z.literal('WebMercatorQuad'),
      layers: z
        .array(z.string())
        .check(z.meta({ description: 'public ids; empty: the whole workspace (truncate)' })),
      zoom_min: Zoom,
      zoom_max: Zoom,
      bbox: z.optional(z.array(z.number())),
      status: Status,
      cancel_requested: z.boolean(),
      tiles_total: z.optional(z.int()),
      tiles_done: z.int(),
      tiles_rendered: z.int(),
      tiles_skipped: z.int(),
      tiles_removed: z.int(),
      bytes_written: z.int(),
      bytes_removed: z.int(),
      error: z.optional(z.strictObject({ reason: z.string(), message: z.string() })),
      version: z.int(),
      created_at: z.string(),
      updated_at: z.string(),
      started_at: z.optional(z.string()),
      finished_at: z.optional(z.string()),
    })
    .check(z.meta({ id: 'TileCacheJob' })),
);

const CreateTileCacheJobInput = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      type: z.enum(TILE_CACHE_JOB_TYPES),
      layers: z.optional(
        z
          .array(z.string().check(z.minLength(1), z.maxLength(256)))
          .check(z.minLength(1), z.maxLength(MAX_JOB_LAYERS)),
      ),
      zoom_min: z.optional(Zoom),
      zoom_max: z.optional(Zoom),
      bbox: z.optional(z.array(z.number()).check(z.length(4))),
      tile_matrix_set: z.optional(z.string().check(z.maxLength(64))),
    })
    .check(z.meta({ id: 'CreateTileCacheJobInput' })),
);

const jobId = '019a6c1e-2f4b-7c3d-9e8f-0a1b2c3d4e5f';
const job = {
  id: jobId,
  workspace_id: ex.ids.workspace,
  type: 'seed' as const,
  tile_matrix_set: 'WebMercatorQuad' as const,
  layers: ['roads'],
  zoom_min: 0,
  zoom_max: 8,
  bbox: [5.9, 45.8, 10.5, 47.8],
  status: 'running' as const,
  cancel_requested: false,
  tiles_total: 120,
  tiles_done: 64,
  tiles_rendered: 60,
  tiles_skipped: 4,
  tiles_removed: 0,
  bytes_written: 183_220,
  bytes_removed: 0,
  version: 2,
  created_at: ex.created,
  updated_at: ex.updated,
  started_at: ex.created,
};
const { started_at: _s, ...unstarted } = job;
const queued = {
  ...unstarted,
  status: 'queued' as const,
  tiles_done: 0,
  tiles_rendered: 0,
  tiles_skipped: 0,
  bytes_written: 0,
  version: 1,
  updated_at: ex.created,
};
const jobNotFound = { description: 'workspace or tile cache job not found' };
const jobAccepted = (what: string) => ({
  description: what,
  schema: TileCacheJobBody,
  headers: { Location: 'URL of the tile cache job' },
});

export const getPersistentTileCacheStats = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getPersistentTileCacheStats',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/tile-cache/stats',
    handler: 'functions/tile-cache/get-persistent-tile-cache-stats.ts',
    permission: 'read',
    summary: "The workspace's persistent tile cache: tiles stored, bytes, quota, clear generation",
    description:
      "O(1): the counts are kept in the workspace's tile cache record as tiles are stored and removed (every generation counted, since what a change left behind occupies the store until a truncate job removes it). `store` says where tiles live (`s3` on AWS, `directory` locally, `none` when no store is configured); `cache_enabled` is the OGC API Tiles settings' switch.",
    tags: ['tile-cache'],
    request: { params: WorkspaceParams },
    responses: {
      200: {
        description: 'the statistics',
        schema: z
          .strictObject({
            workspace_id: z.string(),
            store: z.enum(['s3', 'directory', 'none']),
            cache_enabled: z.boolean(),
            generation: z.int(),
            entries: z.int(),
            bytes: z.int(),
            quota_bytes: z.optional(z.int()),
            cleared_at: z.optional(z.string()),
            running_job_id: z.optional(z.string()),
          })
          .check(z.meta({ id: 'TileCacheStats' })),
      },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: {
        workspace_id: ex.ids.workspace,
        store: 'directory',
        cache_enabled: true,
        generation: 2,
        entries: 5412,
        bytes: 48_211_009,
      },
    },
    data: ['GetItem', 'BatchGetItem'],
  }),
);

export const listTileCacheJobs = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listTileCacheJobs',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/tile-cache/jobs',
    handler: 'functions/tile-cache/list-tile-cache-jobs.ts',
    permission: 'read',
    summary: "List the workspace's tile cache jobs in the order they were created",
    tags: ['tile-cache'],
    request: { params: WorkspaceParams, query: pageQuery(100) },
    responses: {
      200: {
        description: 'a page of jobs',
        schema: z
          .strictObject({ jobs: z.array(TileCacheJobBody), next_cursor: z.optional(z.string()) })
          .check(z.meta({ id: 'TileCacheJobList' })),
      },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: { params: { workspace: 'roads-demo' }, response: { jobs: [job] } },
    data: ['Query'],
  }),
);

export const createTileCacheJob = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createTileCacheJob',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/tile-cache/jobs',
    handler: 'functions/tile-cache/create-tile-cache-job.ts',
    permission: 'manage',
    summary: 'Seed, reseed or truncate the persistent tile cache as a job (layers, zoom range, bbox)',
    description: `Answers 202 with the queued job and its Location. \`seed\` renders the tiles that are not stored yet, \`reseed\` renders every tile again, \`truncate\` removes stored tiles. \`layers\` are public ids (default: every enabled layer for seed/reseed; for truncate, the whole workspace including what deleted layers and earlier generations left). \`zoom_min\`/\`zoom_max\` (0–24; required for seed/reseed, default 0–24 for truncate) and \`bbox\` (CRS84 west,south,east,north) narrow it. Seed/reseed cover at most ${MAX_SEED_TILES} tiles (layers × tiles) and need the workspace's vector tiles and tile cache on. Tiles are rendered as the data plane renders them (same budget, same key), in chunks whose progress commits as they go: a stopped run resumes after the last chunk. One unfinished job per workspace (409 naming it).`,
    tags: ['tile-cache'],
    request: { params: WorkspaceParams, body: CreateTileCacheJobInput },
    responses: {
      202: jobAccepted('the job, queued'),
      400: { description: 'bad type, zoom range, bbox or layers, or more tiles than a job may cover' },
      404: { description: 'workspace or layer not found' },
      409: {
        description: 'a tile cache job of this workspace is not finished (reason tile_cache_job_running)',
      },
      422: { description: 'a named layer is disabled, no layer is served, or the tile cache is off' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: { type: 'seed', layers: ['roads'], zoom_min: 0, zoom_max: 8, bbox: [5.9, 45.8, 10.5, 47.8] },
      response: queued,
    },
    data: [
      'GetItem',
      'BatchGetItem',
      'Query',
      'PutItem',
      'UpdateItem',
      'DeleteItem',
      'ConditionCheckItem',
      'PutAuditRecord',
    ],
    starts: ['tileCache'],
  }),
);

export const getTileCacheJob = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getTileCacheJob',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/tile-cache/jobs/{job}',
    handler: 'functions/tile-cache/get-tile-cache-job.ts',
    permission: 'read',
    summary: 'Read a tile cache job: what it covers, its status and its counters',
    tags: ['tile-cache'],
    request: { params: JobParams },
    responses: { 200: { description: 'the job', schema: TileCacheJobBody }, 404: jobNotFound },
    examples: { params: { workspace: 'roads-demo', job: jobId }, response: job },
    data: ['GetItem'],
  }),
);

export const getTileCacheJobProgress = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getTileCacheJobProgress',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/tile-cache/jobs/{job}/progress',
    handler: 'functions/tile-cache/get-tile-cache-job-progress.ts',
    permission: 'read',
    summary: 'How far a tile cache job is: tiles done of total, percent, rate and time left',
    description:
      "Computed from the job's counters: `percent` only where the total is known (seed/reseed; a truncate counts the stored tiles it looked at), `eta_seconds` while such a job is unfinished.",
    tags: ['tile-cache'],
    request: { params: JobParams },
    responses: {
      200: {
        description: 'the progress',
        schema: z
          .strictObject({
            job_id: z.string(),
            type: z.enum(TILE_CACHE_JOB_TYPES),
            status: Status,
            cancel_requested: z.boolean(),
            tiles_done: z.int(),
            tiles_total: z.optional(z.int()),
            percent: z.optional(z.number()),
            tiles_per_second: z.optional(z.number()),
            eta_seconds: z.optional(z.int()),
            updated_at: z.string(),
          })
          .check(z.meta({ id: 'TileCacheJobProgress' })),
      },
      404: jobNotFound,
    },
    examples: {
      params: { workspace: 'roads-demo', job: jobId },
      response: {
        job_id: jobId,
        type: 'seed',
        status: 'succeeded',
        cancel_requested: false,
        tiles_done: 120,
        tiles_total: 120,
        percent: 100,
        tiles_per_second: 21.3,
        updated_at: ex.updated,
      },
    },
    data: ['GetItem'],
  }),
);

export const cancelTileCacheJob = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'cancelTileCacheJob',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/tile-cache/jobs/{job}',
    handler: 'functions/tile-cache/cancel-tile-cache-job.ts',
    permission: 'manage',
    summary: 'Cancel a queued or running tile cache job; what it already did stays',
    description:
      'Answers 202 with the job (`cancel_requested: true`); its next chunk ends it `cancelled`. Cancelling again answers the same; a finished job is a 409. With If-Match the job must still be at that version (it moves with the status, not with progress).',
    tags: ['tile-cache'],
    request: { params: JobParams },
    responses: {
      202: jobAccepted('the job, asked to stop'),
      404: jobNotFound,
      409: { description: 'the job is already finished (reason tile_cache_job_finished)' },
    },
    examples: {
      params: { workspace: 'roads-demo', job: jobId },
      response: { ...job, cancel_requested: true, version: 3 },
    },
    data: ['GetItem', 'UpdateItem', 'DeleteItem', 'PutAuditRecord'],
  }),
);

const cacheStats = {
  caches: [
    {
      type: 'tiles' as const,
      scope: 'persistent' as const,
      holds: 'vector tiles per layer (the persistent tile cache)',
      epoch: 1,
      cleared_at: ex.updated,
    },
    {
      type: 'descriptions' as const,
      scope: 'instance' as const,
      holds: "layer source descriptions (columns, SRID, key) read from each layer's database",
      ttl_seconds: 5,
      max_entries: 512,
      epoch: 0,
    },
    {
      type: 'connections' as const,
      scope: 'instance' as const,
      holds: 'opened service connection details (decrypted passwords), per data-plane instance',
      ttl_seconds: 300,
      max_entries: 256,
      epoch: 0,
    },
  ],
};

export const getCacheStats = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getCacheStats',
    method: 'GET',
    path: '/api/v1/cache/stats',
    handler: 'functions/tile-cache/get-cache-stats.ts',
    permission: 'global',
    summary: 'The caches: what each holds, its bounds, and when it was last cleared',
    description:
      "`tiles` is the persistent tile cache (per workspace: getPersistentTileCacheStats). `descriptions` and `connections` live in each data-plane instance's memory (Lambda instances on AWS), so their figures are their bounds, not a count no single instance could give; a clear moves the type's `epoch` and every instance drops that cache on its next request after reading it (within `effective_within_seconds`). super_admin only.",
    tags: ['tile-cache'],
    request: {},
    responses: {
      200: {
        description: 'the caches',
        schema: z
          .strictObject({
            caches: z.array(
              z.strictObject({
                type: CacheType,
                scope: z.enum(['persistent', 'instance']),
                holds: z.string(),
                ttl_seconds: z.optional(z.int()),
                max_entries: z.optional(z.int()),
                epoch: z.int(),
                cleared_at: z.optional(z.string()),
              }),
            ),
          })
          .check(z.meta({ id: 'CacheStats' })),
      },
    },
    examples: { response: cacheStats },
    data: ['GetItem'],
  }),
);

const ClearedBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ cleared: z.array(CacheType), epochs: Epochs, effective_within_seconds: z.int() })
    .check(z.meta({ id: 'CachesCleared' })),
);

export const clearAllCaches = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'clearAllCaches',
    method: 'POST',
    path: '/api/v1/cache/clear',
    handler: 'functions/tile-cache/clear-all-caches.ts',
    permission: 'global',
    summary: "Clear every cache: every workspace's tiles miss at once, every instance drops its caches",
    description:
      "Moves every cache type's epoch (audited; a `Cache Updated` event). Cached tiles carry the tiles epoch in their key, so every one misses from the next request on; what they occupy stays counted until a truncate job removes it. super_admin only.",
    tags: ['tile-cache'],
    request: {},
    responses: { 200: { description: 'what was cleared', schema: ClearedBody } },
    examples: {
      response: {
        cleared: [...CACHE_TYPES],
        epochs: { tiles: 2, descriptions: 1, connections: 1 },
        effective_within_seconds: 2,
      },
    },
    data: ['GetItem', 'UpdateItem', 'PutAuditRecord'],
  }),
);

export const clearCacheByType = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'clearCacheByType',
    method: 'POST',
    path: '/api/v1/cache/clear/{cacheType}',
    handler: 'functions/tile-cache/clear-cache-by-type.ts',
    permission: 'global',
    summary: 'Clear one cache type: tiles, descriptions or connections',
    description: `\`cacheType\` is one of ${CACHE_TYPES.join(', ')} (400 otherwise). As clearAllCaches, for that type only. super_admin only.`,
    tags: ['tile-cache'],
    request: { params: CacheTypeParams },
    responses: {
      200: { description: 'what was cleared', schema: ClearedBody },
      400: { description: 'not a cache type (reason invalid_cache_type)' },
    },
    examples: {
      params: { cacheType: 'descriptions' },
      response: {
        cleared: ['descriptions'],
        epochs: { tiles: 1, descriptions: 2, connections: 1 },
        effective_within_seconds: 2,
      },
    },
    data: ['GetItem', 'UpdateItem', 'PutAuditRecord'],
  }),
);

export const clearWorkspaceCache = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'clearWorkspaceCache',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/cache/clear',
    handler: 'functions/tile-cache/clear-workspace-cache.ts',
    permission: 'manage',
    summary: "Clear a workspace's caches: its tiles miss at once, instances drop what they hold of it",
    description:
      "Moves the workspace's tile cache generation (audited; a `Tile Cache Updated` event): its cached tiles carry it in their key, so every one misses from the next request on, and each data-plane instance drops its connection and description caches when it next serves the workspace. `stale_entries`/`stale_bytes` is what the earlier generations occupy: a truncate job of the whole workspace removes it.",
    tags: ['tile-cache'],
    request: { params: WorkspaceParams },
    responses: {
      200: {
        description: 'what was cleared',
        schema: z
          .strictObject({
            cleared: z.array(CacheType),
            generation: z.int(),
            effective_within_seconds: z.int(),
            stale_entries: z.int(),
            stale_bytes: z.int(),
          })
          .check(z.meta({ id: 'WorkspaceCacheCleared' })),
      },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: {
        cleared: [...CACHE_TYPES],
        generation: 3,
        effective_within_seconds: 2,
        stale_entries: 5412,
        stale_bytes: 48_211_009,
      },
    },
    data: ['GetItem', 'UpdateItem', 'ConditionCheckItem', 'PutAuditRecord'],
  }),
);
