/**
 * What discovery accumulates over one layer while it streams the features: field types, the
 * geometry type (one per layer), bbox, counts, and the first coordinate outside lon/lat range.
 */
import type { FieldType, GeometryType, SourceField, SourceLayer } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { MAX_FIELDS } from './limits.ts';
import { COORDINATE_NESTING, firstPositionHasZ, PackedCoordinates } from './packed-coordinates.ts';
import { certainlyValid, certainlyValidParsed } from './validity.ts';

/** [min_x, min_y, max_x, max_y]. */
export type Box = [number, number, number, number];

const FAMILY: Record<GeometryType, string> = {
  Point: 'point',
  MultiPoint: 'point',
  LineString: 'line',
  MultiLineString: 'line',
  Polygon: 'polygon',
  MultiPolygon: 'polygon',
  GeometryCollection: 'collection',
};
const MULTI: Partial<Record<GeometryType, GeometryType>> = {
  Point: 'MultiPoint',
  LineString: 'MultiLineString',
  Polygon: 'MultiPolygon',
};

/** True for a GeoJSON geometry type name. */
export const isGeometryType = (type: unknown): type is GeometryType =>
  typeof type === 'string' && Object.hasOwn(FAMILY, type);

const INT32 = 1;
const SAFE_INT = 2;
const DOUBLE = 4;
const BOOL = 8;
const STRING = 16;
const OBJECT = 32;
const NUMBER = INT32 | SAFE_INT | DOUBLE;

const numberKind = (n: number): number =>
  Number.isInteger(n) && n >= -2147483648 && n <= 2147483647
    ? INT32
    : Number.isSafeInteger(n)
      ? SAFE_INT
      : DOUBLE;

const INTEGER_TEXT = /^-?(0|[1-9]\d*)$/;
const DECIMAL_TEXT = /^-?(0|[1-9]\d*)?(\.\d+)?([eE][+-]?\d+)?$/;
const BOOLEAN_TEXT = /^(true|false)$/i;

/** The kind of a text value (CSV): integer, number, boolean or text; leading zeros stay text. */
const textKind = (value: string): number => {
  if (INTEGER_TEXT.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? numberKind(n) : STRING;
  }
  if (DECIMAL_TEXT.test(value) && /\d/.test(value)) return DOUBLE;
  if (BOOLEAN_TEXT.test(value)) return BOOL;
  return STRING;
};

const typeOfKinds = (kinds: number): FieldType => {
  if (kinds & OBJECT) return 'jsonb';
  if (kinds & STRING || kinds === 0) return 'text';
  if (kinds & BOOL) return kinds & NUMBER ? 'text' : 'boolean';
  if (kinds & DOUBLE) return 'double precision';
  if (kinds & SAFE_INT) return 'bigint';
  return 'integer';
};

/** The error for a layer with more fields than `max`. */
export const tooManyFields = (layer: string, max: number): ImportInputError =>
  new ImportInputError(
    'too_many_fields',
    `Layer '${layer}' has more than ${max} fields (the limit; a PostgreSQL table holds at most 1600 columns). Drop the fields you don't need, or keep them together in one JSON field.`,
  );

/** Field types inferred from values: the union of keys in first-seen order (at most `maxFields` keys). */
export class FieldTypes {
  private readonly kinds = new Map<string, number>();

  constructor(
    private readonly layer = 'layer',
    private readonly maxFields = MAX_FIELDS,
  ) {}

  /** Admits one more key; throws 'too_many_fields' past the limit (a hostile file can't grow the map). */
  private admit(): void {
    if (this.kinds.size >= this.maxFields) throw tooManyFields(this.layer, this.maxFields);
  }

  /** Declares a field without a value (its type comes from later values, or text). */
  declare(name: string): void {
    if (!this.kinds.has(name)) {
      this.admit();
      this.kinds.set(name, 0);
    }
  }

  /** A JSON value (null/undefined only declare the key). */
  addValue(name: string, value: unknown): void {
    let kind = 0;
    if (typeof value === 'number') kind = numberKind(value);
    else if (typeof value === 'boolean') kind = BOOL;
    else if (typeof value === 'string') kind = STRING;
    else if (typeof value === 'bigint') kind = SAFE_INT;
    else if (value !== null && typeof value === 'object') kind = OBJECT;
    const known = this.kinds.get(name);
    if (known === undefined) this.admit();
    this.kinds.set(name, (known ?? 0) | kind);
  }

  /** All properties of a feature. */
  addProperties(properties: Record<string, unknown>): void {
    for (const name in properties) this.addValue(name, properties[name]);
  }

