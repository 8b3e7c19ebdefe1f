/** Schemas of raster mosaics and their granules (ADR 0060). */
import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { DateTime, PageCursor, pageLimit, Uuid } from './schemas.ts';

export const MosaicGranuleBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      workspace_id: Uuid,
      service_id: Uuid,
      source_uri: z.string(),
      crs: z.string(),
      srid: z.optional(z.int()),
      bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]),
      width: z.int(),
      height: z.int(),
      band_count: z.int(),
      data_type: z.string(),
      resolution_x: z.number(),
      resolution_y: z.number(),
      time: z.optional(DateTime),
      elevation: z.optional(z.number()),
      /** Always 1: a granule record never changes (its ETag for If-Match). */
      version: z.int(),
      created_at: DateTime,
    })
    .check(
      z.meta({
        id: 'MosaicGranule',
        description: 'One GeoTIFF/COG source of a mosaic; its id stays the same across generations.',
      }),
    ),
);

export const MosaicBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      workspace_id: Uuid,
      service_id: Uuid,
      root_uri: z.string(),
      generation: z.int(),
      granule_count: z.int(),
      updated_at: z.optional(DateTime),
    })
    .check(z.meta({ id: 'Mosaic', description: "A raster mosaic's active generation." })),
);

const HarvestSource = /* @__PURE__ */ shakable(() =>
  z.union([
    z.string().check(z.minLength(1), z.maxLength(1024)),
    z.strictObject({
      uri: z.string().check(z.minLength(1), z.maxLength(1024)),
      time: z.optional(DateTime),
      elevation: z.optional(z.number()),
    }),
  ]),
);

export const HarvestInput = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    uris: z.optional(z.array(HarvestSource).check(z.minLength(1), z.maxLength(90))),
    pattern: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  }),
);

export const HarvestResultBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      generation: z.int(),
      granule_count: z.int(),
      added: z.array(MosaicGranuleBody),
      skipped: z.array(z.string()),
    })
    .check(z.meta({ id: 'MosaicHarvest' })),
);

export const GranuleListQuery = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    limit: pageLimit(100),
    cursor: PageCursor,
    bbox: z.optional(z.string().check(z.maxLength(512))).check(
      z.meta({
        description:
          "Only granules whose `bbox` intersects `minx,miny,maxx,maxy` (same coordinates as the granules' `bbox`).",
      }),
    ),
    time: z
      .optional(z.string().check(z.maxLength(128)))
      .check(z.meta({ description: 'Only granules at this RFC 3339 instant, or overlapping `start/end`.' })),
  }),
);

export const HarvestJobStatusEnum = /* @__PURE__ */ shakable(() =>
  z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
);

export const CreateHarvestJobInput = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    pattern: z
      .optional(z.string().check(z.minLength(1), z.maxLength(256)))
      .check(
        z.meta({ description: 'Glob over paths relative to root_uri (default `**/*.{tif,tiff,TIF,TIFF}`).' }),
      ),
    remove_missing: z.optional(z.boolean()).check(
      z.meta({
        description:
          'After adding, remove the granules under the pattern whose file is gone (the mosaic keeps at least one).',
      }),
    ),
  }),
);

export const HarvestJobBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      workspace_id: Uuid,
      service_id: Uuid,
      status: HarvestJobStatusEnum,
      phase: z.enum(['adding', 'removing']),
      pattern: z.string(),
      remove_missing: z.boolean(),
      cancel_requested: z.boolean(),
      progress: z.strictObject({
        files_scanned: z.int(),
        files_total: z.optional(z.int()),
        granules_added: z.int(),
        granules_removed: z.int(),
        files_skipped: z.int(),
        files_failed: z.int(),
      }),
      failures: z.array(z.strictObject({ path: z.string(), reason: z.string(), message: z.string() })),
      generation: z.optional(z.int()),
      error: z.optional(z.strictObject({ reason: z.string(), message: z.string() })),
      version: z.int(),
      created_at: DateTime,
      updated_at: DateTime,
      started_at: z.optional(DateTime),
      finished_at: z.optional(DateTime),
    })
    .check(
      z.meta({
        id: 'MosaicHarvestJob',
        description:
          'A harvest of a mosaic root as a job (ADR 0136): status queued → running → succeeded | failed | cancelled, progress, the first failures with their reasons.',
      }),
    ),
);

export const HarvestJobList = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ jobs: z.array(HarvestJobBody), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'MosaicHarvestJobList' })),
);
