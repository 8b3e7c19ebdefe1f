/**
 * One-dimensional PostgreSQL arrays in their binary wire format (`array_recv`), for the
 * embedded PostGIS's INSERT … FROM unnest (ADR 0143): node-postgres sends a Buffer parameter in
 * binary format, so the server reads each element's bytes as they are instead of parsing an array
 * literal character by character. On the embedded PostGIS (PostgreSQL in WebAssembly) the text
 * arrays' parsing was most of a chunk's statement.
 *
 * The format: ndim, has-nulls flag, element type OID, then per dimension its length and lower
 * bound (all int32, big-endian); then per element its byte length (-1 for null) and its bytes.
 */
import type { FieldType } from '#domain/import-sources.ts';
import type { StagedValue } from './staged-rows.ts';

/** How one value is written as a field: the most bytes it can take, and its writer (returns the bytes written). */
interface FieldWriter {
  room(value: StagedValue): number;
  write(view: DataView, bytes: Buffer, at: number, value: StagedValue): number;
}

/** How one element type is written: its OID, and its value as a field. */
interface ElementType extends FieldWriter {
  oid: number;
}

const utf8 = new TextEncoder();

/** A type whose elements are `size` bytes, written by `set`. */
const fixedSize = (
  oid: number,
  size: number,
  set: (view: DataView, at: number, value: StagedValue) => void,
): ElementType => ({
  oid,
  room: () => size,
  write(view, _, at, value) {
    set(view, at, value);
    return size;
  },
});

const INT8 = fixedSize(20, 8, (view, at, value) => view.setBigInt64(at, BigInt(value as number | string)));
const INT4 = fixedSize(23, 4, (view, at, value) => view.setInt32(at, value as number));
const FLOAT8 = fixedSize(701, 8, (view, at, value) => view.setFloat64(at, value as number));
const BOOL = fixedSize(16, 1, (view, at, value) => view.setUint8(at, value ? 1 : 0));
/** text: its UTF-8 bytes. */
const TEXT: ElementType = {
  oid: 25,
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  room: (value) => 3 * (value as string).length,
  write(_, bytes, at, value) {
    return utf8.encodeInto(value as string, bytes.subarray(at)).written;
  },
};
/** jsonb: version 1, then the JSON text. */
const JSONB: ElementType = {
  oid: 3802,
  room: (value) => 1 + 3 * (value as string).length,
  write(view, bytes, at, value) {
    view.setUint8(at, 1);
    return 1 + utf8.encodeInto(value as string, bytes.subarray(at + 1)).written;
  },
};

/**
 * The element type a staged column's values are written as in binary; undefined for the types
 * sent as text (date and timestamptz: their text is what the reader checked, and their binary
 * forms are counts from 2000-01-01 that PostgreSQL computes the same from it).
 */
const BY_FIELD: Record<FieldType, ElementType | undefined> = {
  text: TEXT,
  integer: INT4,
  bigint: INT8,
  'double precision': FLOAT8,
  boolean: BOOL,
  jsonb: JSONB,
  date: undefined,
  timestamptz: undefined,
};

/** Whether a column of `type` goes in as a binary array. */
export const binaryField = (type: FieldType): boolean => BY_FIELD[type] !== undefined;

/** The values of a column of `type` (one of binaryField's) as a binary array. */
export function fieldArray(type: FieldType, values: readonly StagedValue[]): Buffer {
  const element = BY_FIELD[type];
  if (!element) throw new Error(`no binary array for ${type}`);
  return binaryArray(element, values);
}

/** Consecutive fids from `first` as a bigint[]. */
export function fidArray(first: number, count: number): Buffer {
  const out = header(INT8, count, false, 20 + count * 12);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = 20;
  for (let i = 0; i < count; i++) at = writeField(view, out, at, INT8, first + i);
  return out;
}

/** Texts (null for none) as a text[]. */
export function textArray(values: readonly (string | null)[]): Buffer {
  return binaryArray(TEXT, values);
}

function binaryArray(element: ElementType, values: readonly StagedValue[]): Buffer {
  let nulls = false;
  let room = 20;
  for (const value of values) {
    if (value === null) nulls = true;
    room += fieldRoom(element, value);
  }
  const out = header(element, values.length, nulls, room);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = 20;
  for (const value of values) at = writeField(view, out, at, element, value);
  return out.subarray(0, at);
}

