import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures, sniffFormat } from '#datasources/imports/formats/index.ts';
import { collect, expectInputError, expectLinesAtEnds, tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe('CSV', () => {
  const latLon = [
    'Name,LAT,lon,pop,big,ratio,ok,zip',
    'a,45.5,7.25,100,5000000000,1.5,true,007',
    'b,46,8,,1,2,FALSE,123',
    '"c, quoted",-10,-20,3,2,3.25,true,9',
  ].join('\n');

  it('detects lat/lon columns, infers field types and reads points with skip', async () => {
    const path = tmp.file('places.csv', `${latLon}\n`);
    expect(await sniffFormat(path, 'places.csv')).toBe('csv');
    const discovery = await discover(path, 'places.csv');
    expect(discovery.layers[0]).toMatchObject({
      name: 'places',
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 3,
      bbox: [-20, -10, 8, 46],
      csv: { lat: 'LAT', lon: 'lon' },
    });
    expect(discovery.layers[0]?.fields).toEqual([
      { name: 'Name', type: 'text' },
      { name: 'LAT', type: 'double precision' },
      { name: 'lon', type: 'double precision' },
      { name: 'pop', type: 'integer' },
      { name: 'big', type: 'bigint' },
      { name: 'ratio', type: 'double precision' },
      { name: 'ok', type: 'boolean' },
      { name: 'zip', type: 'text' },
    ]);
    const all = await collect(readFeatures(path, 'places.csv', 'places'));
    expect(all[0]).toEqual({
      properties: {
        Name: 'a',
        LAT: '45.5',
        lon: '7.25',
        pop: '100',
        big: '5000000000',
        ratio: '1.5',
        ok: 'true',
        zip: '007',
      },
      geometry: { type: 'Point', coordinates: [7.25, 45.5] },
      // Where the next row begins: just past this row's line end.
      end: latLon.indexOf('\n', latLon.indexOf('\n') + 1) + 1,
      // The lines before there: the header's and this row's.
      lines: 2,
    });
    expect(all[1]?.properties.pop).toBeNull();
    expect(all[2]?.properties.Name).toBe('c, quoted');
    expect(await collect(readFeatures(path, 'places.csv', 'places', { skip: 2 }))).toEqual(all.slice(2));
  });

  it('detects a WKT column by value with ; delimiters; srid null when not lon/lat', async () => {
    const path = tmp.file(
      'parcels.csv',
      'id;shape_text\n1;POLYGON((2600000 1200000, 2600010 1200000, 2600010 1200010, 2600000 1200000))\n2;MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))\n',
    );
    const discovery = await discover(path, 'parcels.csv');
    expect(discovery.layers[0]).toMatchObject({
      geometry_type: 'MultiPolygon',
      srid: null,
      csv: { wkt: 'shape_text' },
      bbox: [0, 0, 2600010, 1200010],
    });
    expect(discovery.layers[0]?.fields).toEqual([{ name: 'id', type: 'integer' }]);
    const [first] = await collect(readFeatures(path, 'parcels.csv', 'parcels'));
    expect(first?.geometry).toEqual({
      wkt: 'POLYGON((2600000 1200000, 2600010 1200000, 2600010 1200010, 2600000 1200000))',
    });
  });

  it('takes a WKT column by name (tab-delimited) with srid 4326 in range, and the csv override', async () => {
    const path = tmp.file('lines.tsv', 'WKT\tx_coord\ty_coord\nLINESTRING(1 2, 3 4)\t10\t20\n');
    expect((await discover(path, 'lines.tsv')).layers[0]).toMatchObject({
      geometry_type: 'LineString',
      srid: 4326,
      csv: { wkt: 'WKT' },
    });
    const [f] = await collect(
      readFeatures(path, 'lines.tsv', 'lines', { csv: { lat: 'y_coord', lon: 'x_coord' } }),
    );
    expect(f?.geometry).toEqual({ type: 'Point', coordinates: [10, 20] });
  });

  it('loads a CSV without geometry columns as an attribute-only layer', async () => {
    const path = tmp.file('table.csv', 'a,b\n1,x\n2,y\n');
    const discovery = await discover(path, 'table.csv');
    expect(discovery.layers[0]).toMatchObject({
      geometry_type: null,
      srid: null,
      feature_count: 2,
      bbox: null,
    });
    expect(discovery.warnings.join()).toMatch(/without geometry/);
    expect((await collect(readFeatures(path, 'table.csv', 'table')))[1]).toEqual({
      properties: { a: '2', b: 'y' },
      geometry: null,
      end: expect.any(Number),
      lines: 3,
    });
  });

  it('names the line of a malformed row, bad coordinates, invalid UTF-8 and out-of-range values', async () => {
    await expectInputError(
      () => discover(tmp.file('q.csv', 'a,b\n1,2\n3,"4\n5,6,7\n'), 'q.csv'),
      'malformed_csv',
      /line 3|line 4/,
    );
    await expectInputError(
      () => discover(tmp.file('c.csv', 'a,b,c\n1,2,3\n1,2\n'), 'c.csv'),
      'malformed_csv',
      /line 3/,
    );
    await expectInputError(
      () => discover(tmp.file('n.csv', 'lat,lon\n1,2\nabc,3\n'), 'n.csv'),
      'invalid_coordinates',
      /Line 3/,
    );
    const bytes = Buffer.from('name,lat,lon\nok,1,2\nXX,3,4\n');
    bytes[bytes.indexOf(Buffer.from('XX'))] = 0xe9;
    await expectInputError(() => discover(tmp.file('l.csv', bytes), 'l.csv'), 'invalid_utf8', /line 3\b/);
    await expectInputError(
      () => discover(tmp.file('r.csv', 'lat,lon\n1,2\n3,200\n'), 'r.csv'),
      'coordinates_out_of_range',
      /Line 3.*200/,
    );
    await expectInputError(
      () => discover(tmp.file('w.csv', 'id,wkt\n1,POINT(1 2)\n2,POINT(1 \n'), 'w.csv'),
      'invalid_geometry',
      /line 3/,
    );
  });

  it('resumes by position without parsing the rows before, and still names lines right (ADR 0143)', async () => {
    // Prepare: a BOM, CRLF line ends, a quoted cell across lines; rows 2–10 made unparseable later
    const rows = Array.from({ length: 30 }, (_, i) =>
      i === 3 ? `r${i},"two\r\nlines",${i},${i / 2}` : `r${i},plain ${i},${i},${i / 2}`,
    );
    const text = (body: string[]) => `\uFEFFname,note,lon,lat\r\n${body.join('\r\n')}\r\n`;
    const path = tmp.file('rows.csv', text(rows));
    const all = await collect(readFeatures(path, 'rows.csv', 'rows'));
    const at = all[9]?.end as number;
    // Rows 1–9 given an unclosed quote: a read from the top fails on them; the lengths stay.
    const broken = rows.map((row, i) => (i >= 1 && i < 10 ? row.replace(/^r/, '"') : row));
    const brokenPath = tmp.file('rows-broken.csv', text(broken));
    const bad = [...broken];
    bad[24] = 'r24,plain 24,east,12';
    const badPath = tmp.file('rows-bad.csv', text(bad));

    // Act
    const resumed = await collect(
      readFeatures(brokenPath, 'rows-broken.csv', 'rows-broken', { skip: 10, offset: at }),
    );

    // Assess
    expect(all).toHaveLength(30);
    expect(all[3]?.properties.note).toBe('two\r\nlines');
    expect(resumed).toEqual(all.slice(10));
    await expectInputError(
      () => collect(readFeatures(brokenPath, 'rows-broken.csv', 'rows-broken')),
      'malformed_csv',
    );
    const badFromTop = rows.map((row, i) => (i === 24 ? 'r24,plain 24,east,12' : row));
    await expectInputError(
      () =>
        collect(
          readFeatures(tmp.file('rows-bad-top.csv', text(badFromTop)), 'rows-bad-top.csv', 'rows-bad-top'),
        ),
      'invalid_coordinates',
      /^Line 27\b/,
    );
    // Line 27: the header, 24 rows, and the row of two lines before it (its CR LF one line break,
    // where csv-parse's own count would say two: a read from the top says the same).
    await expectInputError(
      () => collect(readFeatures(badPath, 'rows-bad.csv', 'rows-bad', { skip: 10, offset: at })),
      'invalid_coordinates',
      /^Line 27\b/,
    );
    // Each row says how many lines come before its end (the record delimiter included), and a
    // resume given them numbers on from there without counting: 100 more, line 127.
    expectLinesAtEnds(all, text(rows));
    const lines = all[9]?.lines as number;
    expect(
      await collect(
        readFeatures(brokenPath, 'rows-broken.csv', 'rows-broken', { skip: 10, offset: at, lines }),
      ),
    ).toEqual(all.slice(10));
    await expectInputError(
      () => collect(readFeatures(badPath, 'rows-bad.csv', 'rows-bad', { skip: 10, offset: at, lines })),
      'invalid_coordinates',
      /^Line 27\b/,
    );
    await expectInputError(
      () =>
        collect(
          readFeatures(badPath, 'rows-bad.csv', 'rows-bad', { skip: 10, offset: at, lines: lines + 100 }),
        ),
      'invalid_coordinates',
      /^Line 127\b/,
    );
  });

  it('refuses a record over the size limit', async () => {
    const path = tmp.file('big.csv', `a,b\n1,${'x'.repeat(5000)}\n`);
    await expectInputError(
      () => collect(readFeatures(path, 'big.csv', 'big', { limits: { maxFeatureBytes: 1000 } })),
      'feature_too_large',
    );
  });

  it('refuses text without a delimiter', async () => {
    await expectInputError(
      () => sniffFormat(tmp.file('t.csv', 'just some words\n'), 't.csv'),
      'unsupported_format',
      /delimiter/,
    );
  });
});