  /** A text value (CSV cell): the empty string is null. */
  addText(name: string, value: string | null | undefined): void {
    const kind = value ? textKind(value) : 0;
    const known = this.kinds.get(name);
    if (known === undefined) this.admit();
    this.kinds.set(name, (known ?? 0) | kind);
  }

  fields(): SourceField[] {
    return [...this.kinds].map(([name, kinds]) => ({ name, type: typeOfKinds(kinds) }));
  }

  /** The kinds seen, by field in first-seen order (what {@link absorb} takes). */
  entries(): [string, number][] {
    return [...this.kinds];
  }

  /**
   * Takes in the kinds of a later part of the same layer (ADR 0156), as if its values had been
   * added here: its new fields after the known ones, in its order; 'too_many_fields' past the limit.
   */
  absorb(later: readonly [string, number][]): void {
    for (const [name, kinds] of later) {
      const known = this.kinds.get(name);
      if (known === undefined) this.admit();
      this.kinds.set(name, (known ?? 0) | kinds);
    }
  }
}

/** Bbox of GeoJSON coordinates (any nesting); throws when a position isn't numbers. */
const extend = (coordinates: unknown, box: Box, where: string): void => {
  if (!Array.isArray(coordinates)) throw invalidGeometry(where, 'coordinates must be an array');
  if (coordinates.length > 0 && !Array.isArray(coordinates[0])) {
    const [x, y] = coordinates as unknown[];
    if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x) || !Number.isFinite(y)) {
      throw invalidGeometry(where, `a position must hold two numbers, got ${JSON.stringify(coordinates)}`);
    }
    if (x < box[0]) box[0] = x;
    if (y < box[1]) box[1] = y;
    if (x > box[2]) box[2] = x;
    if (y > box[3]) box[3] = y;
    return;
  }
  for (const c of coordinates) extend(c, box, where);
};

const invalidGeometry = (where: string, why: string) =>
  new ImportInputError('invalid_geometry', `Invalid geometry in ${where}: ${why}.`);

/** What discovery reads of one geometry. */
export interface GeometryInfo {
  type: GeometryType;
  /** Null for an empty geometry. */
  box: Box | null;
  /**
   * Whether the WKB writer writes it with Z (geometry-text.ts: its first position has a third
   * number); undefined when the loader won't write it (WKT goes to PostGIS as it is).
   */
  z?: boolean;
  /** True when it is certainly valid for PostGIS (validity.ts); told when geometryInfo judges it. */
  valid?: boolean;
}

/**
 * A GeoJSON geometry's type, bbox and Z; validates its shape. With `judge`, also whether it is
 * certainly valid (validity.ts): asked by the readers whose geometries the loader writes itself,
 * while their layer is still all certainly valid (LayerScan.judging); nobody else reads the answer.
 */
export const geometryInfo = (geometry: unknown, where: string, judge = false): GeometryInfo => {
  if (geometry === null || typeof geometry !== 'object') throw invalidGeometry(where, 'not an object');
  const { type, coordinates, geometries } = geometry as Record<string, unknown>;
  if (!isGeometryType(type)) throw invalidGeometry(where, `unknown geometry type ${JSON.stringify(type)}`);
  if (coordinates instanceof PackedCoordinates && type !== 'GeometryCollection') {
    // Packed: numbers only, nested evenly, no empty list. Nested as the type says, its bbox is all
    // there is to check; otherwise the arrays are checked as parsed ones are, for the same message.
    if (coordinates.nesting === COORDINATE_NESTING[type]) {
      const info: GeometryInfo = { type, box: coordinates.box(), z: coordinates.dims === 3 };
      if (judge) info.valid = certainlyValid(type, coordinates);
      return info;
    }
    return geometryInfo({ ...geometry, coordinates: coordinates.unpack() }, where, judge);
  }
  const box: Box = [Infinity, Infinity, -Infinity, -Infinity];
  let z = false;
  if (type === 'GeometryCollection') {
    if (!Array.isArray(geometries)) throw invalidGeometry(where, 'a GeometryCollection needs "geometries"');
    for (let i = 0; i < geometries.length; i++) {
      const inner = geometryInfo(geometries[i], where);
      // The writer marks a collection Z when its first member is.
      if (i === 0) z = inner.z === true;
      if (inner.box) {
        box[0] = Math.min(box[0], inner.box[0]);
        box[1] = Math.min(box[1], inner.box[1]);
        box[2] = Math.max(box[2], inner.box[2]);
        box[3] = Math.max(box[3], inner.box[3]);
      }
    }
  } else {
    extend(coordinates, box, where);
    z = firstPositionHasZ(coordinates as unknown[], COORDINATE_NESTING[type] as number);
  }
  const info: GeometryInfo = { type, box: box[0] === Infinity ? null : box, z };
  if (judge && type !== 'GeometryCollection') info.valid = certainlyValidParsed(type, coordinates);
  return info;
};

