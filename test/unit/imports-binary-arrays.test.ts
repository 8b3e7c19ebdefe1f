import { describe, expect, it } from 'vitest';
import { copyBinary, fidArray, fieldArray, textArray, wkbArray } from '#datasources/imports/binary-arrays.ts';

/**
 * The binary arrays the embedded PostGIS's chunks go in as (ADR 0143). PostgreSQL reading them is
 * proven by the import database suite on the embedded PostGIS; here, the layout read back field
 * by field, with the texts whose UTF-8 is longest per UTF-16 unit.
 */
function readArray(buf: Buffer) {
  const [ndim, nulls, oid, count, lower] = [0, 4, 8, 12, 16].map((at) => buf.readInt32BE(at));
  const elements: (Buffer | null)[] = [];
  let at = 20;
  for (let i = 0; i < (count ?? 0); i++) {
    const length = buf.readInt32BE(at);
    at += 4;
    if (length === -1) elements.push(null);
    else {
      elements.push(buf.subarray(at, at + length));
      at += length;
    }
  }
  return { ndim, nulls, oid, count, lower, elements, rest: buf.length - at };
}

describe('binary arrays', () => {
  it('writes texts as their UTF-8, nulls as -1, and nothing after the last element', () => {
    // Prepare: 3-byte characters, 4-byte pairs, lone surrogates (written as U+FFFD, 3 bytes each)
    const texts = ['✓'.repeat(5000), '😀'.repeat(3000), '\ud800x\udc00', '', null, 'plain'];

    // Act
    const read = readArray(textArray(texts));

    // Assess
    expect(read).toMatchObject({ ndim: 1, nulls: 1, oid: 25, count: 6, lower: 1, rest: 0 });
    expect(read.elements.map((e) => e?.toString('utf8') ?? null)).toEqual([
      '✓'.repeat(5000),
      '😀'.repeat(3000),
      '\ufffdx\ufffd',
      '',
      null,
      'plain',
    ]);
  });

  it('writes hex WKB geometries as a bytea[] of their bytes, and leaves a chunk with WKT to the text array', () => {
    // Prepare: a point in little- and in big-endian WKB, and no geometry
    const little = '0101000000000000000000f03f0000000000000040';
    const big = '00000000013ff00000000000004000000000000000';

    // Act
    const read = readArray(wkbArray([little, null, big]) as Buffer);

    // Assess
    expect(read).toMatchObject({ ndim: 1, nulls: 1, oid: 17, count: 3, lower: 1, rest: 0 });
    expect(read.elements.map((e) => e?.toString('hex') ?? null)).toEqual([little, null, big]);
    expect(wkbArray([little, 'POINT(1 2)'])).toBeUndefined();
  });

  it('writes numbers, booleans and jsonb as PostgreSQL receives them', () => {
    // Act
    const ints = readArray(fieldArray('integer', [2147483647, -2147483648, null]));
    const bigs = readArray(fieldArray('bigint', ['9223372036854775807', -9007199254740991, 0]));
    const floats = readArray(fieldArray('double precision', [-0, 5e-324, 1.5]));
    const bools = readArray(fieldArray('boolean', [true, false]));
    const json = readArray(fieldArray('jsonb', ['{"k":"ü"}']));
    const fids = readArray(fidArray(2 ** 40, 3));

    // Assess
    expect(ints).toMatchObject({ oid: 23, nulls: 1, rest: 0 });
    expect(ints.elements.map((e) => e?.readInt32BE(0) ?? null)).toEqual([2147483647, -2147483648, null]);
    expect(bigs).toMatchObject({ oid: 20, nulls: 0, rest: 0 });
    expect(bigs.elements.map((e) => e?.readBigInt64BE(0))).toEqual([
      9223372036854775807n,
      -9007199254740991n,
      0n,
    ]);
    expect(floats.oid).toBe(701);
    expect(floats.elements.map((e) => e?.readDoubleBE(0))).toEqual([-0, 5e-324, 1.5]);
    expect(Object.is(floats.elements[0]?.readDoubleBE(0), -0)).toBe(true);
    expect(bools).toMatchObject({ oid: 16, rest: 0 });
    expect(bools.elements.map((e) => e?.[0])).toEqual([1, 0]);
    expect(json.oid).toBe(3802);
    expect(json.elements[0]?.[0]).toBe(1);
    expect(json.elements[0]?.subarray(1).toString('utf8')).toBe('{"k":"ü"}');
    expect(fids).toMatchObject({ oid: 20, count: 3, rest: 0 });
    expect(fids.elements.map((e) => e?.readBigInt64BE(0))).toEqual([
      2n ** 40n,
      2n ** 40n + 1n,
      2n ** 40n + 2n,
    ]);
  });

  it('has no binary form for date and timestamptz (they go as text arrays)', () => {
    expect(() => fieldArray('date', ['2020-01-01'])).toThrow(/no binary array for date/);
    expect(() => fieldArray('timestamptz', [null])).toThrow(/no binary array/);
  });
});

