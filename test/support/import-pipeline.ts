/**
 * The pipeline's unit tests (shared/datasources/imports/pipeline.ts) without a server: an import
 * database that records what the loader hands it, and a source of point features.
 */
import type { ImportDatabase } from '#datasources/imports/database.ts';
import { type Checkpoint, EMPTY_CHECKPOINT } from '#datasources/imports/database-checkpoints.ts';
import type { ChunkRows } from '#datasources/imports/database-staging.ts';
import { featureRows, type RowSource } from '#datasources/imports/pipeline.ts';
import type { Discovery, ImportPlan, SourceFeature } from '#domain/import-sources.ts';

export const IMPORT = '0190f7a2-0000-7000-8000-000000000001';

/** A layer's checkpoint with nothing staged (a copy of the loader's own). */
export const emptyCheckpoint = (): Checkpoint => ({ ...EMPTY_CHECKPOINT, misfits: {} });

/**
 * An import database that keeps nothing: `written` holds each chunk's row count, `events` the
 * session calls in the order they were made (`write <first fid>` for a chunk). `prepare` stands in
 * for prepareLayer (default: the checkpoint it was given back, as for a layer nothing moved).
 */
export function fakeDatabase(
  options: { checkpoint?: Checkpoint; prepare?: (known: Checkpoint) => Promise<Checkpoint> } = {},
) {
  const written: number[] = [];
  const events: string[] = [];
  const known = options.checkpoint ?? emptyCheckpoint();
  const session = {
    checkpoint: async () => {
      events.push('checkpoint');
      return { ...known };
    },
    prepareLayer: async () => {
      events.push('prepare');
      const prepared = options.prepare ? await options.prepare({ ...known }) : { ...known };
      events.push('prepared');
      return prepared;
    },
    readyForRows: async () => {
      events.push('ready');
    },
    writeChunk: async (_id: string, _table: unknown, from: Checkpoint, rows: ChunkRows, bytes: number) => {
      events.push(`write ${rows.firstFid}`);
      written.push(rows.count);
      return { ...from, features: from.features + rows.count, bytes: Math.max(bytes, from.bytes) };
    },
    finalizeLayer: async () => {
      events.push('finalize');
      return { rows: 0, invalid: 0, repaired: 0, extent: null, srid: 4326, geometry_type: 'Point' };
    },
  };
  const db = { session: (work: (s: typeof session) => Promise<unknown>) => work(session) };
  return { db: db as unknown as ImportDatabase, written, events };
}

/**
 * `n` point features, 100 bytes of the file each (`bytesEach`); feature `broken` (1-based) has an
 * unreadable geometry. `reads` records the `skip` of every read begun.
 */
export function pointSource(n: number, bytesEach = 100, broken = 0, reads: number[] = []): RowSource {
  return featureRows({
    features(_layer, { skip, onBytes }) {
      reads.push(skip);
      return (async function* () {
        for (let i = skip; i < n; i++) {
          onBytes((i + 1) * bytesEach);
          const coordinates = i + 1 === broken ? ['x', i] : [i, i];
          yield { properties: { n: i }, geometry: { type: 'Point', coordinates } } as SourceFeature;
        }
      })();
    },
  });
}

/** The plan of the one layer `pts` (field `n`). */
export const pointsPlan: ImportPlan = {
  layers: [
    {
      source_layer: 'pts',
      public_id: 'pts',
      enabled: true,
      public: false,
      fields: [{ source: 'n', target: 'n', include: true }],
    },
  ],
};

/** What discovery found: `features` points in a file of `size` bytes. */
export const pointsDiscovery = (features: number, size: number): Discovery => ({
  format: 'geojson',
  size_bytes: size,
  warnings: [],
  layers: [
    {
      name: 'pts',
      fields: [{ name: 'n', type: 'integer' }],
      geometry_type: 'Point',
      srid: 4326,
      feature_count: features,
      bbox: null,
    },
  ],
});
