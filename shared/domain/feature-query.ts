/**
 * The query parameters of OGC API Features `/collections/{id}/items` (17-069r4 Part 1, 18-058r1
 * Part 2), parsed and checked without touching a database (ADR 0121). Every bad value is an
 * InvalidInputError naming the parameter, so an endpoint answers 400, never 500.
 */
import { InvalidInputError } from './errors.ts';
import type { Dimension } from './layers.ts';
import type { OGCAPISettings } from './settings.ts';
import { ceilings } from './settings.ts';

/** WGS 84 longitude/latitude, the default CRS of Part 1. */
export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
const EPSG_PREFIX = 'http://www.opengis.net/def/crs/EPSG/0/';

/** The URI of an EPSG code, as Part 2 names CRSs. */
export function epsgUri(srid: number): string {
  return `${EPSG_PREFIX}${srid}`;
}

/** A CRS a request may name: its URI (the Content-Crs value) and the PostGIS SRID it maps to. */
export interface Crs {
  uri: string;
  srid: number;
  /**
   * The first axis is latitude or northing: EPSG:4326 by its definition; for SRIDs other than
   * 4326 and 3857 the data source's spatial_ref_sys says (ADR 0121).
   */
  latFirst: boolean;
}

/** The query parameter carrying the opaque paging cursor of `next` links. */
export const CURSOR_PARAM = 'next';
/** What `limit` is without a workspace setting (OGC's own example default). */
export const DEFAULT_LIMIT = 10;

/** A bounding box in the coordinates of `crs`, x east / y north (normalised from the request's axis order). */
export interface QueryBox {
  minx: number;
  miny: number;
  maxx: number;
  maxy: number;
  crs: Crs;
  /** Longitude wraps: minx > maxx on a geographic CRS, the box spans the antimeridian. */
  crossesAntimeridian: boolean;
}

/**
 * A datetime filter as an interval: `start` and `end` are ISO instants, absent when open.
 * `endExclusive` when the end came from a date (the whole day up to the next midnight UTC).
 */
export interface QueryTime {
  start?: string;
  end?: string;
  endExclusive: boolean;
}

/** A property equality filter (`name=value`) on a queryable property. */
export interface PropertyFilter {
  name: string;
  value: string;
}

/** A checked items query. */
export interface FeatureQuery {
  limit: number;
  /** True when the requested limit was over the maximum and was lowered to it. */
  limitClamped: boolean;
  bbox?: QueryBox;
  /** The output CRS (Content-Crs). */
  crs: Crs;
  datetime?: QueryTime;
  filters: PropertyFilter[];
  /** The id (as text) the page starts after, from the cursor. */
  after?: string;
}

/** A queryable property and the JSON type its values take (as describeSql reports columns). */
export interface Queryable {
  name: string;
  type: string;
}

/** What the parser needs to know about the collection and the workspace. */
export interface FeatureQueryContext {
  /** The workspace's OGC API settings (limit_default, limit_max). */
  settings?: Pick<OGCAPISettings, 'limit_default' | 'limit_max'>;
  /** The CRSs the collection offers (from {@link collectionCrs}, axis order resolved), CRS84 first. */
  crs: readonly Crs[];
  /** Properties that may be filtered by equality. */
  queryables: readonly Queryable[];
  /** True when the layer has a time dimension that datetime can filter on. */
  temporal: boolean;
  /** Parameters the endpoint handles itself (e.g. `f`): accepted and left alone. */
  passThrough?: readonly string[];
}

/** Parameters of the items query itself; anything else must be a queryable or passed through. */
const RESERVED = new Set(['limit', 'bbox', 'bbox-crs', 'crs', 'datetime', CURSOR_PARAM]);

/** The effective default and maximum of `limit` for a workspace's settings (ADR 0121). */
export function itemLimits(settings?: Pick<OGCAPISettings, 'limit_default' | 'limit_max'>): {
  default: number;
  max: number;
} {
  const max = Math.min(settings?.limit_max ?? ceilings.ogcapi.limit_max, ceilings.ogcapi.limit_max);
  return { default: Math.min(settings?.limit_default ?? DEFAULT_LIMIT, max), max };
}

/** The time dimension of a layer that datetime filters on: named `time`, with a source property. */
export function timeDimension(dimensions: readonly Dimension[] | undefined): Dimension | undefined {
  return dimensions?.find((d) => d.name.toLowerCase() === 'time' && Boolean(d.source_property));
}