/** COPY's binary format read back: the header, then each row's fields (null for -1), then the trailer. */
function readCopy(buf: Buffer) {
  const signature = buf.subarray(0, 11).toString('latin1');
  const [flags, extension] = [11, 15].map((at) => buf.readInt32BE(at));
  const rows: (Buffer | null)[][] = [];
  let at = 19;
  for (;;) {
    const fields = buf.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    const row: (Buffer | null)[] = [];
    for (let f = 0; f < fields; f++) {
      const length = buf.readInt32BE(at);
      at += 4;
      row.push(length === -1 ? null : buf.subarray(at, at + length));
      if (length !== -1) at += length;
    }
    rows.push(row);
  }
  return { signature, flags, extension, rows, rest: buf.length - at };
}

describe('binary COPY (ADR 0143)', () => {
  it('writes each row as fid, its fields and its WKB, nulls as -1, and ends with the trailer', () => {
    // Prepare: two rows, a point's hex WKB and a missing geometry
    const wkb = '0101000000000000000000f03f0000000000000040';

    // Act
    const out = copyBinary(
      41,
      2,
      ['integer', 'text', 'double precision', 'boolean', 'jsonb', 'bigint'],
      [
        [7, null],
        ['é😀', ''],
        [-0, 1.5],
        [true, null],
        ['[1]', null],
        ['9223372036854775807', 3],
      ],
      [wkb, null],
    );

    // Assess
    const read = readCopy(out as Buffer);
    expect(read).toMatchObject({ signature: 'PGCOPY\n\xff\r\n\0', flags: 0, extension: 0, rest: 0 });
    const [first, second] = read.rows as [(Buffer | null)[], (Buffer | null)[]];
    expect(first.map((f) => f?.toString('hex') ?? null)).toEqual([
      '0000000000000029',
      '00000007',
      Buffer.from('é😀').toString('hex'),
      '8000000000000000',
      '01',
      '015b315d',
      '7fffffffffffffff',
      wkb,
    ]);
    expect(second.map((f) => f?.toString('hex') ?? null)).toEqual([
      '000000000000002a',
      null,
      '',
      '3ff8000000000000',
      null,
      null,
      '0000000000000003',
      null,
    ]);
  });

  it('leaves to the text format a chunk with a date or timestamptz column, or a WKT geometry', () => {
    // Act
    const dated = copyBinary(1, 1, ['text', 'date'], [['a'], ['2024-02-29']], undefined);
    const stamped = copyBinary(1, 1, ['timestamptz'], [['2024-05-01T10:00:00Z']], undefined);
    const wkt = copyBinary(
      1,
      2,
      ['integer'],
      [[1, 2]],
      ['0101000000000000000000f03f0000000000000040', 'POINT(1 2)'],
    );
    const none = copyBinary(1, 1, ['integer'], [[1]], [null]);

    // Assess
    expect(dated).toBeUndefined();
    expect(stamped).toBeUndefined();
    expect(wkt).toBeUndefined();
    expect(readCopy(none as Buffer).rows).toEqual([
      [Buffer.from('0000000000000001', 'hex'), Buffer.from('00000001', 'hex'), null],
    ]);
  });
});
