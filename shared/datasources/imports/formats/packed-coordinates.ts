/**
 * A GeoJSON feature's geometry coordinates read straight from the file's bytes into numbers, for
 * readers whose consumers only measure them (discovery: type, bbox) or write them (the loader's
 * WKB): no array per position, so no garbage to collect (ADR 0143's update of 2026-11-30).
 *
 * Only the plain case is packed: a `coordinates` array of numbers nested evenly, no empty array,
 * every position of 2 or 3 numbers (all the same), every number finite and written as JSON writes
 * numbers. Anything else is left to JSON.parse, so every message about a bad geometry stays the one
 * the parsed arrays give.
 */
import { CLOSE_ARRAY, COLON, COMMA, isSpace, OPEN_ARRAY } from './json-bytes.ts';

/** How deep each GeoJSON type's `coordinates` nest (0 = a single position). */
export const COORDINATE_NESTING: Readonly<Record<string, number>> = {
  Point: 0,
  LineString: 1,
  MultiPoint: 1,
  Polygon: 2,
  MultiLineString: 2,
  MultiPolygon: 3,
};

/**
 * Whether a geometry's parsed coordinates (nested `nesting` deep) begin with a position of three
 * or more numbers: the one rule for a geometry's Z, read alike by discovery and the WKB writer.
 */
export function firstPositionHasZ(coordinates: unknown[], nesting: number): boolean {
  let first: unknown = coordinates;
  for (let i = 0; i < nesting; i++) {
    if (!Array.isArray(first) || first.length === 0) return false;
    first = first[0];
  }
  return Array.isArray(first) && first.length > 2;
}

/** The numbers and list lengths of the geometries packed from one chunk (set when it is done). */
interface Store {
  values: Float64Array;
  counts: Uint32Array;
}

const newStore = (): Store => ({ values: new Float64Array(0), counts: new Uint32Array(0) });

/**
 * One geometry's coordinates: `nesting` lists deep (0 = a single position, as a Point's), each
 * position `dims` numbers. `values` holds the numbers in file order from `valueFrom`; `counts`
 * holds, from `countFrom` in pre-order, the length of every list of lists (a polygon: its ring
 * count, then each ring's position count).
 */
export class PackedCoordinates {
  constructor(
    readonly nesting: number,
    readonly dims: 2 | 3,
    private readonly store: Store,
    readonly valueFrom: number,
    readonly valueTo: number,
    readonly countFrom: number,
  ) {}

  get values(): Float64Array {
    return this.store.values;
  }

  get counts(): Uint32Array {
    return this.store.counts;
  }

  /** The nested arrays JSON.parse would have made of the same bytes. */
  unpack(): unknown[] {
    const { values, counts, dims } = this;
    let v = this.valueFrom;
    let c = this.countFrom;
    const list = (nesting: number): unknown[] => {
      if (nesting === 0) {
        const position = dims === 3 ? [values[v], values[v + 1], values[v + 2]] : [values[v], values[v + 1]];
        v += dims;
        return position;
      }
      const n = counts[c++] as number;
      const out: unknown[] = new Array(n);
      for (let k = 0; k < n; k++) out[k] = list(nesting - 1);
      return out;
    };
    return list(this.nesting);
  }

  /** [min_x, min_y, max_x, max_y] of the positions (there is at least one). */
  box(): [number, number, number, number] {
    const { values, dims } = this;
    const box: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
    for (let k = this.valueFrom; k < this.valueTo; k += dims) {
      const x = values[k] as number;
      const y = values[k + 1] as number;
      if (x < box[0]) box[0] = x;
      if (y < box[1]) box[1] = y;
      if (x > box[2]) box[2] = x;
      if (y > box[3]) box[3] = y;
    }
    return box;
  }
}

/** The key of a geometry's coordinates, as bytes. */
const COORDINATES = Buffer.from('"coordinates"');
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;

/** 10^k for k ≤ 22: every one exact in a double. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Items of a chunk tried before a chunk with nothing to pack is given up on (see items()). */
const PACK_PROBE = 16;
/** Most positions nest no deeper (a MultiPolygon's are 4 lists deep). */
const MAX_NESTING = 8;

