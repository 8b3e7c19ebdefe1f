import { describe, expect, it } from 'vitest';
import type { ImportDatabase } from '#datasources/imports/database.ts';
import { loadImport, type RowSource } from '#datasources/imports/pipeline.ts';
import type { Discovery } from '#domain/import-sources.ts';
import {
  pointsDiscovery as discovery,
  fakeDatabase,
  IMPORT,
  pointsPlan as plan,
  pointSource as source,
} from '../support/import-pipeline.ts';

/**
 * The loader never stages more than discovery found (ADR 0110): the import reserved the features
 * discovery counted and the file's size, so a file that grew since stops the load before the
 * chunk that would cross is written. The import database is a fake here: what matters is which
 * chunks the loader hands it.
 */

const load = (db: ImportDatabase, found: Discovery, n: number, bytesEach = 100, broken = 0) =>
  loadImport({
    db,
    importId: IMPORT,
    plan,
    discovery: found,
    source: source(n, bytesEach, broken),
    budgetMs: 60_000,
    chunkFeatures: 10,
  });

describe('the loader stays within what the import reserved (ADR 0110)', () => {
  it('loads the features discovery counted, and stops before writing the chunk that holds one more', async () => {
    const exact = fakeDatabase();
    expect(await load(exact.db, discovery(25, 2500), 25)).toMatchObject({
      done: true,
      processed_features: 25,
    });
    expect(exact.written).toEqual([10, 10, 5]);

    const { db, written } = fakeDatabase();
    await expect(load(db, discovery(20, 100_000), 25)).rejects.toMatchObject({
      name: 'ImportInputError',
      code: 'import_source_changed',
      message: expect.stringMatching(/layer pts holds more than the 20 features it had/),
    });
    expect(written.reduce((a, b) => a + b, 0)).toBe(20);
  });

  it('says the file changed, not that a geometry is broken, when the broken feature is past the count', async () => {
    const past = fakeDatabase();
    await expect(load(past.db, discovery(20, 100_000), 25, 100, 21)).rejects.toMatchObject({
      code: 'import_source_changed',
    });
    expect(past.written.reduce((a, b) => a + b, 0)).toBe(20);

    const within = fakeDatabase();
    await expect(load(within.db, discovery(20, 100_000), 25, 100, 15)).rejects.toMatchObject({
      code: 'invalid_geometry',
      message: expect.stringMatching(/^layer pts: feature 15 has a geometry that can't be read/),
    });
    expect(within.written.reduce((a, b) => a + b, 0)).toBe(10);
  });

  it('stops when the file is read past the size discovery measured (it changed since)', async () => {
    const { db, written } = fakeDatabase();
    await expect(load(db, discovery(25, 1000), 25, 100)).rejects.toMatchObject({
      code: 'import_source_changed',
      message: expect.stringMatching(/larger than the 1000 bytes it had/),
    });
    expect(written.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10);
  });
});

/**
 * Like the reader thread, a source that reads no batch past the read limit (ADR 0150): asked for
 * one there, it waits until the limit moves. `limits` records every move.
 */
function limitedSource(n: number, limits: number[]): RowSource {
  const base = source(n);
  return {
    rows(layer, options) {
      const inner = base.rows(layer, options);
      const { limit } = options;
      limit?.watch((until) => limits.push(until));
      return (async function* () {
        let next = options.skip;
        for await (const batch of inner) {
          while (limit && next >= limit.until) {
            await new Promise<void>((resolve) => {
              const stop = limit.watch(() => {
                stop();
                resolve();
              });
            });
          }
          yield batch;
          next += batch.count;
        }
      })();
    },
  };
}

describe('the loader tells its source how far it will read (ADR 0150)', () => {
  const run = (
    db: ImportDatabase,
    n: number,
    limits: number[],
    shouldStop: (read: { features: number }) => boolean,
  ) =>
    loadImport({
      db,
      importId: IMPORT,
      plan,
      discovery: discovery(n, n * 100),
      source: limitedSource(n, limits),
      budgetMs: 60_000,
      shouldStop: async (read) => shouldStop(read),
      chunkFeatures: 100,
    });

  it("limits the read to the end of the chunk that will be the run's last", async () => {
    // Prepare: a run that is to stop once 250 features are read (the chunk boundary past it: 300)
    const { db, written } = fakeDatabase();
    const limits: number[] = [];

    // Act
    const result = await run(db, 1000, limits, (read) => read.features >= 250);

    // Assess: the third chunk was known to be the last before it was read
    expect(result).toMatchObject({ done: false, processed_features: 300 });
    expect(written).toEqual([100, 100, 100]);
    expect(limits).toEqual([300]);
  });

  it('moves the limit on when the chunk guessed to be the last was not: the run reads on to the end', async () => {
    // Prepare: asked ahead about 300 features it says stop; asked again at 300, it says go on
    const { db, written } = fakeDatabase();
    const limits: number[] = [];
    let asked = 0;

    // Act
    const result = await run(db, 1000, limits, (read) => read.features === 300 && asked++ === 0);

    // Assess: no wait for a limit that never moves, no feature lost or read twice
    expect(result).toMatchObject({ done: true, processed_features: 1000 });
    expect(written.reduce((a, b) => a + b, 0)).toBe(1000);
    expect(limits).toEqual([300, Number.POSITIVE_INFINITY]);
  });
});
