/** Schemas of the workspace settings documents (WMS, WFS, WCS, WMTS, OGC API Features, OGC API Tiles). */
import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { mapTileFormats, wmsExtensions } from '#domain/settings.ts';
import { TileMatrixSetId } from './tile-matrix-set-schemas.ts';

const Text = (max: number) => z.optional(z.string().check(z.maxLength(max)));
const Limit = /* @__PURE__ */ shakable(() => z.optional(z.int().check(z.positive())));
const Public = /* @__PURE__ */ shakable(() => z._default(z.boolean(), false));

export const WMSSettingsSchema = /* @__PURE__ */ shakable(() =>
  z
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
      extensions: z.optional(z.array(z.enum(wmsExtensions)).check(z.maxLength(16))),
    })
    .check(z.meta({ id: 'WMSSettings' })),
);

export const OGCAPISettingsSchema = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      enabled: z.boolean(),
      public: Public,
      title: Text(256),
      abstract: Text(4096),
      limit_default: Limit,
      limit_max: Limit,
      max_offset: Limit,
    })
    .check(z.meta({ id: 'OGCAPISettings' })),
);

const TileFormats = <T extends readonly [string, ...string[]]>(values: T) =>
  z.strictObject({
    enabled: z.boolean(),
    formats: z.optional(z.array(z.enum(values)).check(z.maxLength(8))),
  });

export const OGCTilesSettingsSchema = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      enabled: z.boolean(),
      public: Public,
      title: Text(256),
      abstract: Text(4096),
      versions: z._default(z.array(z.enum(['1.0.0'])).check(z.minLength(1), z.maxLength(4)), ['1.0.0']),
      settings: z.strictObject({
        tile_matrix_sets: z.array(TileMatrixSetId).check(z.maxLength(16)),
        vector_tiles: TileFormats(['application/vnd.mapbox-vector-tile']),
        map_tiles: TileFormats(mapTileFormats),
        cache_enabled: z.boolean(),
        max_features: Limit,
        max_vertices: Limit,
        max_tile_bytes: Limit,
        persistent_cache_quota_bytes: Limit,
      }),
    })
    .check(z.meta({ id: 'OGCTilesSettings' })),
);

/*
 * WFS, WCS and WMTS (ADR 0133): stored, validated and returned; GeoPlane's data plane does not
 * serve these protocols yet, so no request reads them. Field names are the peer server's.
 */

export const WFSSettingsSchema = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      enabled: z.boolean(),
      public: Public,
      title: Text(256),
      abstract: Text(4096),
      max_features: Limit,
      default_count: Limit,
      max_offset: Limit,
      count_timeout_ms: Limit,
    })
    .check(z.meta({ id: 'WFSSettings' })),
);

/** A CRS as WCS names it: an OGC CRS URI, `EPSG:<code>` or `CRS:84`. */
const CrsName = /* @__PURE__ */ shakable(() =>
  z
    .string()
    .check(
      z.maxLength(256),
      z.regex(
        /^(https?:\/\/www\.opengis\.net\/def\/crs\/[A-Za-z0-9.-]+\/[A-Za-z0-9.-]+\/[A-Za-z0-9.-]+|EPSG:\d{1,6}|CRS:84)$/,
      ),
    ),
);
const CrsList = /* @__PURE__ */ shakable(() => z.optional(z.array(CrsName).check(z.maxLength(64))));
const ClosedList = <T extends readonly [string, ...string[]]>(values: T) =>
  z.optional(z.array(z.enum(values)).check(z.maxLength(values.length)));

export const WCSSettingsSchema = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      enabled: z.boolean(),
      public: Public,
      title: Text(256),
      abstract: Text(4096),
      max_cells: Limit,
      max_output_bytes: Limit,
      processing_timeout_ms: Limit,
      max_dimensions: Limit,
      max_axis_values: Limit,
      max_source_granules: Limit,
      max_temporary_bytes: Limit,
      extensions: ClosedList([
        'xml-post',
        'range-subsetting',
        'scaling',
        'crs',
        'interpolation',
        'multidimensional',
      ]),
      output_formats: ClosedList([
        'image/tiff',
        'application/gml+xml',
        'multipart/related',
        'application/netcdf',
        'image/jp2',
      ]),
      interpolation_methods: ClosedList(['nearest-neighbor', 'linear']),
      allowed_subsetting_crs: CrsList,
      allowed_output_crs: CrsList,
    })
    .check(z.meta({ id: 'WCSSettings' })),
);

const Contact = /* @__PURE__ */ shakable(() =>
  z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
);

export const WMTSSettingsSchema = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      enabled: z.boolean(),
      public: Public,
      title: Text(256),
      abstract: Text(4096),
      feature_info_enabled: z._default(z.boolean(), false),
      vector_tiles_enabled: z.optional(z.boolean()),
      provider_name: Contact,
      provider_site: z.optional(
        z.string().check(z.maxLength(2048), z.regex(/^https?:\/\/[^\s/?#]+([/?#]\S*)?$/)),
      ),
      contact_name: Contact,
      contact_position: Contact,
      contact_email: z.optional(z.email().check(z.maxLength(256))),
    })
    .check(z.meta({ id: 'WMTSSettings' })),
);
