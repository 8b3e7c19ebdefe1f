/**
 * A reader's geometry (GeoJSON object, WKB bytes or WKT text) as text PostGIS' `geometry` input
 * accepts: hex WKB for GeoJSON (checked and written here in one walk, ADR 0085, ADR 0143) and for
 * WKB, WKT as given. Coordinates are never transformed here; PostGIS does that.
 */
import type { SourceGeometry } from '#domain/import-sources.ts';
import { COORDINATE_NESTING, firstPositionHasZ, PackedCoordinates } from './formats/packed-coordinates.ts';

/** A geometry object whose shape can't be written (the message says what is wrong). */
export class GeometryShapeError extends Error {}

/** The text of `geometry` for PostGIS' geometry input; throws GeometryShapeError for a malformed object. */
export function geometryText(geometry: SourceGeometry): string {
  if ('wkb' in geometry) {
    const bytes = geometry.wkb;
    if (!(bytes instanceof Uint8Array) || bytes.length === 0) throw new GeometryShapeError('empty WKB');
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  }
  if ('wkt' in geometry) {
    if (typeof geometry.wkt !== 'string' || geometry.wkt.trim() === '') {
      throw new GeometryShapeError('empty WKT');
    }
    return geometry.wkt;
  }
  writer.start();
  writer.geometry(geometry as GeoJsonObject, 0);
  return writer.hex();
}

interface GeoJsonObject {
  type?: unknown;
  coordinates?: unknown;
  geometries?: unknown;
}

const MAX_DEPTH = 32;
/** The WKB type code per GeoJSON type (a collection's is COLLECTION). */
const CODES: Record<string, number> = {
  Point: 1,
  LineString: 2,
  Polygon: 3,
  MultiPoint: 4,
  MultiLineString: 5,
  MultiPolygon: 6,
};
const COLLECTION = 7;
/** The largest buffer the writer keeps between geometries. */
const KEPT_MAX_BYTES = 1 << 20;
/** The Z flag of (E)WKB's type word, as PostGIS writes it. */
const Z_FLAG = 0x80000000;

/**
 * Little-endian WKB of a GeoJSON geometry, written straight from its coordinates into one
 * growing buffer (no intermediate objects; ADR 0143's update of 2026-11-30). A geometry has Z when
 * its first position has a third number; a later position without one is an error, a fourth
 * number (M) and a third in a 2D geometry are dropped. An empty Point is NaN NaN, as PostGIS
 * writes POINT EMPTY.
 */
class WkbWriter {
  private bytes = new ArrayBuffer(1024);
  private view = new DataView(this.bytes);
  private at = 0;

  /** Starts a geometry (a buffer grown past KEPT_MAX_BYTES for a huge one is let go). */
  start(): void {
    this.at = 0;
    if (this.bytes.byteLength > KEPT_MAX_BYTES) {
      this.bytes = new ArrayBuffer(1024);
      this.view = new DataView(this.bytes);
    }
  }

  hex(): string {
    return Buffer.from(this.bytes, 0, this.at).toString('hex');
  }

  geometry(g: GeoJsonObject, depth: number): void {
    if (depth > MAX_DEPTH) throw new GeometryShapeError('geometry collections nested too deeply');
    if (g.type === 'GeometryCollection') {
      const children = g.geometries;
      if (!Array.isArray(children)) throw new GeometryShapeError('GeometryCollection without geometries');
      const start = this.header(COLLECTION, false, children.length);
      for (let i = 0; i < children.length; i++) {
        const child = children[i] as unknown;
        if (child === null || typeof child !== 'object')
          throw new GeometryShapeError('a null member geometry');
        const childAt = this.at;
        this.geometry(child as GeoJsonObject, depth + 1);
        // The collection has Z when its first member has.
        if (i === 0 && this.view.getUint32(childAt + 1, true) & Z_FLAG) this.markZ(start);
      }
      return;
    }
    const code = typeof g.type === 'string' && Object.hasOwn(CODES, g.type) ? CODES[g.type] : undefined;
    if (code === undefined) throw new GeometryShapeError(`unknown geometry type ${JSON.stringify(g.type)}`);
    const nesting = COORDINATE_NESTING[g.type as string] as number;
    let c = g.coordinates;
    if (c instanceof PackedCoordinates) {
      // Packed coordinates are numbers nested evenly: nested as the type says, they are written as
      // they are; otherwise they are checked as the parsed arrays would be, for the same message.
      if (c.nesting === nesting) {
        this.packed(code, c);
        return;
      }
      c = c.unpack();
    }
    if (!Array.isArray(c)) throw new GeometryShapeError(`${g.type} without coordinates`);
    const z = firstPositionHasZ(c, nesting);
    switch (code) {
      case 1:
        this.header(1, z);
        if (c.length === 0) {
          this.double(Number.NaN);
          this.double(Number.NaN);
        } else this.position(c, z);
        return;
      case 2:
        this.line(c, z);
        return;
      case 3:
        this.polygon(c, z);
        return;
      default:
        // A multi: its members' count, then each member as a geometry of its own.
        this.header(code, z, c.length);
        for (const member of c) {
          if (code === 4) {
            this.header(1, z);
            this.position(array(member), z);
          } else if (code === 5) this.line(array(member), z);
          else this.polygon(array(member), z);
        }
    }
  }