/** Where a packed geometry's coordinates are in an item's bytes. */
export interface PackedSpan {
  /** The offset of the array's `[`. */
  start: number;
  /** The offset just past its `]`. */
  stop: number;
  coordinates: PackedCoordinates;
}

/**
 * Packs the geometry coordinates of the items of one chunk (`items`, then `done`). The numbers of
 * a chunk go into one array, so a geometry costs one small object.
 */
export class CoordinatePacker {
  private values = new Float64Array(4096);
  private nv = 0;
  private counts = new Uint32Array(1024);
  private nc = 0;
  /** The chunk's geometries so far, and the store done() fills for them. */
  private pending: PackedSpan[] = [];
  private store = newStore();
  /** The count slot of the open list at each depth (lists of lists only), while an array is read. */
  private readonly slots: number[] = [];

  /**
   * Packs the geometry coordinates of the feature items at bytes[from, end) (in file order, as a
   * chunk holds them); says which it packed. An item is packed when it holds the text
   * `"coordinates"` once — in JSON those bytes followed by a colon can only be a key; whether it is
   * the geometry's own is for the parse to tell (ItemSplitter.parsePacked checks the geometry holds
   * the stand-in) — and its array is the plain case. A chunk whose first PACK_PROBE items have
   * nothing to pack (points) is not searched further: the search would cost more than it saves.
   */
  items(b: Buffer, items: readonly { from: number; end: number }[]): boolean[] {
    const packed = new Array<boolean>(items.length).fill(false);
    const first = items[0];
    if (first === undefined) return packed;
    // One search over the chunk, not one per item.
    let match = b.indexOf(COORDINATES, first.from);
    let found = 0;
    for (let k = 0; k < items.length && match >= 0; k++) {
      if (found === 0 && k >= PACK_PROBE) break;
      const { from, end } = items[k] as { from: number; end: number };
      while (match >= 0 && match < from) match = b.indexOf(COORDINATES, match + COORDINATES.length);
      if (match < 0 || match >= end) continue;
      const key = match;
      match = b.indexOf(COORDINATES, key + COORDINATES.length);
      if (match >= 0 && match < end) continue;
      const nv = this.nv;
      const nc = this.nc;
      const one = this.at(b, key, end);
      if (one === null) {
        this.nv = nv;
        this.nc = nc;
        continue;
      }
      this.pending.push(one);
      packed[k] = true;
      found++;
    }
    return packed;
  }

  /** The chunk's packed geometries, in the order their items were given. */
  done(): PackedSpan[] {
    this.store.values = this.values.slice(0, this.nv);
    this.store.counts = this.counts.slice(0, this.nc);
    const spans = this.pending;
    this.pending = [];
    this.store = newStore();
    this.nv = 0;
    this.nc = 0;
    return spans;
  }

  /** The array after the key at b[key], when it is an array of arrays (a Point's is not packed). */
  private at(b: Buffer, key: number, end: number): PackedSpan | null {
    let i = space(b, key + COORDINATES.length, end);
    if (b[i] !== COLON) return null;
    i = space(b, i + 1, end);
    // A Point's one position is left to JSON.parse: packing it costs more than the array.
    if (b[i] !== OPEN_ARRAY || b[space(b, i + 1, end)] !== OPEN_ARRAY) return null;
    return this.coordinates(b, i, end);
  }

