import { afterAll, describe, expect, it } from 'vitest';
import { discover, readFeatures, sniffFormat } from '#datasources/imports/formats/index.ts';
import { collect, expectInputError, expectLinesAtEnds, point, tempDir } from '../fixtures/imports/support.ts';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const lines = (features: unknown[]) => features.map((f) => JSON.stringify(f)).join('\n');

describe('newline-delimited GeoJSON and GeoJSON Text Sequences', () => {
  const features = [point(1, 2, { a: 1 }), point(3, 4, { a: 2, b: 'x' }), point(5, 6, { a: 3.5 })];

  it('discovers NDJSON (blank lines allowed) and reads it with skip', async () => {
    const path = tmp.file('pts.ndjson', `${lines(features.slice(0, 2))}\n\n${lines(features.slice(2))}\n`);
    expect(await sniffFormat(path, 'pts.ndjson')).toBe('geojsonseq');
    const discovery = await discover(path, 'pts.ndjson');
    expect(discovery.layers[0]).toMatchObject({
      name: 'pts',
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 3,
      bbox: [1, 2, 5, 6],
      fields: [
        { name: 'a', type: 'double precision' },
        { name: 'b', type: 'text' },
      ],
    });
    const all = await collect(readFeatures(path, 'pts.ndjson', 'pts'));
    expect(all.map((f) => f.properties.a)).toEqual([1, 2, 3.5]);
    expect(await collect(readFeatures(path, 'pts.ndjson', 'pts', { skip: 1 }))).toEqual(all.slice(1));
  });

  it('resumes by position without reading the lines before, and still names lines right (ADR 0143)', async () => {
    // Prepare: 30 lines; the same with line 25 malformed
    const many = Array.from({ length: 30 }, (_, i) => JSON.stringify(point(i, i, { i })));
    const text = `${many.join('\n')}\n`;
    const path = tmp.file('many.ndjson', text);
    const all = await collect(readFeatures(path, 'many.ndjson', 'many'));
    const at = all[9]?.end as number;
    // Lines 2–10 broken (each ':' a ';', lengths kept): a reader that read them again would fail.
    const broken = (lines: string[]) =>
      `${lines.map((line, i) => (i >= 1 && i < 10 ? line.replaceAll(':', ';') : line)).join('\n')}\n`;
    const brokenPath = tmp.file('many-broken.ndjson', broken(many));
    const bad = [...many];
    bad[24] = `{"type": "Feature",, "properties": {"i": 24}, "geometry": null}`;
    const badPath = tmp.file('many-bad.ndjson', broken(bad));

    // Act
    const resumed = await collect(
      readFeatures(brokenPath, 'many-broken.ndjson', 'many-broken', { skip: 10, offset: at }),
    );

    // Assess
    expect(all).toHaveLength(30);
    expect(resumed).toEqual(all.slice(10));
    await expectInputError(
      () => collect(readFeatures(brokenPath, 'many-broken.ndjson', 'many-broken')),
      'malformed_json',
      /line 2\b/,
    );
    await expectInputError(
      () => collect(readFeatures(badPath, 'many-bad.ndjson', 'many-bad', { skip: 10, offset: at })),
      'malformed_json',
      /line 25 \(feature 24\)/,
    );
    // Each feature says how many lines come before its end: a resume given them counts nothing.
    expectLinesAtEnds(all, text);
    const lines = all[9]?.lines as number;
    expect(
      await collect(
        readFeatures(brokenPath, 'many-broken.ndjson', 'many-broken', { skip: 10, offset: at, lines }),
      ),
    ).toEqual(all.slice(10));
    await expectInputError(
      () => collect(readFeatures(badPath, 'many-bad.ndjson', 'many-bad', { skip: 10, offset: at, lines })),
      'malformed_json',
      /line 25 \(feature 24\)/,
    );
    // The lines given are the ones numbered on from (none recounted): 100 more, line 125.
    await expectInputError(
      () =>
        collect(
          readFeatures(badPath, 'many-bad.ndjson', 'many-bad', { skip: 10, offset: at, lines: lines + 100 }),
        ),
      'malformed_json',
      /line 125 \(feature 24\)/,
    );
  });

  it('says the lines before each record of an RFC 8142 sequence, records across lines included', async () => {
    const text = features.map((f) => `\x1e${JSON.stringify(f, null, 2)}\n`).join('');
    const path = tmp.file('seq-lines.geojsons', text);
    const all = await collect(readFeatures(path, 'seq-lines.geojsons', 'seq-lines'));
    expect(all.length).toBeGreaterThan(1);
    expectLinesAtEnds(all, text);
    expect(all[0]?.lines).toBeGreaterThan(1);
    const from = all[0] as { end: number; lines: number };
    expect(
      await collect(
        readFeatures(path, 'seq-lines.geojsons', 'seq-lines', {
          skip: 1,
          offset: from.end,
          lines: from.lines,
        }),
      ),
    ).toEqual(all.slice(1));
  });

  it('reads RFC 8142 sequences (records start with 0x1E, may span lines)', async () => {
    const text = features.map((f) => `\x1e${JSON.stringify(f, null, 2)}\n`).join('');
    const path = tmp.file('seq.geojsons', text);
    expect(await sniffFormat(path, 'seq.geojsons')).toBe('geojsonseq');
    expect((await discover(path, 'seq.geojsons')).layers[0]?.feature_count).toBe(3);
    expect(
      (await collect(readFeatures(path, 'seq.geojsons', 'seq', { skip: 2 }))).map((f) => f.properties.a),
    ).toEqual([3.5]);
  });

  it('names the line of malformed JSON', async () => {
    const path = tmp.file('bad.ndjson', `${lines(features)}\n{"type":"Feature",\n`);
    await expectInputError(() => discover(path, 'bad.ndjson'), 'malformed_json', /line 4\b/);
    await expectInputError(
      () => collect(readFeatures(path, 'bad.ndjson', 'bad')),
      'malformed_json',
      /line 4\b/,
    );
  });

  it('names the line of bytes that are not UTF-8', async () => {
    const bytes = Buffer.from(`${lines(features)}\n${JSON.stringify(point(0, 0, { n: 'XX' }))}\n`);
    bytes[bytes.lastIndexOf(Buffer.from('XX'))] = 0xfc;
    await expectInputError(
      () => discover(tmp.file('l1.ndjson', bytes), 'l1.ndjson'),
      'invalid_utf8',
      /line 4\b/,
    );
  });

  it('refuses mixed families, out-of-range coordinates and too large lines, naming the line', async () => {
    const line = {
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      },
    };
    await expectInputError(
      () => discover(tmp.file('m.ndjson', lines([...features, line])), 'm.ndjson'),
      'mixed_geometry_types',
      /Point \(first at line 1.*LineString \(first at line 4/,
    );
    await expectInputError(
      () => discover(tmp.file('r.ndjson', lines([point(0, 0), point(0, 95.5)])), 'r.ndjson'),
      'coordinates_out_of_range',
      /[Ll]ine 2.*95\.5/,
    );
    const big = tmp.file('big.ndjson', lines([point(0, 0), point(1, 1, { s: 'x'.repeat(3000) })]));
    await expectInputError(
      () => collect(readFeatures(big, 'big.ndjson', 'big', { limits: { maxFeatureBytes: 2048 } })),
      'feature_too_large',
      /line 2\b/,
    );
  });
});