/** Where a feature is: its 0-based index in the layer, and for a line-based reader its line. */
interface Place {
  index: number;
  line?: number;
}

/**
 * What a LayerScan gathered, as it crosses a thread (ADR 0156): a part of a layer scanned on its
 * own, its indexes counted from the part's first feature.
 */
export interface ScanState {
  count: number;
  nullGeometries: number;
  fields: [string, number][];
  types: [GeometryType, number][];
  family: { name: string; type: GeometryType; at: Place } | null;
  box: Box | null;
  dims: number;
  allValid: boolean;
  outOfRange: { at: Place; value: number; axis: string } | null;
}

const placeOf = (index: number, line: number | undefined): Place =>
  line === undefined ? { index } : { index, line };

/** Dimensions seen in a layer's geometries (bits). */
const DIMS_2D = 1;
const DIMS_3D = 2;
const DIMS_UNKNOWN = 4;

/** Discovery's accumulator for one layer. */
export class LayerScan {
  readonly fields: FieldTypes;
  count = 0;
  private nullGeometries = 0;
  private readonly types = new Map<GeometryType, number>();
  private family: { name: string; type: GeometryType; at: Place } | null = null;
  private box: Box | null = null;
  /** DIMS_* bits: whether 2D, 3D and geometries of unknown Z were seen. */
  private dims = 0;
  /** Whether every geometry so far was certainly valid (GeometryInfo.valid). */
  private allValid = true;

  /** Whether its geometries are still worth judging: none so far was other than certainly valid. */
  get judging(): boolean {
    return this.allValid;
  }
  private outOfRange: { at: Place; value: number; axis: string } | null = null;

  /** How messages name the feature at `at`. */
  private label(at: Place): string {
    return this.where(at.index, at.line);
  }

  /**
   * @param where how a feature is named in messages, from its 0-based index and, for a line-based
   *   reader, its line ("feature 12", "line 14").
   * @param maxFields fields the layer may have at most ('too_many_fields' past it).
   */
  constructor(
    readonly name: string,
    private readonly where: (index: number, line?: number) => string = (i) => `feature ${i}`,
    maxFields = MAX_FIELDS,
  ) {
    this.fields = new FieldTypes(name, maxFields);
  }

  /**
   * One feature's geometry (null = no geometry); `index` is its 0-based position in the layer,
   * `line` its line for a line-based reader (messages name it by the constructor's `where`).
   */
  addGeometry(index: number, info: GeometryInfo | null, line?: number): void {
    if (info === null) {
      this.nullGeometries++;
      return;
    }
    const { type, box } = info;
    this.dims |= info.z === undefined ? DIMS_UNKNOWN : info.z ? DIMS_3D : DIMS_2D;
    if (info.valid !== true) this.allValid = false;
    const family = FAMILY[type];
    if (this.family === null) this.family = { name: family, type, at: placeOf(index, line) };
    else if (this.family.name !== family) throw this.mixed(this.family, type, placeOf(index, line));
    this.types.set(type, (this.types.get(type) ?? 0) + 1);
    if (box) {
      if (this.box === null) this.box = [...box];
      else {
        this.box[0] = Math.min(this.box[0], box[0]);
        this.box[1] = Math.min(this.box[1], box[1]);
        this.box[2] = Math.max(this.box[2], box[2]);
        this.box[3] = Math.max(this.box[3], box[3]);
      }
      if (this.outOfRange === null) {
        const bad =
          box[0] < -180
            ? { value: box[0], axis: 'longitude' }
            : box[2] > 180
              ? { value: box[2], axis: 'longitude' }
              : box[1] < -90
                ? { value: box[1], axis: 'latitude' }
                : box[3] > 90
                  ? { value: box[3], axis: 'latitude' }
                  : null;
        if (bad) this.outOfRange = { at: placeOf(index, line), ...bad };
      }
    }
  }

  private mixed(first: { type: GeometryType; at: Place }, type: GeometryType, at: Place): ImportInputError {
    return new ImportInputError(
      'mixed_geometry_types',
      `Layer '${this.name}' mixes geometry types: ${first.type} (first at ${this.label(first.at)}) and ${type} (first at ${this.label(at)}). A layer holds one geometry type; split the file by geometry type.`,
    );
  }

  /** What it gathered so far, as {@link absorb} takes it. */
  snapshot(): ScanState {
    return {
      count: this.count,
      nullGeometries: this.nullGeometries,
      fields: this.fields.entries(),
      types: [...this.types],
      family: this.family,
      box: this.box,
      dims: this.dims,
      allValid: this.allValid,
      outOfRange: this.outOfRange,
    };
  }