/** The most bytes `value` takes as a field: its length word and its bytes. */
const fieldRoom = (writer: FieldWriter, value: StagedValue): number =>
  4 + (value === null ? 0 : writer.room(value));

/** Writes `value` as a field at `at` (its byte length, -1 for null, then its bytes); returns where the next begins. */
function writeField(
  view: DataView,
  out: Buffer,
  at: number,
  writer: FieldWriter,
  value: StagedValue,
): number {
  if (value === null) {
    view.setInt32(at, -1);
    return at + 4;
  }
  const length = writer.write(view, out, at + 4, value);
  view.setInt32(at, length);
  return at + 4 + length;
}

/** A buffer of `room` bytes whose first 20 hold the array's header. */
function header(element: ElementType, count: number, nulls: boolean, room: number): Buffer {
  const out = Buffer.allocUnsafe(room);
  out.writeInt32BE(1, 0);
  out.writeInt32BE(nulls ? 1 : 0, 4);
  out.writeInt32BE(element.oid, 8);
  out.writeInt32BE(count, 12);
  out.writeInt32BE(1, 16);
  return out;
}

/** COPY's binary file header: its signature, no flags, no header extension. */
const COPY_HEADER = Buffer.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
]);

/** A geometry's hex WKB text, written as its bytes (PostGIS' binary geometry input reads WKB). */
const WKB_HEX: FieldWriter = {
  room: (value) => (value as string).length >> 1,
  write: (_, bytes, at, value) => bytes.write(value as string, at, 'hex'),
};

/** Geometries as a bytea[] of their WKB bytes (PostGIS' bytea → geometry cast reads WKB). */
const WKB_BYTEA: ElementType = { oid: 17, ...WKB_HEX };

/**
 * The geometries as a bytea[] of their WKB bytes, or undefined when one is WKT (those go as text).
 * PostGIS reads the bytes as they are instead of decoding hex per element: on the embedded PostGIS
 * the text cast was about two thirds of a polygon chunk's geometry input.
 */
export function wkbArray(geometries: readonly (string | null)[]): Buffer | undefined {
  return allHexWkb(geometries) ? binaryArray(WKB_BYTEA, geometries) : undefined;
}

/** Whether every geometry text is hex WKB (a byte order byte, `00` or `01`, first): WKT is never. */
function allHexWkb(geometries: readonly (string | null)[]): boolean {
  for (const g of geometries) {
    if (g === null) continue;
    if (g.charCodeAt(0) !== 48 || (g.charCodeAt(1) !== 48 && g.charCodeAt(1) !== 49)) return false;
  }
  return true;
}

/**
 * A chunk's rows in COPY's binary format (fid, the columns, then the geometry as WKB bytes), or
 * undefined when a column's type has no binary writer here (date, timestamptz) or a geometry is WKT:
 * those chunks go as text. Per row: the field count, then each field's byte length (-1 for null)
 * and its bytes, as the type's binary input reads them; the file ends with a field count of -1.
 */
export function copyBinary(
  firstFid: number,
  count: number,
  types: readonly FieldType[],
  values: readonly (readonly StagedValue[])[],
  geometries: readonly (string | null)[] | undefined,
): Buffer | undefined {
  const writers: FieldWriter[] = [];
  for (const type of types) {
    const element = BY_FIELD[type];
    if (!element) return undefined;
    writers.push(element);
  }
  const columns = [...values];
  if (geometries) {
    if (!allHexWkb(geometries)) return undefined;
    writers.push(WKB_HEX);
    columns.push(geometries);
  }
  // Per row its field count and its fid (an int8 field), then the columns.
  let room = COPY_HEADER.length + 2 + count * (2 + 12);
  for (let c = 0; c < writers.length; c++) {
    for (let r = 0; r < count; r++) room += fieldRoom(writers[c] as FieldWriter, columns[c]?.[r] ?? null);
  }
  const out = Buffer.allocUnsafe(room);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  COPY_HEADER.copy(out, 0);
  let at = COPY_HEADER.length;
  for (let r = 0; r < count; r++) {
    view.setInt16(at, 1 + writers.length);
    at = writeField(view, out, at + 2, INT8, firstFid + r);
    for (let c = 0; c < writers.length; c++) {
      at = writeField(view, out, at, writers[c] as FieldWriter, columns[c]?.[r] ?? null);
    }
  }
  view.setInt16(at, -1);
  return out.subarray(0, at + 2);
}
