import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#domain/errors.ts';
import {
  CRS84,
  checkFeatureId,
  collectionCrs,
  DEFAULT_LIMIT,
  decodeFeatureCursor,
  encodeFeatureCursor,
  type FeatureQueryContext,
  itemLimits,
  parseFeatureQuery,
  type QueryParams,
  timeDimension,
} from '#domain/feature-query.ts';

const EPSG = (code: number) => `http://www.opengis.net/def/crs/EPSG/0/${code}`;

/** A layer stored in EPSG:2154 (east/north) with three queryables, a time dimension and limits 50/500. */
function context(overrides: Partial<FeatureQueryContext> = {}): FeatureQueryContext {
  return {
    settings: { limit_default: 50, limit_max: 500 },
    crs: collectionCrs(2154),
    queryables: [
      { name: 'name', type: 'string' },
      { name: 'rank', type: 'integer' },
      { name: 'ratio', type: 'number' },
      { name: 'open', type: 'boolean' },
    ],
    temporal: true,
    passThrough: ['f'],
    ...overrides,
  };
}

const parse = (params: QueryParams, ctx = context()) => parseFeatureQuery(params, ctx);

/** The InvalidInputError parse throws, with its parameter. */
function refusal(params: QueryParams, ctx = context()): { parameter: unknown; message: string } {
  try {
    parse(params, ctx);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return { parameter: (error as InvalidInputError).extra?.parameter, message: (error as Error).message };
  }
  throw new Error(`accepted ${JSON.stringify(params)}`);
}