  /**
   * Takes in the scan of the features that follow this one's (a later part of the same layer
   * scanned on its own, ADR 0156), as if they had been scanned here: its indexes, counted from
   * `first`, move on to follow this scan's; its lines, counted from the part's start, move on by
   * the `lines` before it. Throws what scanning them here would have thrown ('too_many_fields',
   * 'mixed_geometry_types'), though not necessarily the error a scan in order throws first.
   */
  absorb(later: ScanState, { first = 0, lines = 0 }: { first?: number; lines?: number } = {}): void {
    const shift = this.count - first;
    const moved = (at: Place): Place =>
      placeOf(at.index + shift, at.line === undefined ? undefined : at.line + lines);
    this.fields.absorb(later.fields);
    if (later.family !== null) {
      if (this.family === null) this.family = { ...later.family, at: moved(later.family.at) };
      else if (this.family.name !== later.family.name) {
        throw this.mixed(this.family, later.family.type, moved(later.family.at));
      }
    }
    for (const [type, n] of later.types) this.types.set(type, (this.types.get(type) ?? 0) + n);
    if (later.box !== null) {
      if (this.box === null) this.box = [...later.box];
      else {
        this.box[0] = Math.min(this.box[0], later.box[0]);
        this.box[1] = Math.min(this.box[1], later.box[1]);
        this.box[2] = Math.max(this.box[2], later.box[2]);
        this.box[3] = Math.max(this.box[3], later.box[3]);
      }
    }
    if (this.outOfRange === null && later.outOfRange !== null) {
      this.outOfRange = { ...later.outOfRange, at: moved(later.outOfRange.at) };
    }
    this.dims |= later.dims;
    this.allValid &&= later.allValid;
    this.nullGeometries += later.nullGeometries;
    this.count += later.count;
  }

  /** True when every coordinate so far is within lon/lat range. */
  get inLonLatRange(): boolean {
    return this.outOfRange === null;
  }

  /**
   * The layer as discovery reports it; throws 'coordinates_out_of_range' when `checkRange` and
   * srid is 4326 and a coordinate is outside lon/lat range. Adds its warnings to `warnings`.
   * `written`: the loader writes this reader's geometries itself, from the objects discovery saw
   * (the GeoJSON readers, CSV's lon/lat points), so their type and Z are known as they will be
   * staged (`geometry_dims`), and so is their validity (`geometry_valid`).
   */
  result(
    srid: number | null,
    warnings: string[],
    { checkRange = true, written = false }: { checkRange?: boolean; written?: boolean } = {},
  ): SourceLayer {
    if (checkRange && srid === 4326 && this.outOfRange) {
      const { at, value, axis } = this.outOfRange;
      throw new ImportInputError(
        'coordinates_out_of_range',
        `${capitalise(this.label(at))} of layer '${this.name}' has ${axis} ${value}, outside the range of EPSG:4326 (longitude -180..180, latitude -90..90). If the file isn't in longitude/latitude, reproject it, or declare its CRS in the file (a GeoJSON "crs" member such as "EPSG:3857", a Shapefile .prj) and import it again; otherwise fix the coordinates.`,
      );
    }
    let geometryType: GeometryType | null = null;
    const types = [...this.types.keys()];
    if (types.length === 1) geometryType = types[0] ?? null;
    else if (types.length > 1) {
      const single = types.find((t) => MULTI[t]);
      geometryType = (single && MULTI[single]) ?? types.find((t) => t.startsWith('Multi')) ?? null;
      warnings.push(
        `Layer '${this.name}' mixes ${types.join(' and ')} geometries; they are loaded as ${geometryType}.`,
      );
    }
    if (this.nullGeometries > 0) {
      warnings.push(
        `Layer '${this.name}': ${this.nullGeometries} of ${this.count} features have no geometry.`,
      );
    }
    const layer: SourceLayer = {
      name: this.name,
      fields: this.fields.fields(),
      geometry_type: geometryType,
      srid,
      feature_count: this.count,
      bbox: this.box,
    };
    // One type (no promotion to Multi), not a collection (its members' Z may differ), and every
    // geometry 2D or every one 3D: staged as they are, they already fit the final typmod.
    if (written && types.length === 1 && geometryType !== 'GeometryCollection') {
      if (this.dims === DIMS_2D) layer.geometry_dims = 2;
      else if (this.dims === DIMS_3D) layer.geometry_dims = 3;
    }
    // Written from the coordinates judged, every geometry certainly valid: the finalize needn't ask.
    if (written && this.allValid && this.types.size > 0) layer.geometry_valid = true;
    return layer;
  }
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
