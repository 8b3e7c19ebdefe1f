/**
 * What an import finds in a file and how it is loaded: the types the domain, the format readers
 * and the import database share (ADR 0083). Pure types and small pure helpers only.
 */
import type { JobFailureReason } from './error-reasons.ts';

/** Formats the importer reads; the type is sniffed from the bytes, not taken from the name. */
export type ImportFormat = 'geojson' | 'geojsonseq' | 'csv' | 'shapefile' | 'geopackage' | 'flatgeobuf';

/** Column types a source field maps to (PostgreSQL types of the staged column). */
export type FieldType =
  | 'text'
  | 'integer'
  | 'bigint'
  | 'double precision'
  | 'boolean'
  | 'date'
  | 'timestamptz'
  | 'jsonb';

export const FIELD_TYPES: readonly FieldType[] = [
  'text',
  'integer',
  'bigint',
  'double precision',
  'boolean',
  'date',
  'timestamptz',
  'jsonb',
];

/** Geometry types of a layer, as PostGIS spells them in a typmod (`geometry(MultiPolygon, 4326)`). */
export type GeometryType =
  | 'Point'
  | 'MultiPoint'
  | 'LineString'
  | 'MultiLineString'
  | 'Polygon'
  | 'MultiPolygon'
  | 'GeometryCollection';

/** A field of a source layer. */
export interface SourceField {
  /** The name in the file (verbatim). */
  name: string;
  type: FieldType;
}

/** CSV geometry columns: lat/lon or a WKT column (detected; overridable in the plan). */
export interface CsvGeometry {
  lat?: string;
  lon?: string;
  wkt?: string;
}

/** One layer of a file as discovery found it (a full pass over the file). */
export interface SourceLayer {
  name: string;
  fields: SourceField[];
  /** The single geometry type, promoted to Multi* when singles and multis mix; null = no geometry. */
  geometry_type: GeometryType | null;
  /** The CRS of the coordinates; null = unknown (the plan must give `source_srid`). */
  srid: number | null;
  feature_count: number;
  /** [min_x, min_y, max_x, max_y] of all geometries, null when none. */
  bbox: [number, number, number, number] | null;
  /** CSV only: which columns carry the geometry. */
  csv?: CsvGeometry;
  /**
   * Internal (not presented): set when every geometry is exactly `geometry_type` and all are 2D
   * or all 3D as the loader will write them (the GeoJSON readers, CSV's lon/lat points). The staging table's geometry
   * column then takes its final typmod up front, and the finalize rewrites nothing (ADR 0143).
   */
  geometry_dims?: 2 | 3;
  /**
   * Internal (not presented): set when the loader writes the geometries itself and every one was
   * certainly valid as discovery read it (formats/validity.ts): the finalize skips its validity
   * scan (ADR 0143).
   */
  geometry_valid?: true;
}

/** What discovery reports. */
export interface Discovery {
  format: ImportFormat;
  /** Bytes of the source file. */
  size_bytes: number;
  layers: SourceLayer[];
  warnings: string[];
}

/**
 * A geometry as a reader yields it: a GeoJSON geometry object, (ISO/OGC) WKB bytes, or WKT text.
 * The import database turns any of them into the staged column.
 */
export type SourceGeometry =
  | { type: string; coordinates?: unknown; geometries?: unknown }
  | { wkb: Uint8Array }
  | { wkt: string };

/** One feature as a reader yields it. */
export interface SourceFeature {
  properties: Record<string, unknown>;
  geometry: SourceGeometry | null;
  /**
   * Where the next feature's bytes begin in the file, from readers that can resume there (ADR
   * 0143): a load's checkpoint keeps it, and the next run reads on from it instead of re-reading
   * the features before.
   */
  end?: number;
  /**
   * With `end`: the lines before `end` as the reader numbers them (line-based readers: NDJSON, CSV),
   * kept beside it so a resumed read numbers its lines on from there without counting them again.
   */
  lines?: number;
}

/**
 * An existing layer whose data a plan layer replaces or appends to (ADR 0127): `layer` is its id
 * (a plan as stored) or public id (as given).
 */
export interface LayerTarget {
  layer: string;
  mode: 'replace' | 'append';
}

/** How one source layer is loaded and published (setImportPlan; the default comes from discovery). */
export interface LayerPlan {
  source_layer: string;
  /** Layer public id; also the table name (lower-cased, sanitised) in the import's schema. */
  public_id: string;
  title?: string;
  enabled: boolean;
  public: boolean;
  allowed_roles?: string[];
  fields: { source: string; target: string; type?: FieldType; include: boolean }[];
  /** The geometry column's name in the table (default `geom`). */
  geometry_column?: string;
  /** Overrides (or supplies) the CRS of the coordinates. */
  source_srid?: number;
  /** Reprojects to this CRS (default: the source CRS). */
  target_srid?: number;
  /** Repairs invalid geometries with ST_MakeValid instead of reporting them. */
  make_valid?: boolean;
  /** CSV: geometry columns (override the detected ones). */
  csv?: CsvGeometry;
  /**
   * Shapefile: the code page of the .dbf's text (`windows-1252`, `utf-8`, …), for a file whose
   * .cpg and LDID byte don't say it (ADR 0125); overrides both.
   */
  encoding?: string;
  /** Replace or append to this layer's data instead of publishing a new layer (ADR 0127). */
  target?: LayerTarget;
}

export interface ImportPlan {
  layers: LayerPlan[];
}

/**
 * A failure caused by the file itself (malformed, unsafe, unsupported, over a limit): the import
 * ends `failed` with this message, which names what to fix (feature index, line, entry). Its code
 * is a listed reason (IMPORT_FAILURE_REASONS, or a domain error's it carries).
 */
export class ImportInputError extends Error {
  override name = 'ImportInputError';
  constructor(
    public readonly code: JobFailureReason,
    message: string,
  ) {
    super(message);
  }
}