describe('parseFeatureQuery — good forms', () => {
  it('defaults: limit from the settings, CRS84 output, no filters', () => {
    // Prepare / Act
    const q = parse({});
    // Assess
    expect(q).toEqual({ limit: 50, limitClamped: false, crs: collectionCrs(2154)[0], filters: [] });
    expect(q.crs.uri).toBe(CRS84);
  });

  it('takes limit as given up to the maximum and lowers a larger one to it', () => {
    expect(parse({ limit: '7' })).toMatchObject({ limit: 7, limitClamped: false });
    expect(parse({ limit: '500' })).toMatchObject({ limit: 500, limitClamped: false });
    expect(parse({ limit: '501' })).toMatchObject({ limit: 500, limitClamped: true });
    expect(parse({ limit: '9007199254740991' })).toMatchObject({ limit: 500, limitClamped: true });
  });

  it('uses OGC default 10 and the server ceiling 10,000 without workspace settings', () => {
    expect(itemLimits()).toEqual({ default: DEFAULT_LIMIT, max: 10_000 });
    expect(itemLimits({ limit_default: 900, limit_max: 100 })).toEqual({ default: 100, max: 100 });
    expect(parse({ limit: '20000' }, context({ settings: {} }))).toMatchObject({ limit: 10_000 });
  });

  it('reads a CRS84 bbox of 4 numbers as lon/lat', () => {
    expect(parse({ bbox: '-10.5,40,5,50.25' }).bbox).toMatchObject({
      minx: -10.5,
      miny: 40,
      maxx: 5,
      maxy: 50.25,
      crossesAntimeridian: false,
      crs: { uri: CRS84, srid: 4326 },
    });
  });

  it('reads 6 numbers as a box with heights, which are checked and dropped', () => {
    expect(parse({ bbox: '1,2,-100,3,4,100' }).bbox).toMatchObject({ minx: 1, miny: 2, maxx: 3, maxy: 4 });
  });

  it('swaps a bbox in EPSG:4326 (latitude first) to lon/lat', () => {
    const q = parse({ bbox: '40,-10,50,5', 'bbox-crs': EPSG(4326) });
    expect(q.bbox).toMatchObject({
      minx: -10,
      miny: 40,
      maxx: 5,
      maxy: 50,
      crs: { srid: 4326, latFirst: true },
    });
  });

  it('takes a bbox in EPSG:3857 and in the storage CRS, also as safe CURIE or https URI', () => {
    expect(parse({ bbox: '-1000,-2000,1000,2000', 'bbox-crs': '[EPSG:3857]' }).bbox).toMatchObject({
      minx: -1000,
      miny: -2000,
      crs: { srid: 3857 },
    });
    expect(parse({ bbox: '700000,6600000,710000,6610000', 'bbox-crs': EPSG(2154) }).bbox?.crs.srid).toBe(
      2154,
    );
    expect(
      parse({ bbox: '1,2,3,4', 'bbox-crs': 'https://www.opengis.net/def/crs/OGC/1.3/CRS84' }).bbox?.crs.uri,
    ).toBe(CRS84);
  });

  it('reads a west edge east of the east edge as a box across the antimeridian', () => {
    expect(parse({ bbox: '170,-20,-170,-10' }).bbox).toMatchObject({
      minx: 170,
      maxx: -170,
      crossesAntimeridian: true,
    });
  });

  it('offers CRS84, EPSG:4326, EPSG:3857 and the storage CRS as output', () => {
    expect(parse({ crs: EPSG(4326) }).crs).toEqual({ uri: EPSG(4326), srid: 4326, latFirst: true });
    expect(parse({ crs: EPSG(3857) }).crs).toEqual({ uri: EPSG(3857), srid: 3857, latFirst: false });
    expect(parse({ crs: EPSG(2154) }).crs).toEqual({ uri: EPSG(2154), srid: 2154, latFirst: false });
    expect(parse({ crs: CRS84 }).crs.latFirst).toBe(false);
    const northFirst = context({ crs: collectionCrs(4258, [], new Set([4258])) });
    expect(parse({ crs: EPSG(4258) }, northFirst).crs.latFirst).toBe(true);
  });

  it.each([
    [
      'an instant',
      '2020-01-02T03:04:05Z',
      { start: '2020-01-02T03:04:05.000Z', end: '2020-01-02T03:04:05.000Z' },
    ],
    ['an offset instant', '2020-01-02T03:04:05.5+02:00', { start: '2020-01-02T01:04:05.500Z' }],
    [
      'a date (that whole day)',
      '2020-01-02',
      { start: '2020-01-02T00:00:00.000Z', end: '2020-01-03T00:00:00.000Z', endExclusive: true },
    ],
    [
      'a closed interval',
      '2020-01-01T00:00:00Z/2020-02-01T00:00:00Z',
      { start: '2020-01-01T00:00:00.000Z', end: '2020-02-01T00:00:00.000Z', endExclusive: false },
    ],
    ['an interval open at the start', '../2020-02-01T00:00:00Z', { end: '2020-02-01T00:00:00.000Z' }],
    ['an interval open at the end', '2020-01-01T00:00:00Z/..', { start: '2020-01-01T00:00:00.000Z' }],
    ['an empty open end', '2020-01-01T00:00:00Z/', { start: '2020-01-01T00:00:00.000Z' }],
  ])('reads datetime as %s', (_what, value, expected) => {
    expect(parse({ datetime: value }).datetime).toMatchObject(expected);
  });

  it('reads an interval open at both ends as no datetime filter', () => {
    expect(parse({ datetime: '../..' }).datetime).toBeUndefined();
  });

  it('turns queryable properties into equality filters, typed values trimmed, strings as given', () => {
    const q = parse(new URLSearchParams('name=%20Paris&rank=%2B3&ratio=1.5e2&open=true&f=json'));
    expect(q.filters).toEqual([
      { name: 'name', value: ' Paris' },
      { name: 'rank', value: '+3' },
      { name: 'ratio', value: '1.5e2' },
      { name: 'open', value: 'true' },
    ]);
  });

  it('round-trips the cursor it makes', () => {
    const cursor = encodeFeatureCursor('1234');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(parse({ next: cursor }).after).toBe('1234');
    expect(decodeFeatureCursor(encodeFeatureCursor('a/b "c"'))).toBe('a/b "c"');
  });

  it('finds the time dimension only when it names a source property', () => {
    const time = { name: 'time', units: 'ISO8601', extent: '', source_property: 't' };
    expect(timeDimension([{ name: 'elevation', units: 'm', extent: '' }, time])).toBe(time);
    expect(timeDimension([{ name: 'Time', units: 'ISO8601', extent: '' }])).toBeUndefined();
    expect(timeDimension(undefined)).toBeUndefined();
  });

  it('accepts a feature id of text and refuses one that cannot be bound', () => {
    expect(checkFeatureId('42')).toBe('42');
    expect(checkFeatureId('a b/é')).toBe('a b/é');
    expect(checkFeatureId(decodeURIComponent('4%002'))).toBeUndefined();
    expect(checkFeatureId('')).toBeUndefined();
    expect(checkFeatureId('x'.repeat(1025))).toBeUndefined();
  });
});

