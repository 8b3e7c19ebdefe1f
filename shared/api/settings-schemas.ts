/** Schemas of the workspace settings documents (WMS, OGC API Features, OGC API Tiles). */
import * as z from 'zod/mini';
import { TileMatrixSetId } from './tile-matrix-set-schemas.ts';

const Text = (max: number) => z.optional(z.string().check(z.maxLength(max)));
const Limit = z.optional(z.int().check(z.positive()));
const Public = z._default(z.boolean(), false);

export const WMSSettingsSchema = z
  .strictObject({
    enabled: z.boolean(),
    public: Public,
    title: Text(256),
    abstract: Text(4096),
    default_style: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
    max_width: Limit,
    max_height: Limit,
    max_pixels: Limit,
    max_render_features: Limit,
    max_render_vertices: Limit,
    simplify_enabled: z.optional(z.boolean()),
    simplify_pixel_tolerance: z.optional(z.number().check(z.minimum(0), z.maximum(100))),
    extensions: z.optional(
      z
        .array(
          z.enum([
            'dynamic-raster',
            'advanced-labels',
            'rendering-transformations',
            'compositing',
            'z-order',
            'dynamic-style',
            'remote-graphics',
          ]),
        )
        .check(z.maxLength(16)),
    ),
  })
  .check(z.meta({ id: 'WMSSettings' }));

export const OGCAPISettingsSchema = z
  .strictObject({
    enabled: z.boolean(),
    public: Public,
    title: Text(256),
    abstract: Text(4096),
    limit_default: Limit,
    limit_max: Limit,
    max_offset: Limit,
  })
  .check(z.meta({ id: 'OGCAPISettings' }));

const TileFormats = <T extends readonly [string, ...string[]]>(values: T) =>
  z.strictObject({
    enabled: z.boolean(),
    formats: z.optional(z.array(z.enum(values)).check(z.maxLength(8))),
  });

export const OGCTilesSettingsSchema = z
  .strictObject({
    enabled: z.boolean(),
    public: Public,
    title: Text(256),
    abstract: Text(4096),
    versions: z._default(z.array(z.enum(['1.0.0'])).check(z.minLength(1), z.maxLength(4)), ['1.0.0']),
    settings: z.strictObject({
      tile_matrix_sets: z.array(TileMatrixSetId).check(z.maxLength(16)),
      vector_tiles: TileFormats(['application/vnd.mapbox-vector-tile']),
      map_tiles: TileFormats(['image/png', 'image/jpeg', 'image/webp']),
      cache_enabled: z.boolean(),
      max_features: Limit,
      max_vertices: Limit,
      max_tile_bytes: Limit,
      persistent_cache_quota_bytes: Limit,
    }),
  })
  .check(z.meta({ id: 'OGCTilesSettings' }));