/**
 * The CRSs a collection offers: CRS84, EPSG:4326, EPSG:3857, then its storage CRS and others;
 * `latFirst` says which of those SRIDs have latitude (northing) first.
 */
export function collectionCrs(
  storageSrid: number,
  otherSrids: readonly number[] = [],
  latFirst: ReadonlySet<number> = new Set(),
): Crs[] {
  const list: Crs[] = [
    { uri: CRS84, srid: 4326, latFirst: false },
    { uri: epsgUri(4326), srid: 4326, latFirst: true },
    { uri: epsgUri(3857), srid: 3857, latFirst: false },
  ];
  for (const srid of [storageSrid, ...otherSrids]) {
    if (!list.some((c) => c.uri === epsgUri(srid))) {
      list.push({ uri: epsgUri(srid), srid, latFirst: latFirst.has(srid) });
    }
  }
  return list;
}

function invalid(parameter: string, message: string): InvalidInputError {
  return new InvalidInputError('invalid_parameter', `Invalid ${parameter}: ${message}`, { parameter });
}

/** True when a text is safe to echo and to bind: no NUL, no control characters, not too long. */
function checkText(parameter: string, value: string, max = 1024): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(value)) throw invalid(parameter, 'it contains a control character.');
  if (value.length > max) throw invalid(parameter, `it is longer than ${max} characters.`);
  return value;
}

/** A CRS named by URI (`http://www.opengis.net/def/crs/...`) or safe CURIE (`[EPSG:3857]`). */
function parseCrs(parameter: string, value: string, offered: readonly Crs[]): Crs {
  const text = checkText(parameter, value.trim(), 256);
  const curie = /^\[(EPSG|OGC):([A-Za-z0-9]+)\]$/.exec(text);
  const uri = curie
    ? curie[1] === 'OGC'
      ? `http://www.opengis.net/def/crs/OGC/1.3/${curie[2]}`
      : `${EPSG_PREFIX}${curie[2]}`
    : text.replace(/^https:/, 'http:');
  const found = offered.find((c) => c.uri === uri);
  if (!found) {
    throw invalid(
      parameter,
      `'${text}' is not a CRS of this collection; use one of ${offered.map((c) => c.uri).join(', ')}.`,
    );
  }
  return found;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function parseNumber(parameter: string, text: string): number {
  const t = text.trim();
  const n = NUMBER.test(t) ? Number(t) : Number.NaN;
  if (!Number.isFinite(n)) throw invalid(parameter, `'${text}' is not a finite number.`);
  return n;
}

function parseLimit(value: string | undefined, limits: { default: number; max: number }) {
  if (value === undefined) return { limit: limits.default, limitClamped: false };
  const t = value.trim();
  if (!/^\+?\d+$/.test(t)) throw invalid('limit', `'${value}' is not a positive integer.`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw invalid('limit', `'${value}' is not a usable integer.`);
  if (n < 1) throw invalid('limit', 'it must be at least 1.');
  // Part 1 lets a server return fewer than asked: over the maximum is the maximum (ADR 0121).
  return n > limits.max ? { limit: limits.max, limitClamped: true } : { limit: n, limitClamped: false };
}

function parseBbox(value: string, crs: Crs): QueryBox {
  const parts = checkText('bbox', value, 512).split(',');
  if (parts.length !== 4 && parts.length !== 6) {
    throw invalid('bbox', `it needs 4 or 6 comma-separated numbers, not ${parts.length}.`);
  }
  const n = parts.map((p) => parseNumber('bbox', p));
  // 6 numbers: the third and sixth are the vertical range; checked, then ignored (2D data).
  const [a1, a2, b1, b2] = n.length === 6 ? [n[0], n[1], n[3], n[4]] : [n[0], n[1], n[2], n[3]];
  if (n.length === 6 && (n[2] as number) > (n[5] as number)) {
    throw invalid('bbox', 'its minimum height is above its maximum height.');
  }
  // Axis order of the CRS: EPSG:4326 is latitude first.
  const [minx, miny, maxx, maxy] = (crs.latFirst ? [a2, a1, b2, b1] : [a1, a2, b1, b2]) as number[] as [
    number,
    number,
    number,
    number,
  ];
  const geographic = crs.srid === 4326;
  if (miny > maxy) {
    throw invalid('bbox', `its lower ${geographic ? 'latitude' : 'y'} is above its upper one.`);
  }
  if (geographic) {
    if (miny < -90 || maxy > 90) throw invalid('bbox', 'a latitude is outside -90..90.');
    if (minx < -180 || minx > 180 || maxx < -180 || maxx > 180) {
      throw invalid('bbox', 'a longitude is outside -180..180.');
    }
  } else if (minx > maxx) {
    throw invalid('bbox', 'its lower x is right of its upper x.');
  }
  // On a geographic CRS a west edge east of the east edge spans the antimeridian (Part 1).
  return { minx, miny, maxx, maxy, crs, crossesAntimeridian: geographic && minx > maxx };
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2}))?$/;

