/**
 * The geometry type and bbox of a WKT (or EWKT) text in one linear pass, for CSV discovery
 * (ADR 0107): wkx's WKT parser takes time quadratic in the text's length (2 s for a 1.8 MB
 * MULTIPOINT, minutes for a 16 MB one), so a single legit but detailed geometry would stall
 * the reader. The loader hands the text to PostGIS as it is; this only checks its shape.
 */
import type { GeometryType } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import type { Box } from './scan.ts';

/** GEOMETRYCOLLECTIONs nested at most this deep (as geometry-text.ts allows). */
const MAX_DEPTH = 32;

const TYPES: Record<string, { type: GeometryType; depth: number }> = {
  POINT: { type: 'Point', depth: 1 },
  LINESTRING: { type: 'LineString', depth: 1 },
  POLYGON: { type: 'Polygon', depth: 2 },
  MULTIPOINT: { type: 'MultiPoint', depth: 1 },
  MULTILINESTRING: { type: 'MultiLineString', depth: 2 },
  MULTIPOLYGON: { type: 'MultiPolygon', depth: 3 },
  GEOMETRYCOLLECTION: { type: 'GeometryCollection', depth: 0 },
};

const WORD = /[A-Za-z]+/y;
const NUMBER = /[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const SRID = /SRID=\d+;/iy;

class Scanner {
  at = 0;
  readonly box: Box = [Infinity, Infinity, -Infinity, -Infinity];

  constructor(private readonly text: string) {}

  fail(why: string): never {
    throw new Error(`${why} at character ${this.at}`);
  }

  private skipSpace(): void {
    for (;;) {
      const c = this.text.charCodeAt(this.at);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.at++;
      else return;
    }
  }

  /** The next character (after spaces), not consumed; NaN at the end. */
  peek(): number {
    this.skipSpace();
    return this.text.charCodeAt(this.at);
  }

  expect(char: string): void {
    if (this.peek() !== char.charCodeAt(0)) this.fail(`expected '${char}'`);
    this.at++;
  }

  /** The next word (upper case), or '' when none follows. */
  word(): string {
    this.skipSpace();
    WORD.lastIndex = this.at;
    const match = WORD.exec(this.text);
    if (!match) return '';
    this.at = WORD.lastIndex;
    return match[0].toUpperCase();
  }

  /** An optional `SRID=n;` prefix. */
  srid(): void {
    this.skipSpace();
    SRID.lastIndex = this.at;
    if (SRID.exec(this.text)) this.at = SRID.lastIndex;
  }

  private number(): number | undefined {
    this.skipSpace();
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (!match) return undefined;
    this.at = NUMBER.lastIndex;
    const n = Number(match[0]);
    if (!Number.isFinite(n)) this.fail('a coordinate that is not a finite number');
    return n;
  }

  /** One position: 2 to 4 numbers; x and y extend the bbox. */
  position(): void {
    const x = this.number();
    const y = this.number();
    if (x === undefined || y === undefined) this.fail('expected a position of two numbers or more');
    if (this.number() !== undefined) this.number();
    if (x < this.box[0]) this.box[0] = x;
    if (y < this.box[1]) this.box[1] = y;
    if (x > this.box[2]) this.box[2] = x;
    if (y > this.box[3]) this.box[3] = y;
  }

  /** `( member, member… )` where a member is a position (depth 1) or such a list one level down; or EMPTY. */
  list(depth: number): void {
    if (this.peek() !== 0x28) {
      if (this.word() === 'EMPTY') return;
      this.fail("expected '(' or EMPTY");
    }
    this.at++;
    for (;;) {
      if (depth === 1) this.position();
      else this.list(depth - 1);
      if (this.peek() === 0x2c) this.at++;
      else break;
    }
    this.expect(')');
  }
}

/** A geometry: its type, after its dimension (Z, M, ZM) and its coordinates or EMPTY. */
function geometry(scanner: Scanner, nesting: number): GeometryType {
  if (nesting > MAX_DEPTH) scanner.fail('geometry collections nested too deeply');
  let name = scanner.word();
  let known = TYPES[name];
  if (!known) {
    // POINTZ, LINESTRINGM… written without a space.
    const stem = name.replace(/(ZM|Z|M)$/, '');
    known = TYPES[stem];
    name = stem;
  }
  if (!known) scanner.fail(`unknown geometry type '${name}'`);
  const next = scanner.peek();
  if (next !== 0x28) {
    const word = scanner.word();
    if (word === 'EMPTY') return known.type;
    if (!['Z', 'M', 'ZM'].includes(word)) scanner.fail("expected '(', Z, M, ZM or EMPTY");
  }
  if (known.type === 'GeometryCollection') {
    if (scanner.peek() !== 0x28) {
      if (scanner.word() !== 'EMPTY') scanner.fail("expected '(' or EMPTY");
      return known.type;
    }
    scanner.at++;
    for (;;) {
      geometry(scanner, nesting + 1);
      if (scanner.peek() === 0x2c) scanner.at++;
      else break;
    }
    scanner.expect(')');
    return known.type;
  }
  if (known.type === 'MultiPoint' && scanner.peek() === 0x28) {
    // MULTIPOINT (1 2, 3 4) and MULTIPOINT ((1 2), (3 4)) are both written.
    const start = scanner.at;
    scanner.at++;
    const nested = scanner.peek() === 0x28 || scanner.word() === 'EMPTY';
    scanner.at = start;
    scanner.list(nested ? 2 : 1);
    return known.type;
  }
  scanner.list(known.depth);
  return known.type;
}

/** The type and bbox (null when empty) of a WKT text; throws 'invalid_geometry' naming `where`. */
export function wktInfo(text: string, where: string): { type: GeometryType; box: Box | null } {
  const scanner = new Scanner(text);
  try {
    scanner.srid();
    const type = geometry(scanner, 0);
    if (!Number.isNaN(scanner.peek())) scanner.fail('unexpected text after the geometry');
    return { type, box: scanner.box[0] === Infinity ? null : scanner.box };
  } catch (error) {
    throw new ImportInputError(
      'invalid_geometry',
      `Invalid WKT at ${where}: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
}
