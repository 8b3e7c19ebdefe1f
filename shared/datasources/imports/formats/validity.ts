/**
 * Which geometries are certainly valid as PostGIS' ST_IsValid (GEOS) judges them, told from their
 * coordinates alone (packed, or as JSON.parse makes them): discovery marks a layer whose every geometry is, and the finalize then
 * skips its validity scan (ADR 0143). "Certainly" is one-sided: false means "not known here", and
 * the finalize asks PostGIS as before. So only plain cases are judged: points (packed numbers are
 * finite), lines with two distinct positions, and polygons of one ring whose segments provably
 * meet only where consecutive ones share a vertex, the parts of a multi-polygon in boxes apart.
 * Every orientation is decided in doubles with Shewchuk's error bound; one too close to call
 * (collinear, touching, or nearly so) makes the geometry "not known".
 */
import type { GeometryType } from '#domain/import-sources.ts';
import { COORDINATE_NESTING, type PackedCoordinates } from './packed-coordinates.ts';

/** Positions of a ring judged at most (its segment pairs are compared each with each). */
export const MAX_RING_POSITIONS = 64;
/** Parts of a multi-polygon judged at most (their boxes are compared each with each). */
export const MAX_PARTS = 32;

/** Shewchuk's bound on the error of the orientation determinant in doubles (ccwerrboundA). */
const EPSILON = 2 ** -53;
const ORIENTATION_BOUND = (3 + 16 * EPSILON) * EPSILON;
/** Products below this may have lost bits to underflow, where the bound no longer holds. */
const TINY = 2 ** -900;

/**
 * The orientation of (a, b, c): 1 counter-clockwise, -1 clockwise, 0 when doubles can't tell it
 * from collinear (also when the products underflow or overflow, where the bound doesn't hold).
 */
export function orientation(ax: number, ay: number, bx: number, by: number, cx: number, cy: number): number {
  const left = (ax - cx) * (by - cy);
  const right = (ay - cy) * (bx - cx);
  const det = left - right;
  const sum = Math.abs(left) + Math.abs(right);
  if (!(sum > TINY && sum < Number.MAX_VALUE)) return 0;
  const bound = ORIENTATION_BOUND * sum;
  if (det > bound) return 1;
  if (det < -bound) return -1;
  return 0;
}

/** A view of one geometry's numbers: position `i`'s x and y from `from`, `dims` numbers a position. */
interface Positions {
  values: Float64Array;
  from: number;
  count: number;
  dims: number;
}

const x = (p: Positions, i: number): number => p.values[p.from + i * p.dims] as number;
const y = (p: Positions, i: number): number => p.values[p.from + i * p.dims + 1] as number;

/** A line with two distinct positions at least (GEOS: a line of one repeated point is invalid). */
function lineValid(p: Positions): boolean {
  for (let i = 1; i < p.count; i++) if (x(p, i) !== x(p, 0) || y(p, i) !== y(p, 0)) return true;
  return false;
}

/**
 * A closed ring whose segments meet only at the vertex two consecutive ones share, and there at an
 * angle (no spike, no straight vertex): a simple ring, so the polygon it bounds is valid.
 */
export function simpleRing(p: Positions): boolean {
  const n = p.count;
  if (n < 4 || n > MAX_RING_POSITIONS) return false;
  const last = n - 1;
  if (x(p, 0) !== x(p, last) || y(p, 0) !== y(p, last)) return false;
  // Segment i runs from vertex i to vertex i + 1; the ring has `last` of them.
  for (let i = 0; i < last; i++) {
    // Consecutive segments i - 1 and i share vertex i: it must turn.
    const prev = i === 0 ? last - 1 : i - 1;
    if (orientation(x(p, prev), y(p, prev), x(p, i), y(p, i), x(p, i + 1), y(p, i + 1)) === 0) return false;
  }
  for (let i = 0; i < last; i++) {
    const ax = x(p, i);
    const ay = y(p, i);
    const bx = x(p, i + 1);
    const by = y(p, i + 1);
    // Segments not consecutive with i: from i + 2 on, without the last when i is the first.
    const end = i === 0 ? last - 1 : last;
    for (let j = i + 2; j < end; j++) {
      const cx = x(p, j);
      const cy = y(p, j);
      const dx = x(p, j + 1);
      const dy = y(p, j + 1);
      // Boxes apart: they can't meet.
      if (
        Math.max(ax, bx) < Math.min(cx, dx) ||
        Math.max(cx, dx) < Math.min(ax, bx) ||
        Math.max(ay, by) < Math.min(cy, dy) ||
        Math.max(cy, dy) < Math.min(ay, by)
      ) {
        continue;
      }
      const c = orientation(ax, ay, bx, by, cx, cy);
      const d = orientation(ax, ay, bx, by, dx, dy);
      const a = orientation(cx, cy, dx, dy, ax, ay);
      const b = orientation(cx, cy, dx, dy, bx, by);
      // A position on (or too near) the other's line: they may touch.
      if (a === 0 || b === 0 || c === 0 || d === 0) return false;
      // Each one's ends on both sides of the other: they cross.
      if (a !== b && c !== d) return false;
    }
  }
  return true;
}