/** One end of a datetime: an ISO instant, and whether it was a bare date. */
function parseInstant(text: string): { iso: string; date: boolean } {
  const m = DATE_TIME.exec(text);
  if (!m) throw invalid('datetime', `'${text}' is not an RFC 3339 date-time or date.`);
  const [, y, mo, d, h, mi, s] = m;
  const day = new Date(`${y}-${mo}-${d}T00:00:00Z`);
  if (
    Number.isNaN(day.getTime()) ||
    day.getUTCFullYear() !== Number(y) ||
    day.getUTCMonth() + 1 !== Number(mo) ||
    day.getUTCDate() !== Number(d)
  ) {
    throw invalid('datetime', `'${text}' is not a calendar date.`);
  }
  if (h === undefined) return { iso: day.toISOString(), date: true };
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) {
    throw invalid('datetime', `'${text}' is not a valid time of day.`);
  }
  const at = new Date(text.replace(' ', 'T'));
  if (Number.isNaN(at.getTime())) throw invalid('datetime', `'${text}' is not a valid date-time.`);
  return { iso: at.toISOString(), date: false };
}

const nextDay = (iso: string) => new Date(new Date(iso).getTime() + 86_400_000).toISOString();

function parseDatetime(value: string): QueryTime | undefined {
  const text = checkText('datetime', value.trim(), 128);
  const parts = text.split('/');
  if (parts.length === 1) {
    if (text === '..' || text === '') throw invalid('datetime', 'an instant must be a date-time.');
    const at = parseInstant(text);
    // A date is that whole day (UTC).
    return at.date
      ? { start: at.iso, end: nextDay(at.iso), endExclusive: true }
      : { start: at.iso, end: at.iso, endExclusive: false };
  }
  if (parts.length !== 2) throw invalid('datetime', `'${text}' has more than one '/'.`);
  const [s, e] = parts as [string, string];
  const open = (p: string) => p === '..' || p === '';
  const start = open(s) ? undefined : parseInstant(s);
  const end = open(e) ? undefined : parseInstant(e);
  if (!start && !end) return undefined;
  const endIso = end ? (end.date ? nextDay(end.iso) : end.iso) : undefined;
  if (start && endIso && (end?.date ? start.iso >= endIso : start.iso > endIso)) {
    throw invalid('datetime', 'the interval ends before it starts.');
  }
  return {
    ...(start ? { start: start.iso } : {}),
    ...(endIso ? { end: endIso } : {}),
    endExclusive: Boolean(end?.date),
  };
}

/** The value of a property filter, checked against the queryable's JSON type. */
function parseFilterValue(q: Queryable, value: string): string {
  const text = checkText(q.name, value);
  const bad = (what: string) => invalid(q.name, `'${value}' is not ${what}.`);
  if (q.type === 'integer' && !/^[+-]?\d{1,20}$/.test(text.trim())) throw bad('an integer');
  if (q.type === 'number' && !NUMBER.test(text.trim())) throw bad('a number');
  if (q.type === 'boolean' && !/^(true|false)$/.test(text.trim())) throw bad('true or false');
  return q.type === 'string' ? text : text.trim();
}

/** Encodes the id a page ended with as the opaque cursor of the next page. */
export function encodeFeatureCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after: lastId }), 'utf8').toString('base64url');
}

