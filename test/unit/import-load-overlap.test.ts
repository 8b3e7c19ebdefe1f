import { describe, expect, it } from 'vitest';
import type { Checkpoint } from '#datasources/imports/database-checkpoints.ts';
import { loadImport, type RowSource } from '#datasources/imports/pipeline.ts';
import type { RowBatch } from '#datasources/imports/staged-rows.ts';
import {
  emptyCheckpoint,
  fakeDatabase,
  IMPORT,
  pointSource,
  pointsDiscovery,
  pointsPlan,
} from '../support/import-pipeline.ts';

/**
 * A run of the loader begins reading its layer from the checkpoint it read while the layer is
 * prepared and the connection readied for the rows (ADR 0143): the reader's first chunk and the
 * database's work overlap. When preparing finds the layer elsewhere, what was read is dropped.
 */

/** `inner`, recording when its reads ask for their first batch and when they are ended. */
function watched(inner: RowSource) {
  let firstAsked: () => void = () => undefined;
  const seen = {
    /** Resolves when a read first asks for a batch. */
    firstAsked: new Promise<void>((resolve) => {
      firstAsked = resolve;
    }),
    /** Reads ended before their source was done (return()). */
    ended: 0,
  };
  const source: RowSource = {
    rows(layer, options) {
      const iterator = inner.rows(layer, options)[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]: () => ({
          next: () => {
            firstAsked();
            return iterator.next();
          },
          return: async (): Promise<IteratorResult<RowBatch>> => {
            seen.ended += 1;
            await iterator.return?.();
            return { done: true, value: undefined };
          },
        }),
      };
    },
  };
  return { source, seen };
}

/** Resolves with `promise`, or fails saying `what` did not happen within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)),
  ]);
}

const load = (db: ReturnType<typeof fakeDatabase>['db'], source: RowSource, n: number) =>
  loadImport({
    db,
    importId: IMPORT,
    plan: pointsPlan,
    discovery: pointsDiscovery(n, n * 100),
    source,
    budgetMs: 60_000,
    chunkFeatures: 10,
  });

describe('a run reads its first chunk while the layer is prepared (ADR 0143)', () => {
  it('asks the source for its first batch before preparing ends, and readies the connection before the first write', async () => {
    // Prepare: preparing the layer ends only once the read has begun (in turn, it never would)
    const reads: number[] = [];
    const { source, seen } = watched(pointSource(25, 100, 0, reads));
    const { db, events, written } = fakeDatabase({
      prepare: async (known) => {
        await within(seen.firstAsked, 2_000, 'the read did not begin while the layer was prepared');
        return known;
      },
    });

    // Act
    const result = await load(db, source, 25);

    // Assess: one read, from the top; the connection readied after preparing, before writing
    expect(result).toMatchObject({ done: true, processed_features: 25 });
    expect(reads).toEqual([0]);
    expect(written).toEqual([10, 10, 5]);
    expect(events).toEqual([
      'checkpoint',
      'prepare',
      'prepared',
      'ready',
      'write 1',
      'write 11',
      'write 21',
      'finalize',
    ]);
  });

  it('reads again from where preparing found the checkpoint when it moved since it was read', async () => {
    // Prepare: the checkpoint said nothing staged; by the time the layer is prepared, another run
    // has staged 20 features
    const reads: number[] = [];
    const { source, seen } = watched(pointSource(45, 100, 0, reads));
    const moved: Checkpoint = { ...emptyCheckpoint(), features: 20, bytes: 2_000 };
    const { db, events, written } = fakeDatabase({
      prepare: async () => {
        await within(seen.firstAsked, 2_000, 'the read did not begin while the layer was prepared');
        return { ...moved };
      },
    });

    // Act
    const result = await load(db, source, 45);

    // Assess: the read begun from the top was ended; nothing of it was written; the rest once
    expect(result).toMatchObject({ done: true, processed_features: 45 });
    expect(reads).toEqual([0, 20]);
    expect(seen.ended).toBe(1);
    expect(written).toEqual([10, 10, 5]);
    expect(events.filter((e) => e.startsWith('write'))).toEqual(['write 21', 'write 31', 'write 41']);
  });

  it('writes nothing and finalizes nothing when preparing finds the layer published, and ends the read it began', async () => {
    // Prepare
    const { source, seen } = watched(pointSource(25));
    const { db, events } = fakeDatabase({
      prepare: async () => {
        await within(seen.firstAsked, 2_000, 'the read did not begin while the layer was prepared');
        return { ...emptyCheckpoint(), features: 25, finalized: true };
      },
    });

    // Act
    const result = await load(db, source, 25);

    // Assess
    expect(result).toMatchObject({ done: true, processed_features: 25 });
    expect(seen.ended).toBe(1);
    expect(events).toEqual(['checkpoint', 'prepare', 'prepared']);
  });

  it("fails with preparing's error (a newer run fenced it off) and ends the read it began", async () => {
    // Prepare: a read whose first batch fails too, after preparing failed
    const { source, seen } = watched(pointSource(25, 100, 1));
    const fenced = Object.assign(new Error('a newer run loads this import'), { code: 'import_run_fenced' });
    const { db, written } = fakeDatabase({
      prepare: async () => {
        await within(seen.firstAsked, 2_000, 'the read did not begin while the layer was prepared');
        throw fenced;
      },
    });

    // Act + Assess
    await expect(load(db, source, 25)).rejects.toBe(fenced);
    expect(seen.ended).toBe(1);
    expect(written).toEqual([]);
  });
});