  private line(positions: unknown[], z: boolean): void {
    this.header(2, z, positions.length);
    for (const p of positions) this.position(array(p), z);
  }

  /** A polygon's rings; none when the exterior ring is empty (as `[]`). */
  private polygon(rings: unknown[], z: boolean): void {
    this.header(3, z);
    if (rings.length === 0 || array(rings[0]).length === 0) {
      for (const ring of rings) {
        if (array(ring).length > 0) {
          throw new GeometryShapeError('a polygon with an empty exterior ring and an interior ring');
        }
      }
      this.uint32(0);
      return;
    }
    this.uint32(rings.length);
    for (const ring of rings) {
      const positions = array(ring);
      this.uint32(positions.length);
      for (const p of positions) this.position(array(p), z);
    }
  }

  /** Packed coordinates nested as type `code` says (none empty), written as the arrays would be. */
  private packed(code: number, p: PackedCoordinates): void {
    const z = p.dims === 3;
    this.from = p;
    this.next = p.valueFrom;
    this.nextCount = p.countFrom;
    switch (code) {
      case 1:
        this.header(1, z);
        this.run(1);
        return;
      case 2:
        this.packedLine(z);
        return;
      case 3:
        this.packedPolygon(z);
        return;
      default: {
        // A multi: its members' count, then each member as a geometry of its own.
        const members = this.count();
        this.header(code, z, members);
        for (let m = 0; m < members; m++) {
          if (code === 4) {
            this.header(1, z);
            this.run(1);
          } else if (code === 5) this.packedLine(z);
          else this.packedPolygon(z);
        }
      }
    }
  }

  private packedLine(z: boolean): void {
    const n = this.count();
    this.header(2, z, n);
    this.run(n);
  }

  private packedPolygon(z: boolean): void {
    const rings = this.count();
    this.header(3, z, rings);
    for (let r = 0; r < rings; r++) {
      const n = this.count();
      this.uint32(n);
      this.run(n);
    }
  }

  /** The packed geometry being written, its next number and its next list length. */
  private from: PackedCoordinates | undefined;
  private next = 0;
  private nextCount = 0;

  private count(): number {
    return (this.from as PackedCoordinates).counts[this.nextCount++] as number;
  }

  /** The next `n` positions of the packed geometry. */
  private run(n: number): void {
    const p = this.from as PackedCoordinates;
    const count = n * p.dims;
    this.room(count * 8);
    const values = p.values;
    for (let k = 0; k < count; k++) {
      this.view.setFloat64(this.at, values[this.next++] as number, true);
      this.at += 8;
    }
  }

  private position(p: unknown[], z: boolean): void {
    if (p.length < 2) throw new GeometryShapeError('a position with fewer than 2 numbers');
    const n = p.length < 3 ? p.length : 3;
    for (let i = 0; i < n; i++) {
      const v = p[i];
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw new GeometryShapeError(`a position that is not numbers: ${JSON.stringify(p).slice(0, 60)}`);
      }
    }
    this.double(p[0] as number);
    this.double(p[1] as number);
    if (z) {
      if (n < 3)
        throw new GeometryShapeError('a position without Z in a geometry whose first position has Z');
      this.double(p[2] as number);
    }
  }

  /** Byte order, type word and, when given, the count that follows them; returns where it began. */
  private header(code: number, z: boolean, count?: number): number {
    const start = this.at;
    this.room(9);
    this.view.setUint8(this.at, 1);
    this.view.setUint32(this.at + 1, (z ? Z_FLAG | code : code) >>> 0, true);
    this.at += 5;
    if (count !== undefined) this.uint32(count);
    return start;
  }

  private markZ(start: number): void {
    this.view.setUint32(start + 1, (this.view.getUint32(start + 1, true) | Z_FLAG) >>> 0, true);
  }

  private uint32(n: number): void {
    this.room(4);
    this.view.setUint32(this.at, n, true);
    this.at += 4;
  }

  private double(n: number): void {
    this.room(8);
    this.view.setFloat64(this.at, n, true);
    this.at += 8;
  }

  private room(n: number): void {
    if (this.at + n <= this.bytes.byteLength) return;
    const bigger = new ArrayBuffer(Math.max(this.bytes.byteLength * 2, this.at + n));
    new Uint8Array(bigger).set(new Uint8Array(this.bytes, 0, this.at));
    this.bytes = bigger;
    this.view = new DataView(bigger);
  }
}

/** `value` when it is an array (coordinates one level deeper); throws otherwise. */
function array(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new GeometryShapeError('coordinates nested too shallowly');
  return value;
}

/** The thread's one writer: geometryText runs to completion, so one buffer serves every call. */
const writer = new WkbWriter();