/** Decodes a cursor made by {@link encodeFeatureCursor}; anything else is a 400. */
export function decodeFeatureCursor(cursor: string): string {
  const bad = () => invalid(CURSOR_PARAM, 'it is not a cursor this API returned.');
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(cursor)) throw bad();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw bad();
  const { v, after, ...rest } = value as Record<string, unknown>;
  if (v !== 1 || typeof after !== 'string' || Object.keys(rest).length > 0) throw bad();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL can't be bound as text
  if (after.length > 1024 || /\u0000/.test(after)) throw bad();
  return after;
}

/** Query parameters as the edge hands them over: a URLSearchParams or a multi-value record. */
export type QueryParams = URLSearchParams | Record<string, string | readonly string[] | undefined>;

function entries(params: QueryParams): [string, string[]][] {
  const map = new Map<string, string[]>();
  const add = (k: string, v: string) => map.set(k, [...(map.get(k) ?? []), v]);
  if (params instanceof URLSearchParams) {
    for (const [k, v] of params) add(k, v);
  } else {
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined) continue;
      for (const one of typeof v === 'string' ? [v] : v) add(k, one);
    }
  }
  return [...map];
}

/**
 * Parses the items query of one collection (ADR 0121): `limit` (default and maximum from the
 * workspace's settings, over the maximum lowered to it), `bbox` (4 or 6 numbers, in `bbox-crs`,
 * default CRS84; a west edge east of the east edge spans the antimeridian), `crs` (CRS84,
 * EPSG:4326, EPSG:3857, the storage CRS), `datetime` (only on a layer with a time dimension),
 * property equality filters on queryables, and the `next` cursor. A parameter given twice, an
 * unknown parameter (Part 1 /req/core/query-param-unknown, datetime on a layer without time
 * included) or a bad value throws InvalidInputError.
 */
export function parseFeatureQuery(params: QueryParams, ctx: FeatureQueryContext): FeatureQuery {
  const offered = [...ctx.crs];
  if (offered[0]?.uri !== CRS84) throw new Error('the collection CRS list must start with CRS84');
  const values = new Map<string, string>();
  const filters: PropertyFilter[] = [];
  const pass = new Set(ctx.passThrough ?? []);
  for (const [name, list] of entries(params)) {
    checkText('parameter name', name, 128);
    if (list.length > 1) throw invalid(name, 'it is given more than once.');
    const value = list[0] as string;
    if (pass.has(name)) continue;
    if (RESERVED.has(name)) {
      if (name === 'datetime' && !ctx.temporal) {
        throw invalid('datetime', 'this collection has no time dimension to filter on.');
      }
      values.set(name, value);
      continue;
    }
    const queryable = ctx.queryables.find((q) => q.name === name);
    if (!queryable) throw invalid(name, 'it is not a parameter of this collection nor a queryable property.');
    filters.push({ name, value: parseFilterValue(queryable, value) });
  }
  const bboxCrsText = values.get('bbox-crs');
  const bboxCrs =
    bboxCrsText === undefined ? (offered[0] as Crs) : parseCrs('bbox-crs', bboxCrsText, offered);
  const bboxText = values.get('bbox');
  const crsText = values.get('crs');
  const datetimeText = values.get('datetime');
  const cursor = values.get(CURSOR_PARAM);
  const datetime = datetimeText === undefined ? undefined : parseDatetime(datetimeText);
  return {
    ...parseLimit(values.get('limit'), itemLimits(ctx.settings)),
    ...(bboxText !== undefined ? { bbox: parseBbox(bboxText, bboxCrs) } : {}),
    crs: crsText === undefined ? (offered[0] as Crs) : parseCrs('crs', crsText, offered),
    ...(datetime ? { datetime } : {}),
    filters,
    ...(cursor !== undefined ? { after: decodeFeatureCursor(cursor) } : {}),
  };
}

/** The output CRS of a single feature: `crs` as given (one of the collection's), default CRS84. */
export function featureCrs(offered: readonly Crs[], value: string | undefined): Crs {
  if (offered[0]?.uri !== CRS84) throw new Error('the collection CRS list must start with CRS84');
  return value === undefined ? offered[0] : parseCrs('crs', value, offered);
}

/**
 * Checks a feature id from the path: text without control characters (a `%00` decodes to NUL),
 * at most 1,024 characters. An id that can't be one of the layer's is a NotFound, decided when it
 * is read (ADR 0121); this only refuses what can't even be bound.
 */
export function checkFeatureId(id: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (id.length === 0 || id.length > 1024 || /[\u0000-\u001f\u007f]/.test(id)) return undefined;
  return id;
}
