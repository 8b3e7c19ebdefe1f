import { describe, expect, it } from 'vitest';
import { InvalidInputError, RuleViolationError } from '#domain/errors.ts';
import {
  globToRegExp,
  isActive,
  parseGranuleFilter,
  relativeSource,
  requireMosaic,
  sourceUri,
} from '#domain/mosaics.ts';
import type { Service } from '#domain/services.ts';

describe('granule lifetimes', () => {
  it.each([
    [{ added_generation: 1 }, 1, true],
    [{ added_generation: 2 }, 1, false],
    [{ added_generation: 1, removed_generation: 3 }, 2, true],
    [{ added_generation: 1, removed_generation: 3 }, 3, false],
    [{ added_generation: 1, removed_generation: 3 }, 4, false],
  ])('%o is active at %i: %s', (g, generation, expected) => {
    expect(isActive(g, generation)).toBe(expected);
  });
});

describe('sources inside the root', () => {
  const root = '/data/rasters';
  it.each([
    ['a.tif', 'a.tif'],
    ['./sub//b.tif', 'sub/b.tif'],
    ['/data/rasters/sub/c.tif', 'sub/c.tif'],
    ['file:///data/rasters/d.tif', 'd.tif'],
  ])('%s → %s', (uri, expected) => {
    expect(relativeSource(root, uri)).toBe(expected);
    expect(relativeSource(`${root}/`, uri)).toBe(expected);
  });

  it.each([
    '../x.tif',
    'sub/../../x.tif',
    'sub/..',
    '/data/rasters-evil/x.tif',
    '/etc/passwd',
    '/data/rasters',
    's3://bucket/x.tif',
    'a\\..\\b.tif',
    '',
  ])('refuses %j with a 400', (uri) => {
    expect(() => relativeSource(root, uri)).toThrow(InvalidInputError);
  });

  it('keeps S3 sources inside their prefix', () => {
    expect(relativeSource('s3://bucket/prefix', 's3://bucket/prefix/a/b.tif')).toBe('a/b.tif');
    expect(() => relativeSource('s3://bucket/prefix', 's3://bucket/other/b.tif')).toThrow(InvalidInputError);
    expect(sourceUri('s3://bucket/prefix/', 'a.tif')).toBe('s3://bucket/prefix/a.tif');
  });
});

describe('harvest patterns', () => {
  it.each([
    ['*.tif', 'a.tif', true],
    ['*.tif', 'sub/a.tif', false],
    ['**/*.tif', 'a.tif', true],
    ['**/*.tif', 'x/y/a.tif', true],
    ['**/*.{tif,tiff}', 'x/a.tiff', true],
    ['**/*.{tif,tiff}', 'x/a.tifx', false],
    ['2024-??/*.tif', '2024-01/a.tif', true],
    ['a+b.tif', 'a+b.tif', true],
    ['a+b.tif', 'aab.tif', false],
  ])('%s matches %s: %s', (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });

  it.each(['../*.tif', '/abs/*.tif', 'a/../b', '{a,b'])('refuses %s with a 400', (glob) => {
    expect(() => globToRegExp(glob)).toThrow(InvalidInputError);
  });
});

describe('granule filters', () => {
  it('parses bbox and time instants or intervals', () => {
    expect(parseGranuleFilter({ bbox: '0,1,2,3' })).toEqual({ bbox: [0, 1, 2, 3] });
    expect(parseGranuleFilter({ time: '2024-01-01T00:00:00Z' })).toEqual({
      time: { start: '2024-01-01T00:00:00.000Z', end: '2024-01-01T00:00:00.000Z' },
    });
    expect(parseGranuleFilter({ time: '../2024-01-01T00:00:00+01:00' })).toEqual({
      time: { end: '2023-12-31T23:00:00.000Z' },
    });
  });

  it.each([
    { bbox: '0,1,2' },
    { bbox: '2,1,0,3' },
    { bbox: '0,,2,3' },
    { bbox: '0,1,2,Infinity' },
    { time: '2024-01-01' },
    { time: 'a/b/c' },
  ])('refuses %o with a 400', (query) => {
    expect(() => parseGranuleFilter(query)).toThrow(InvalidInputError);
  });
});

it('refuses mosaic operations on a PostGIS service with a 422', () => {
  const pg = { name: 'pg', type: 'postgis' } as Service;
  expect(() => requireMosaic(pg)).toThrow(RuleViolationError);
});
