/** Schemas of raster mosaics and their granules (ADR 0060). */
import * as z from 'zod/mini';
import { DateTime, PageCursor, pageLimit, Uuid } from './schemas.ts';

export const MosaicGranuleBody = z
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
  );

export const MosaicBody = z
  .strictObject({
    workspace_id: Uuid,
    service_id: Uuid,
    root_uri: z.string(),
    generation: z.int(),
    granule_count: z.int(),
    updated_at: z.optional(DateTime),
  })
  .check(z.meta({ id: 'Mosaic', description: "A raster mosaic's active generation." }));

const HarvestSource = z.union([
  z.string().check(z.minLength(1), z.maxLength(1024)),
  z.strictObject({
    uri: z.string().check(z.minLength(1), z.maxLength(1024)),
    time: z.optional(DateTime),
    elevation: z.optional(z.number()),
  }),
]);

export const HarvestInput = z.strictObject({
  uris: z.optional(z.array(HarvestSource).check(z.minLength(1), z.maxLength(90))),
  pattern: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
});

export const HarvestResultBody = z
  .strictObject({
    generation: z.int(),
    granule_count: z.int(),
    added: z.array(MosaicGranuleBody),
    skipped: z.array(z.string()),
  })
  .check(z.meta({ id: 'MosaicHarvest' }));

export const GranuleListQuery = z.strictObject({
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
});