/** True when the geometry is certainly valid for PostGIS (see the module's comment); false: not known. */
export function certainlyValid(type: GeometryType, coordinates: PackedCoordinates): boolean {
  const { values, counts, dims, valueFrom, countFrom } = coordinates;
  return judge(type, values, counts, valueFrom, countFrom, dims);
}

/** A position of finite numbers: at least x and y. */
function finitePosition(position: unknown): boolean {
  if (!Array.isArray(position)) return false;
  const [px, py] = position as unknown[];
  return typeof px === 'number' && typeof py === 'number' && Number.isFinite(px) && Number.isFinite(py);
}

/**
 * certainlyValid of coordinates as JSON.parse makes them (GeoJSON's nested arrays): false for
 * anything but evenly nested lists of finite numbers.
 */
export function certainlyValidParsed(type: GeometryType, coordinates: unknown): boolean {
  // A point is valid when its x and y are finite: said here without packing its numbers first
  // (the packer leaves a Point's one position to JSON.parse, so every point comes this way).
  if (type === 'Point') return finitePosition(coordinates);
  const nesting = COORDINATE_NESTING[type];
  if (nesting === undefined) return false;
  const values: number[] = [];
  const counts: number[] = [];
  const walk = (list: unknown, depth: number): boolean => {
    if (!Array.isArray(list)) return false;
    if (depth === 0) {
      if (!finitePosition(list)) return false;
      values.push(list[0] as number, list[1] as number);
      return true;
    }
    if (list.length === 0) return false;
    counts.push(list.length);
    for (const item of list) if (!walk(item, depth - 1)) return false;
    return true;
  };
  if (!walk(coordinates, nesting)) return false;
  return judge(type, Float64Array.from(values), Uint32Array.from(counts), 0, 0, 2);
}

/** The judgement of certainlyValid over numbers and list lengths laid out as PackedCoordinates lays them. */
function judge(
  type: GeometryType,
  values: Float64Array,
  counts: Uint32Array,
  valueFrom: number,
  countFrom: number,
  dims: number,
): boolean {
  let v = valueFrom;
  let c = countFrom;
  /** The next list of positions (a line or a ring), moving past it. */
  const next = (): Positions => {
    const count = counts[c++] as number;
    const p = { values, from: v, count, dims };
    v += count * dims;
    return p;
  };
  switch (type) {
    case 'Point':
    case 'MultiPoint':
      // Packed numbers are finite, and points have no other rule.
      return true;
    case 'LineString':
      return lineValid(next());
    case 'MultiLineString': {
      const lines = counts[c++] as number;
      for (let k = 0; k < lines; k++) if (!lineValid(next())) return false;
      return true;
    }
    case 'Polygon': {
      // One ring: holes would have to be judged against it.
      if (counts[c++] !== 1) return false;
      return simpleRing(next());
    }
    case 'MultiPolygon': {
      const parts = counts[c++] as number;
      if (parts > MAX_PARTS) return false;
      const boxes: number[][] = [];
      for (let k = 0; k < parts; k++) {
        if (counts[c++] !== 1) return false;
        const ring = next();
        if (!simpleRing(ring)) return false;
        const box = [Infinity, Infinity, -Infinity, -Infinity];
        for (let i = 0; i < ring.count; i++) {
          box[0] = Math.min(box[0] as number, x(ring, i));
          box[1] = Math.min(box[1] as number, y(ring, i));
          box[2] = Math.max(box[2] as number, x(ring, i));
          box[3] = Math.max(box[3] as number, y(ring, i));
        }
        // Parts in boxes apart (not even touching) can't overlap or touch.
        for (const other of boxes) {
          const apart =
            (box[2] as number) < (other[0] as number) ||
            (other[2] as number) < (box[0] as number) ||
            (box[3] as number) < (other[1] as number) ||
            (other[3] as number) < (box[1] as number);
          if (!apart) return false;
        }
        boxes.push(box);
      }
      return parts > 0;
    }
    default:
      return false;
  }
}
