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

/** How one element type is written: its OID, its fixed size (or null: measured), its writer. */
interface ElementType {
  oid: number;
  size: number | null;
  write(view: DataView, bytes: Uint8Array, at: number, value: StagedValue): number;
}

const utf8 = new TextEncoder();

/** A type whose elements are `size` bytes, written by `set`. */
const fixedSize = (
  oid: number,
  size: number,
  set: (view: DataView, at: number, value: StagedValue) => void,
): ElementType => ({
  oid,
  size,
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
  size: null,
  write(_, bytes, at, value) {
    return utf8.encodeInto(value as string, bytes.subarray(at)).written;
  },
};
/** jsonb: version 1, then the JSON text. */
const JSONB: ElementType = {
  oid: 3802,
  size: null,
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
  for (let i = 0; i < count; i++) {
    view.setInt32(at, 8);
    view.setBigInt64(at + 4, BigInt(first + i));
    at += 12;
  }
  return out;
}

/** Texts (null for none) as a text[]. */
export function textArray(values: readonly (string | null)[]): Buffer {
  return binaryArray(TEXT, values);
}

function binaryArray(element: ElementType, values: readonly StagedValue[]): Buffer {
  let nulls = false;
  // Room for every element: a fixed size, or a text's UTF-8 at most 3 bytes per UTF-16 unit.
  let room = 20;
  for (const value of values) {
    if (value === null) nulls = true;
    room += 4 + (value === null ? 0 : (element.size ?? 1 + 3 * (value as string).length));
  }
  const out = header(element, values.length, nulls, room);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = 20;
  for (const value of values) {
    if (value === null) {
      view.setInt32(at, -1);
      at += 4;
      continue;
    }
    const length = element.write(view, out, at + 4, value);
    view.setInt32(at, length);
    at += 4 + length;
  }
  return out.subarray(0, at);
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
  const elements: ElementType[] = [];
  for (const type of types) {
    const element = BY_FIELD[type];
    if (!element) return undefined;
    elements.push(element);
  }
  if (geometries && !allHexWkb(geometries)) return undefined;
  const fields = 1 + elements.length + (geometries ? 1 : 0);
  let room = COPY_HEADER.length + 2 + count * (2 + 12);
  for (let c = 0; c < elements.length; c++) {
    const element = elements[c] as ElementType;
    const column = values[c] as readonly StagedValue[];
    for (let r = 0; r < count; r++) {
      const value = column[r] ?? null;
      room += 4 + (value === null ? 0 : (element.size ?? 1 + 3 * (value as string).length));
    }
  }
  if (geometries) for (let r = 0; r < count; r++) room += 4 + ((geometries[r]?.length ?? 0) >> 1);
  const out = Buffer.allocUnsafe(room);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  COPY_HEADER.copy(out, 0);
  let at = COPY_HEADER.length;
  for (let r = 0; r < count; r++) {
    view.setInt16(at, fields);
    view.setInt32(at + 2, 8);
    view.setBigInt64(at + 6, BigInt(firstFid + r));
    at += 14;
    for (let c = 0; c < elements.length; c++) {
      const value = (values[c] as readonly StagedValue[])[r] ?? null;
      if (value === null) {
        view.setInt32(at, -1);
        at += 4;
        continue;
      }
      const length = (elements[c] as ElementType).write(view, out, at + 4, value);
      view.setInt32(at, length);
      at += 4 + length;
    }
    if (geometries) {
      const g = geometries[r] ?? null;
      if (g === null) {
        view.setInt32(at, -1);
        at += 4;
      } else {
        const length = out.write(g, at + 4, 'hex');
        view.setInt32(at, length);
        at += 4 + length;
      }
    }
  }
  view.setInt16(at, -1);
  return out.subarray(0, at + 2);
}