  /** Packs the array at b[start] (a `[`): its numbers and list lengths; null when not the plain case. */
  private coordinates(b: Buffer, start: number, end: number): PackedSpan | null {
    const valueFrom = this.nv;
    const countFrom = this.nc;
    const slots = this.slots;
    let depth = 0;
    /** The depth of the position lists, once the first number is seen. */
    let leaf = -1;
    let dims = 0;
    let numbers = 0;
    /** After `[` or `,` a value must come; after a value, `,` or `]`. */
    let wantValue = true;
    let i = start;
    while (i < end) {
      const c = b[i] as number;
      if (c === OPEN_ARRAY) {
        if (!wantValue || depth >= MAX_NESTING || (leaf !== -1 && depth >= leaf)) return null;
        depth++;
        wantValue = true;
        if (depth >= 2) {
          const parent = slots[depth - 2] as number;
          this.counts[parent] = (this.counts[parent] as number) + 1;
        }
        if (leaf === -1 || depth < leaf) {
          slots[depth - 1] = this.slot();
        } else numbers = 0;
        i++;
        continue;
      }
      if (c === CLOSE_ARRAY) {
        // An empty list, or a `,` just before.
        if (wantValue) return null;
        if (depth === leaf) {
          if (dims === 0) {
            if (numbers !== 2 && numbers !== 3) return null;
            dims = numbers;
          } else if (numbers !== dims) return null;
        }
        depth--;
        i++;
        if (depth === 0) {
          if (leaf === -1) return null;
          const coordinates = new PackedCoordinates(
            leaf - 1,
            dims as 2 | 3,
            this.store,
            valueFrom,
            this.nv,
            countFrom,
          );
          return { start, stop: i, coordinates };
        }
        continue;
      }
      if (c === COMMA) {
        if (wantValue) return null;
        wantValue = true;
        i++;
        continue;
      }
      if (isSpace(c)) {
        i++;
        continue;
      }
      if (!wantValue || (c !== MINUS && !isDigit(c))) return null;
      if (leaf === -1) {
        // The first number: lists at this depth are positions, not lists of lists.
        leaf = depth;
        this.nc--;
        numbers = 0;
      } else if (depth !== leaf) return null;
      i = this.number(b, i, end);
      if (i < 0 || ++numbers > 3) return null;
      wantValue = false;
    }
    return null;
  }

  /** A new count slot (0); returns its index. */
  private slot(): number {
    if (this.nc === this.counts.length) {
      const bigger = new Uint32Array(this.counts.length * 2);
      bigger.set(this.counts);
      this.counts = bigger;
    }
    this.counts[this.nc] = 0;
    return this.nc++;
  }

  /**
   * Reads the JSON number at b[i] into the values; returns the offset past it, or -1 when the bytes
   * are not a JSON number, or its value is not finite. The value is JSON.parse's: exact from the
   * digits when they fit a double's fast path, else read by Number() from the text.
   */
  private number(b: Buffer, i: number, end: number): number {
    const start = i;
    const negative = b[i] === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let digits = 0;
    let exponent = 0;
    let exact = true;
    const first = b[i] as number;
    if (first === ZERO) {
      i++;
    } else if (isDigit(first)) {
      for (; i < end && isDigit(b[i] as number); i++) {
        if (digits < 15) {
          mantissa = mantissa * 10 + ((b[i] as number) - ZERO);
          digits++;
        } else {
          exponent++;
          exact = false;
        }
      }
    } else return -1;
    if (b[i] === DOT) {
      i++;
      if (!isDigit(b[i] as number)) return -1;
      for (; i < end && isDigit(b[i] as number); i++) {
        const d = (b[i] as number) - ZERO;
        if (mantissa === 0 && d === 0) exponent--;
        else if (digits < 15) {
          mantissa = mantissa * 10 + d;
          digits++;
          exponent--;
        } else exact = false;
      }
    }
    const e = b[i];
    if (e === 0x65 || e === 0x45) {
      i++;
      let sign = 1;
      if (b[i] === MINUS || b[i] === PLUS) {
        if (b[i] === MINUS) sign = -1;
        i++;
      }
      if (!isDigit(b[i] as number)) return -1;
      let power = 0;
      for (; i < end && isDigit(b[i] as number); i++) {
        if (power < 1e6) power = power * 10 + ((b[i] as number) - ZERO);
      }
      exponent += sign * power;
    }
    const after = b[i] as number;
    if (i >= end || !(after === COMMA || after === CLOSE_ARRAY || isSpace(after))) return -1;
    let value: number;
    if (exact && exponent >= -22 && exponent <= 22) {
      // Clinger's fast path: both exact, so the one operation rounds correctly.
      value =
        exponent >= 0 ? mantissa * (POW10[exponent] as number) : mantissa / (POW10[-exponent] as number);
      if (negative) value = -value;
    } else {
      value = Number(b.toString('latin1', start, i));
    }
    if (!Number.isFinite(value)) return -1;
    if (this.nv === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.nv++] = value;
    return i;
  }
}

/** The offset of the first byte at or after i that is not white space. */
function space(b: Buffer, i: number, end: number): number {
  while (i < end && isSpace(b[i] as number)) i++;
  return i;
}
