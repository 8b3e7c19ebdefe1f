/**
 * The server ceilings workspace limits may not exceed (ADR 0050, ADR 0133), as the API enforces
 * them (shared/domain/settings.ts `ceilings`; the console test compares the inputs' max with them).
 */
export const CEILINGS = {
  wms: {
    max_width: 4096,
    max_height: 4096,
    max_pixels: 4096 * 4096,
    max_render_features: 50_000,
    max_render_vertices: 5_000_000,
  },
  ogcapi: { limit_default: 10_000, limit_max: 10_000, max_offset: 1_000_000 },
  tiles: {
    max_features: 50_000,
    max_vertices: 5_000_000,
    max_tile_bytes: 10 * 1024 * 1024,
    persistent_cache_quota_bytes: 1024 ** 4,
  },
  wfs: { max_features: 10_000, default_count: 10_000, max_offset: 1_000_000, count_timeout_ms: 10_000 },
  wcs: {
    max_cells: 4096 * 4096,
    max_output_bytes: 10 * 1024 * 1024,
    processing_timeout_ms: 15_000,
    max_dimensions: 16,
    max_axis_values: 10_000,
    max_source_granules: 1_000,
    max_temporary_bytes: 512 * 1024 * 1024,
  },
} as const;
