/**
 * The loading child of section 5 (bench/imports.ts): one file into the import database with the
 * product's own code, exactly as the import engine wires it (shared/datasources/imports/engine.ts):
 * discover → defaultPlan (every layer enabled) → loadImport with an unlimited budget. Runs in a
 * process of its own so its peak RSS is the loader's alone:
 *
 *   node --import tsx bench/import-load.ts <file> '<ImportDatabaseConfig as JSON>'
 *
 * Prints one JSON line on stdout: features, seconds (discover + load), peak_rss_bytes, the phases,
 * and where the rows are (schema, table) so the caller can count them.
 *
 * Besides the totals it times, without changing what runs: the reader (time inside the feature
 * iterator: file reading, JSON parsing, feature assembly), the chunk writes (`writeChunk`: the
 * INSERT … FROM unnest and the checkpoint update, awaited before the next chunk is read) and
 * `finalizeLayer` (typmod rewrite, validity scan, GiST index, primary key, ANALYZE). What is left
 * of the load is the pipeline's own work per feature (value casts, geometry to text, chunk arrays).
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import {
  ImportDatabase,
  type ImportDatabaseConfig,
  type ImportSession,
} from '../shared/datasources/imports/database.ts';
import { discover, readFeatures } from '../shared/datasources/imports/formats/index.ts';
import { loadImport } from '../shared/datasources/imports/pipeline.ts';
import { defaultPlan } from '../shared/domain/import-plans.ts';
import type { SourceFeature } from '../shared/domain/import-sources.ts';

/** Time spent inside the named session methods (the session object itself is passed through). */
class TimedDatabase extends ImportDatabase {
  readonly ms: Record<string, number> = {};
  readonly calls: Record<string, number> = {};

  override session<T>(work: (session: ImportSession) => Promise<T>): Promise<T> {
    return super.session((session) => {
      const timed = new Proxy(session, {
        get: (target, key, receiver) => {
          const value = Reflect.get(target, key, receiver);
          if (typeof value !== 'function' || typeof key !== 'string') return value;
          // Called on the real session: its private fields need the real `this`.
          return async (...args: unknown[]) => {
            const t = performance.now();
            try {
              return await value.apply(target, args);
            } finally {
              this.ms[key] = (this.ms[key] ?? 0) + performance.now() - t;
              this.calls[key] = (this.calls[key] ?? 0) + 1;
            }
          };
        },
      });
      return work(timed);
    });
  }
}

/** The reader's features, with the time spent producing them added to `clock.ms`. */
async function* timedFeatures(
  source: AsyncIterable<SourceFeature>,
  clock: { ms: number },
): AsyncGenerator<SourceFeature> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const t = performance.now();
      const next = await iterator.next();
      clock.ms += performance.now() - t;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}

async function main(): Promise<void> {
  const [path, connection] = process.argv.slice(2);
  if (!path || !connection) throw new Error('usage: import-load.ts <file> <connection json>');
  const config = JSON.parse(connection) as ImportDatabaseConfig;
  const filename = basename(path);
  const db = new TimedDatabase(config);
  const importId = randomUUID();

  const t0 = performance.now();
  const discovery = await discover(path, filename);
  const t1 = performance.now();
  const plan = defaultPlan(discovery);
  const reading = { ms: 0 };
  let lastChunkAt = t1;
  const result = await loadImport({
    db,
    importId,
    plan: { layers: plan.layers.map((l) => ({ ...l, enabled: true })) },
    discovery,
    source: {
      features: (layer, options) => timedFeatures(readFeatures(path, filename, layer, options), reading),
    },
    budgetMs: Number.POSITIVE_INFINITY,
    onProgress: (p) => {
      if (p.processed_layers === 0) lastChunkAt = performance.now();
    },
  });
  const t2 = performance.now();
  await db.close();
  if (!result.done) throw new Error('loadImport returned done: false with an unlimited budget');

  const layer = plan.layers[0];
  process.stdout.write(
    `${JSON.stringify({
      features: result.processed_features,
      seconds: (t2 - t0) / 1000,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      discover_seconds: (t1 - t0) / 1000,
      load_seconds: (t2 - t1) / 1000,
      read_seconds: reading.ms / 1000,
      write_chunk_seconds: (db.ms.writeChunk ?? 0) / 1000,
      chunks: db.calls.writeChunk ?? 0,
      finalize_seconds: (db.ms.finalizeLayer ?? 0) / 1000,
      rows_loaded_seconds: (lastChunkAt - t1) / 1000,
      discovered_features: discovery.layers.reduce((n, l) => n + l.feature_count, 0),
      layers: discovery.layers.length,
      fields: discovery.layers[0]?.fields.map((f) => `${f.name}:${f.type}`) ?? [],
      geometry_type: discovery.layers[0]?.geometry_type ?? null,
      warnings: [...discovery.warnings, ...result.warnings],
      schema: db.schemas(importId).staging,
      table: layer ? ImportDatabase.tableName(layer.public_id) : null,
      import_id: importId,
    })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`import-load failed: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
