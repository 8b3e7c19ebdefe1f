/**
 * The loading child of section 5 (bench/imports.ts): one file into the import database with the
 * product's own code, exactly as the import engine wires it (shared/datasources/imports/engine.ts):
 * discover → defaultPlan (every layer enabled) → loadImport with an unlimited budget. Runs in a
 * process of its own so its peak RSS is the loader's alone:
 *
 *   node --import tsx bench/import-load.ts <file> '<ImportDatabaseConfig as JSON>' [steps]
 *
 * Prints one JSON line on stdout: features, seconds (discover + load), peak_rss_bytes, the phases,
 * and where the rows are (schema, table) so the caller can count them.
 *
 * With `steps` (N > 1) the load is forced into N runs, as the import workflow resumes one (issue
 * 27, target 4): discovery once, then each run a fresh ImportDatabase and a fresh loadImport call
 * from the import's checkpoint, whose `shouldStop` says stop once the import's features read reach
 * the run's mark (k/N of the discovered features for run k). The pipeline asks it before reading
 * each chunk, where it also asks whether its time budget holds another read and write (ADR 0143),
 * and whether the chunk it is about to read will be the last (ADR 0150, the reader then reads no
 * further): this is that budget counted in features instead of time, so a run ends at the first
 * chunk boundary at or past its mark and writes every chunk it read. The
 * last run has no mark: it loads the rest and finalizes. `runs` is how many loadImport calls it
 * took, `step_seconds` each call's seconds.
 *
 * Besides the totals it times, without changing what runs: the reader (time inside the rows
 * iterator: file reading, parsing, feature assembly, values cast and geometry written as text in
 * the reader's thread, the batches taken in), the chunk writes (`writeChunk`: the rows —
 * COPY, or INSERT … FROM unnest where the server takes no COPY — and the checkpoint update in one
 * transaction; it runs beside the reading of the next chunk, so its time overlaps the reader's)
 * and `finalizeLayer`. What is left of the load is the pipeline's own work per row (taking the
 * batches' rows into chunks) and its waits for the write in flight. Over a stepped
 * load the clocks add up over the runs.
 */
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import { ImportDatabase } from '#datasources/imports/database.ts';
import type { ImportDatabaseConfig } from '#datasources/imports/database-connection.ts';
import type { ImportSession } from '#datasources/imports/database-session.ts';
import { discover, readRows } from '#datasources/imports/formats/index.ts';
import { loadImport } from '#datasources/imports/pipeline.ts';
import type { RowBatch } from '#datasources/imports/staged-rows.ts';
import { defaultPlan } from '#domain/import-plans.ts';

/** Time spent inside the named session methods (the session object itself is passed through). */
class TimedDatabase extends ImportDatabase {
  readonly ms: Record<string, number>;
  readonly calls: Record<string, number>;

  constructor(config: ImportDatabaseConfig, ms: Record<string, number>, calls: Record<string, number>) {
    super(config);
    this.ms = ms;
    this.calls = calls;
  }

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

/** The reader's batches, with the time spent producing them added to `clock.ms`. */
async function* timedRows(source: AsyncIterable<RowBatch>, clock: { ms: number }): AsyncGenerator<RowBatch> {
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
  const [path, connection, stepsArg] = process.argv.slice(2);
  if (!path || !connection) throw new Error('usage: import-load.ts <file> <connection json> [steps]');
  const steps = Math.max(1, Math.floor(Number(stepsArg ?? 1)));
  if (!Number.isFinite(steps)) throw new Error(`import-load.ts: steps must be a number, not ${stepsArg}`);
  const config = JSON.parse(connection) as ImportDatabaseConfig;
  const filename = basename(path);
  const importId = randomUUID();
  /** Every run's database: the session clocks add up over the runs. */
  const ms: Record<string, number> = {};
  const calls: Record<string, number> = {};

  const t0 = performance.now();
  const discovery = await discover(path, filename);
  const t1 = performance.now();
  const plan = defaultPlan(discovery);
  const total = discovery.layers.reduce((n, l) => n + l.feature_count, 0);
  const reading = { ms: 0 };
  let lastChunkAt = t1;
  const stepSeconds: number[] = [];
  let result: Awaited<ReturnType<typeof loadImport>> | undefined;
  // One run more than the steps at most would be a bug of the marks; a few more than that, a loop.
  for (let run = 1; !result?.done; run++) {
    if (run > steps + 3) throw new Error(`the load took more than ${steps + 3} runs`);
    // Run k stops at k/N of the features (the last has no mark): a budget spent in features read
    // rather than in time, asked where the pipeline asks about its time budget (before reading the
    // next chunk), so the runs are the same 20 on every machine.
    const mark = run < steps ? Math.ceil((run * total) / steps) : Number.POSITIVE_INFINITY;
    const db = new TimedDatabase(config, ms, calls);
    const s0 = performance.now();
    result = await loadImport({
      db,
      importId,
      plan: { layers: plan.layers.map((l) => ({ ...l, enabled: true })) },
      discovery,
      source: {
        rows: (layer, { shape, ...options }) =>
          timedRows(readRows(path, filename, layer, shape, options), reading),
      },
      budgetMs: Number.POSITIVE_INFINITY,
      // The import's features read: before the chunk being read, and once it is (ADR 0150).
      shouldStop: async (read) => read.features >= mark,
      onProgress: (p) => {
        if (p.processed_layers === 0) lastChunkAt = performance.now();
      },
    });
    await db.close();
    stepSeconds.push((performance.now() - s0) / 1000);
    if (steps === 1 && !result.done)
      throw new Error('loadImport returned done: false with an unlimited budget');
  }
  const t2 = performance.now();
  const db = new ImportDatabase(config);

  const layer = plan.layers[0];
  process.stdout.write(
    `${JSON.stringify({
      features: result.processed_features,
      seconds: (t2 - t0) / 1000,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      discover_seconds: (t1 - t0) / 1000,
      load_seconds: (t2 - t1) / 1000,
      read_seconds: reading.ms / 1000,
      write_chunk_seconds: (ms.writeChunk ?? 0) / 1000,
      chunks: calls.writeChunk ?? 0,
      finalize_seconds: (ms.finalizeLayer ?? 0) / 1000,
      // Every session method's milliseconds and calls, summed over the runs.
      session_ms: Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, Math.round(v)])),
      session_calls: calls,
      rows_loaded_seconds: (lastChunkAt - t1) / 1000,
      discovered_features: total,
      steps,
      runs: stepSeconds.length,
      step_seconds: stepSeconds,
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