describe('parseFeatureQuery — every bad input is a 400 naming its parameter', () => {
  it.each<[string, QueryParams, string]>([
    ['bbox with 3 numbers', { bbox: '1,2,3' }, 'bbox'],
    ['bbox with 5 numbers', { bbox: '1,2,3,4,5' }, 'bbox'],
    ['bbox with NaN', { bbox: '1,NaN,3,4' }, 'bbox'],
    ['bbox with Infinity', { bbox: '1,2,Infinity,4' }, 'bbox'],
    ['bbox with an empty number', { bbox: '1,,3,4' }, 'bbox'],
    ['bbox with hex', { bbox: '0x10,2,3,4' }, 'bbox'],
    ['bbox with an overflowing number', { bbox: '1e400,2,3,4' }, 'bbox'],
    ['bbox with inverted latitudes', { bbox: '0,50,10,40' }, 'bbox'],
    ['bbox with a latitude beyond 90', { bbox: '0,-91,10,40' }, 'bbox'],
    ['bbox with a longitude beyond 180', { bbox: '-181,0,10,40' }, 'bbox'],
    ['bbox with inverted heights', { bbox: '0,0,10,1,1,5' }, 'bbox'],
    [
      'EPSG:4326 bbox with inverted latitudes (first axis)',
      { bbox: '50,0,40,10', 'bbox-crs': EPSG(4326) },
      'bbox',
    ],
    ['projected bbox with inverted x', { bbox: '10,0,-10,5', 'bbox-crs': EPSG(3857) }, 'bbox'],
    ['bbox with a NUL', { bbox: '1,2,3,4\u0000' }, 'bbox'],
    ['unknown bbox-crs', { bbox: '1,2,3,4', 'bbox-crs': EPSG(9999) }, 'bbox-crs'],
    ['bbox-crs that is not a URI', { bbox: '1,2,3,4', 'bbox-crs': 'EPSG:4326' }, 'bbox-crs'],
    ['unknown crs', { crs: EPSG(27700) }, 'crs'],
    ['crs garbage', { crs: 'wgs84' }, 'crs'],
    ['limit 0', { limit: '0' }, 'limit'],
    ['negative limit', { limit: '-5' }, 'limit'],
    ['fractional limit', { limit: '2.5' }, 'limit'],
    ['limit in exponent form', { limit: '1e3' }, 'limit'],
    ['empty limit', { limit: '' }, 'limit'],
    ['huge limit beyond any integer', { limit: '99999999999999999999999' }, 'limit'],
    ['datetime garbage', { datetime: 'yesterday' }, 'datetime'],
    ['datetime with an impossible date', { datetime: '2021-02-30' }, 'datetime'],
    ['datetime with an impossible hour', { datetime: '2021-02-03T25:00:00Z' }, 'datetime'],
    ['datetime without a zone', { datetime: '2021-02-03T10:00:00' }, 'datetime'],
    ['datetime instant ".."', { datetime: '..' }, 'datetime'],
    ['datetime interval backwards', { datetime: '2021-02-03T00:00:00Z/2021-01-01T00:00:00Z' }, 'datetime'],
    ['datetime with two slashes', { datetime: '2021-01-01/2021-01-02/2021-01-03' }, 'datetime'],
    ['integer property with a word', { rank: 'three' }, 'rank'],
    ['number property with NaN', { ratio: 'NaN' }, 'ratio'],
    ['boolean property with yes', { open: 'yes' }, 'open'],
    ['string property with a NUL (%00)', new URLSearchParams('name=Par%00is'), 'name'],
    ['unknown property', { colour: 'red' }, 'colour'],
    ['unknown parameter', { offset: '10' }, 'offset'],
    ['a parameter given twice', new URLSearchParams('limit=1&limit=2'), 'limit'],
    ['a cursor that is not base64url', { next: 'not a cursor!' }, 'next'],
    ['a cursor that is base64url of garbage', { next: 'AAAA' }, 'next'],
    ['a cursor of another shape', { next: Buffer.from('{"v":2,"after":"1"}').toString('base64url') }, 'next'],
    ['a cursor with a NUL id', { next: encodeFeatureCursor('1\u00002') }, 'next'],
  ])('refuses %s', (_what, params, parameter) => {
    const r = refusal(params);
    expect(r.parameter).toBe(parameter);
    expect(r.message).toMatch(/^Invalid /);
  });

  it('refuses datetime on a collection without a time dimension (an unknown parameter there)', () => {
    const r = refusal({ datetime: '2020-01-01T00:00:00Z' }, context({ temporal: false }));
    expect(r).toMatchObject({ parameter: 'datetime', message: expect.stringMatching(/no time dimension/) });
  });

  it('refuses f unless the endpoint passes it through', () => {
    expect(parse({ f: 'json' }).filters).toEqual([]);
    expect(refusal({ f: 'json' }, context({ passThrough: [] })).parameter).toBe('f');
  });
});
