import { type ErrorReason, InvalidInputError } from './errors.ts';
import { lastWriterWins } from './last-writer-wins.ts';
import {
  isBuiltInTileMatrixSet,
  summaryOf,
  type TileMatrixSetRepository,
  type TileMatrixSetSummary,
  tileMatrixSetsNamed,
} from './tile-matrix-sets.ts';
import { checkVersion } from './workspaces.ts';

/** WMS extensions a workspace may switch on. */
export const wmsExtensions = [
  'dynamic-raster',
  'advanced-labels',
  'rendering-transformations',
  'compositing',
  'z-order',
  'dynamic-style',
  'remote-graphics',
] as const;

/** Server ceilings workspace limits may not exceed (ADR 0050). */
export const ceilings = {
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
  /** The peer's WFS MaxFeatures; paging and counting as OGC API Features and a request's budget (ADR 0133). */
  wfs: { max_features: 10_000, default_count: 10_000, max_offset: 1_000_000, count_timeout_ms: 10_000 },
  /** What one Lambda request could hold: a WMS image's cells, the gateway's payload, /tmp (ADR 0133). */
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

export const MVT = 'application/vnd.mapbox-vector-tile';
export const mapTileFormats = ['image/png', 'image/jpeg', 'image/webp'] as const;

export interface WMSSettings {
  enabled: boolean;
  public: boolean;
  title?: string;
  abstract?: string;
  default_style?: string;
  max_width?: number;
  max_height?: number;
  max_pixels?: number;
  max_render_features?: number;
  max_render_vertices?: number;
  simplify_enabled?: boolean;
  simplify_pixel_tolerance?: number;
  extensions?: string[];
}

export interface OGCAPISettings {
  enabled: boolean;
  public: boolean;
  title?: string;
  abstract?: string;
  limit_default?: number;
  limit_max?: number;
  max_offset?: number;
}

export interface OGCTilesSettings {
  enabled: boolean;
  public: boolean;
  title?: string;
  abstract?: string;
  versions: string[];
  settings: {
    tile_matrix_sets: string[];
    vector_tiles: { enabled: boolean; formats?: string[] };
    map_tiles: { enabled: boolean; formats?: string[] };
    cache_enabled: boolean;
    max_features?: number;
    max_vertices?: number;
    max_tile_bytes?: number;
    persistent_cache_quota_bytes?: number;
  };
}

/** WFS settings (ADR 0133): stored and validated; the data plane does not serve WFS yet. */
export interface WFSSettings {
  enabled: boolean;
  public: boolean;
  title?: string;
  abstract?: string;
  max_features?: number;
  default_count?: number;
  max_offset?: number;
  count_timeout_ms?: number;
}

/** WCS settings (ADR 0133): stored and validated; the data plane does not serve WCS yet. */
export interface WCSSettings {
  enabled: boolean;
  public: boolean;
  title?: string;
  abstract?: string;
  max_cells?: number;
  max_output_bytes?: number;
  processing_timeout_ms?: number;
  max_dimensions?: number;
  max_axis_values?: number;
  max_source_granules?: number;
  max_temporary_bytes?: number;
  extensions?: string[];
  output_formats?: string[];
  interpolation_methods?: string[];
  allowed_subsetting_crs?: string[];
  allowed_output_crs?: string[];
}

/**
 * WMTS settings (ADR 0133): stored and validated; the data plane does not serve WMTS yet. Its tile
 * matrix sets and formats would be the OGC API Tiles settings' (as the peer's are), not a second list.
 */
export interface WMTSSettings {
  enabled: boolean;
  public: boolean;
  title?: string;
  abstract?: string;
  feature_info_enabled: boolean;
  vector_tiles_enabled?: boolean;
  provider_name?: string;
  provider_site?: string;
  contact_name?: string;
  contact_position?: string;
  contact_email?: string;
}

/** The settings documents by kind (also their key suffix). */
export interface SettingsKinds {
  wms: WMSSettings;
  ogcapi: OGCAPISettings;
  'ogc-tiles': OGCTilesSettings;
  wfs: WFSSettings;
  wcs: WCSSettings;
  wmts: WMTSSettings;
}
export type SettingsKind = keyof SettingsKinds;

/** A stored document with its version (0 while the workspace still has the defaults). */
export interface Versioned<T> {
  document: T;
  version: number;
}

/** What a fresh workspace has. */
export const defaultSettings: { readonly [K in SettingsKind]: SettingsKinds[K] } = {
  wms: { enabled: false, public: false },
  ogcapi: { enabled: true, public: false },
  'ogc-tiles': {
    enabled: false,
    public: false,
    versions: ['1.0.0'],
    settings: {
      tile_matrix_sets: ['WebMercatorQuad', 'WorldCRS84Quad'],
      vector_tiles: { enabled: true, formats: [MVT] },
      map_tiles: { enabled: true, formats: [...mapTileFormats] },
      cache_enabled: true,
    },
  },
  wfs: { enabled: false, public: false },
  wcs: { enabled: false, public: false },
  wmts: { enabled: false, public: false, feature_info_enabled: true },
};

/** Storage port of workspace settings. */
export interface SettingsRepository {
  find<K extends SettingsKind>(
    workspaceId: string,
    kind: K,
  ): Promise<Versioned<SettingsKinds[K]> | undefined>;
  /**
   * Writes `next` conditioned on `previousVersion` (0: none stored) and on an active workspace.
   * For tiles settings it moves the custom tile matrix set references in the same transaction.
   */
  save<K extends SettingsKind>(
    workspaceId: string,
    kind: K,
    next: Versioned<SettingsKinds[K]>,
    previous: Versioned<SettingsKinds[K]>,
  ): Promise<void>;
  /** The ids among `ids` that are not stored custom tile matrix sets. */
  missingTileMatrixSets(ids: string[]): Promise<string[]>;
}

/** Ports of the settings use cases. */
export interface SettingsDeps {
  settings: SettingsRepository;
}

/** What a settings use case is asked: one kind of document of a workspace. */
export interface SettingsCommand<K extends SettingsKind> {
  workspaceId: string;
  kind: K;
}

/** Reads a settings document; a workspace that never saved one gets the defaults at version 0. */
export async function getSettings<K extends SettingsKind>(
  { settings: repo }: SettingsDeps,
  { workspaceId, kind }: SettingsCommand<K>,
): Promise<Versioned<SettingsKinds[K]>> {
  return (
    (await repo.find(workspaceId, kind)) ?? { document: structuredClone(defaultSettings[kind]), version: 0 }
  );
}

function duplicates(values: readonly string[]): string[] {
  return values.filter((v, i) => values.indexOf(v) !== i);
}

function invalid(reason: ErrorReason, detail: string): never {
  throw new InvalidInputError(reason, detail);
}

function checkCeilings(doc: object, limits: Record<string, number>, what: string): void {
  for (const [field, ceiling] of Object.entries(limits)) {
    const value: unknown = Reflect.get(doc, field);
    if (typeof value === 'number' && value > ceiling) {
      invalid('limit_exceeds_ceiling', `${what}.${field} is ${value}; the server ceiling is ${ceiling}.`);
    }
  }
}

/** Rules beyond the schema (a WMTS document has none); throws InvalidInputError (400). */
export function validateSettings<K extends SettingsKind>(kind: K, doc: SettingsKinds[K]): void {
  if (kind === 'wms') {
    const wms = doc as WMSSettings;
    checkCeilings(wms, ceilings.wms, 'wms');
    const twice = duplicates(wms.extensions ?? []);
    if (twice.length) invalid('duplicate_extension', `WMS extension '${twice[0]}' is listed twice.`);
  } else if (kind === 'ogcapi') {
    const api = doc as OGCAPISettings;
    checkCeilings(api, ceilings.ogcapi, 'ogcapi');
    if (api.limit_default !== undefined && api.limit_max !== undefined && api.limit_default > api.limit_max) {
      invalid(
        'limit_default_above_max',
        `limit_default (${api.limit_default}) exceeds limit_max (${api.limit_max}).`,
      );
    }
  } else if (kind === 'wfs') {
    const wfs = doc as WFSSettings;
    checkCeilings(wfs, ceilings.wfs, 'wfs');
    if (
      wfs.default_count !== undefined &&
      wfs.max_features !== undefined &&
      wfs.default_count > wfs.max_features
    ) {
      invalid(
        'default_count_above_max',
        `default_count (${wfs.default_count}) exceeds max_features (${wfs.max_features}).`,
      );
    }
  } else if (kind === 'wcs') {
    const wcs = doc as WCSSettings;
    checkCeilings(wcs, ceilings.wcs, 'wcs');
    for (const field of [
      'extensions',
      'output_formats',
      'interpolation_methods',
      'allowed_subsetting_crs',
      'allowed_output_crs',
    ] as const) {
      const twice = duplicates(wcs[field] ?? []);
      if (twice.length) invalid('duplicate_value', `${field}: '${twice[0]}' is listed twice.`);
    }
  } else if (kind === 'ogc-tiles') {
    const tiles = doc as OGCTilesSettings;
    const s = tiles.settings;
    checkCeilings(s, ceilings.tiles, 'settings');
    for (const [field, list] of [
      ['versions', tiles.versions],
      ['settings.tile_matrix_sets', s.tile_matrix_sets],
      ['settings.vector_tiles.formats', s.vector_tiles.formats ?? []],
      ['settings.map_tiles.formats', s.map_tiles.formats ?? []],
    ] as const) {
      const twice = duplicates(list);
      if (twice.length) invalid('duplicate_value', `${field}: '${twice[0]}' is listed twice.`);
    }
    if (s.map_tiles.enabled && (s.map_tiles.formats?.length ?? 0) === 0) {
      invalid(
        'map_tile_formats_required',
        'settings.map_tiles.formats needs at least one format when map tiles are enabled.',
      );
    }
    if (s.vector_tiles.enabled && (s.vector_tiles.formats?.length ?? 0) === 0) {
      invalid(
        'vector_tile_formats_required',
        `settings.vector_tiles.formats must be ["${MVT}"] when vector tiles are enabled.`,
      );
    }
    if (tiles.enabled && s.tile_matrix_sets.length === 0) {
      invalid(
        'tile_matrix_sets_required',
        'settings.tile_matrix_sets needs at least one set when OGC API Tiles is enabled.',
      );
    }
  }
}

/** Custom (non built-in) tile matrix sets a tiles document names. */
export function customTileMatrixSets(doc: OGCTilesSettings): string[] {
  return [...new Set(doc.settings.tile_matrix_sets.filter((id) => !isBuiltInTileMatrixSet(id)))];
}

/**
 * Replaces a settings document (PUT): validated, honours If-Match (the version; "0" for defaults).
 * Without If-Match a concurrent writer is retried, so the last complete document wins (ADR 0075).
 */
export async function updateSettings<K extends SettingsKind>(
  { settings: repo }: SettingsDeps,
  {
    workspaceId,
    kind,
    body: doc,
    ifMatch,
  }: SettingsCommand<K> & { body: SettingsKinds[K]; ifMatch?: string },
): Promise<Versioned<SettingsKinds[K]>> {
  validateSettings(kind, doc);
  if (kind === 'ogc-tiles') {
    const missing = await repo.missingTileMatrixSets(customTileMatrixSets(doc as OGCTilesSettings));
    if (missing.length) {
      invalid('unknown_tile_matrix_set', `Tile matrix set '${missing[0]}' does not exist.`);
    }
  }
  return lastWriterWins(async () => {
    const previous = await getSettings({ settings: repo }, { workspaceId, kind });
    checkVersion(previous, ifMatch);
    const next = { document: doc, version: previous.version + 1 };
    await repo.save(workspaceId, kind, next, previous);
    return next;
  });
}

/**
 * The tile matrix sets a workspace's OGC API Tiles settings name (listWorkspaceTileMatrixSets, ADR
 * 0131), in their order, as listTileMatrixSets summarises them; the defaults' two built-ins for a
 * workspace that never saved its settings. `tiles_enabled` says whether Tiles serves them now.
 * Not paged: the settings name at most 16 sets.
 */
export async function listWorkspaceTileMatrixSets(
  deps: SettingsDeps & { tileMatrixSets: Pick<TileMatrixSetRepository, 'find'> },
  { workspaceId }: { workspaceId: string },
): Promise<{ tiles_enabled: boolean; tile_matrix_sets: TileMatrixSetSummary[] }> {
  const { document } = await getSettings(deps, { workspaceId, kind: 'ogc-tiles' });
  const sets = await tileMatrixSetsNamed(deps.tileMatrixSets, document.settings.tile_matrix_sets);
  return { tiles_enabled: document.enabled, tile_matrix_sets: sets.map(summaryOf) };
}
