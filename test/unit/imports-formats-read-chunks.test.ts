import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { READ_CHUNK_BYTES } from '#datasources/imports/formats/limits.ts';
import { readChunks } from '#datasources/imports/formats/source.ts';

/**
 * The file's chunks (formats/source.ts): the first chunk read is passed on in growing pieces, so a
 * reader parses and passes on its first features before the rest of the chunk (ADR 0143); every
 * byte once, in order, the position reached reported after each piece.
 */

const dir = mkdtempSync(join(tmpdir(), 'geoplane-read-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KiB = 1024;

function file(name: string, size: number): { path: string; bytes: Buffer } {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) % 251;
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return { path, bytes };
}

async function read(path: string, start?: number) {
  const pieces: number[] = [];
  const positions: number[] = [];
  const parts: Buffer[] = [];
  for await (const chunk of readChunks(path, {
    ...(start !== undefined ? { start } : {}),
    onBytes: (bytes) => positions.push(bytes),
  })) {
    pieces.push(chunk.length);
    parts.push(Buffer.from(chunk));
  }
  return { pieces, positions, bytes: Buffer.concat(parts) };
}

describe('readChunks', () => {
  it('passes the first chunk on in pieces of 64, 128, 256 and 512 KiB, then whole chunks', async () => {
    // Prepare: two and a half chunks
    const { path, bytes } = file('big.bin', 2 * READ_CHUNK_BYTES + READ_CHUNK_BYTES / 2);

    // Act
    const result = await read(path);

    // Assess
    expect(READ_CHUNK_BYTES).toBe(1024 * KiB);
    expect(result.pieces).toEqual([
      64 * KiB,
      128 * KiB,
      256 * KiB,
      512 * KiB,
      64 * KiB,
      1024 * KiB,
      512 * KiB,
    ]);
    expect(result.bytes.equals(bytes)).toBe(true);
    let sum = 0;
    expect(result.positions).toEqual(result.pieces.map((n) => (sum += n)));
  });

  it('does the same from a position (a resumed read), reporting positions in the file', async () => {
    // Prepare
    const { path, bytes } = file('resumed.bin', 3 * READ_CHUNK_BYTES);
    const start = 100_000;

    // Act
    const result = await read(path, start);

    // Assess
    expect(result.pieces.slice(0, 4)).toEqual([64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB]);
    expect(result.bytes.equals(bytes.subarray(start))).toBe(true);
    expect(result.positions.at(0)).toBe(start + 64 * KiB);
    expect(result.positions.at(-1)).toBe(bytes.length);
  });

  it('passes a file smaller than the first piece on whole', async () => {
    // Prepare
    const { path, bytes } = file('small.bin', 10_000);

    // Act
    const result = await read(path);

    // Assess
    expect(result.pieces).toEqual([10_000]);
    expect(result.bytes.equals(bytes)).toBe(true);
    expect(result.positions).toEqual([10_000]);
  });
});
