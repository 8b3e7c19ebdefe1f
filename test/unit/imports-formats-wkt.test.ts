import { describe, expect, it } from 'vitest';
import wkx from 'wkx';
import { geometryInfo } from '#datasources/imports/formats/scan.ts';
import { wktInfo } from '#datasources/imports/formats/wkt.ts';
import { expectInputError } from '../fixtures/imports/support.ts';

/** CSV discovery scans WKT in one linear pass (ADR 0107); it agrees with wkx on what wkx reads. */
describe('wktInfo', () => {
  it.each([
    'POINT(1 2)',
    'SRID=4326;POINT(1 2)',
    'POINT Z (1 2 3)',
    'POINTZ(1 2 3)',
    'POINT ZM (1 2 3 4)',
    'POINT EMPTY',
    'POINT(1e3 -2.5E-1)',
    'LINESTRING(1 2, 3 4)',
    'LINESTRING EMPTY',
    'POLYGON((0 0, 1 0, 1 1, 0 0),(0.2 0.2, 0.3 0.2, 0.3 0.3, 0.2 0.2))',
    'MULTIPOINT(1 2, 3 4)',
    'MULTIPOINT((1 2), (3 -4))',
    'MULTIPOINT EMPTY',
    'MULTILINESTRING((1 2, 3 4),(5 6, 7 8))',
    'MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)),((5 5, 6 5, 6 6, 5 5)))',
    'GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(3 4, 5 6))',
    'GEOMETRYCOLLECTION EMPTY',
  ])('%s: the type and bbox wkx gives', (wkt) => {
    // WKT goes to PostGIS as it is: its Z is not the WKB writer's to tell (GeometryInfo.z unset).
    const { type, box } = geometryInfo(wkx.Geometry.parse(wkt).toGeoJSON(), 'line 2');
    expect(wktInfo(wkt, 'line 2')).toEqual({ type, box });
  });

  it.each([
    ['POINT(1 )', /expected a position of two numbers or more/],
    ['POINT(1 2', /expected '\)'/],
    ['FOO(1 2)', /unknown geometry type 'FOO'/],
    ['POLYGON(1 2, 3 4)', /expected '\(' or EMPTY/],
    ['POINT(a b)', /expected a position/],
    ['POINT(1 2) trailing', /unexpected text after the geometry/],
    [`${'GEOMETRYCOLLECTION('.repeat(40)}POINT(1 2)${')'.repeat(40)}`, /nested too deeply/],
  ])('refuses %s naming where', async (wkt, why) => {
    await expectInputError(
      async () => wktInfo(wkt, 'line 7'),
      'invalid_geometry',
      /^Invalid WKT at line 7: /,
    );
    await expectInputError(async () => wktInfo(wkt, 'line 7'), 'invalid_geometry', why);
  });
});
