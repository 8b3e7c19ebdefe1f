import { sweepStuckWork, type WorkflowExecutions } from '#domain/sweeps.ts';
import type { TileSweepReport } from '#domain/tile-cache-sweep.ts';
import { errorFields, logger } from '#log/logger.ts';
import { deleteExpiredItems } from '#store/sweeps.ts';
import { sweepPorts } from '#wiring/sweeps.ts';
import { sweepTileStore } from '#wiring/tile-cache.ts';
import { sweepData } from '../workflows/sweep-access.ts';
import { withDataAccess } from './data-access.ts';
import type { LocalWorkflowRunner } from './workflows.ts';

/** Default time between two local sweeps of stuck work (`GEOPLANE_SWEEP_INTERVAL_MS`; 0 turns them off). */
export const LOCAL_SWEEP_INTERVAL_MS = 60_000;

/**
 * Default time between two removals of expired items (`GEOPLANE_TTL_SWEEP_INTERVAL_MS`): each is a
 * full Scan, so not every minute — DynamoDB's own TTL takes up to days; readers refuse expired items.
 */
export const LOCAL_TTL_SWEEP_INTERVAL_MS = 10 * 60_000;

/** The local runner as the sweep's liveness check: an execution runs while the runner holds it. */
export function localExecutions(runner: LocalWorkflowRunner): WorkflowExecutions {
  return {
    deletionRunning: async (_name, input) => runner.deletionRunning(input),
    importRunning: async (name) => runner.importRunning(name),
    harvestRunning: async (name) => runner.harvestRunning(name),
    tileCacheJobRunning: async (name) => runner.tileCacheJobRunning(name),
  };
}

/** What one local sweep did. */
export interface LocalSweepResult {
  /** Items removed because their `expires_at_epoch` passed (DynamoDB Local has no TTL). */
  expired: number;
  stuck: Awaited<ReturnType<typeof sweepStuckWork>>;
  /** Stale and orphaned tiles removed from the tile store (ADR 0139); undefined without one. */
  tiles: TileSweepReport | undefined;
}

/**
 * One local sweep (ADR 0093): first (unless `expired` is false) what DynamoDB's TTL does on AWS —
 * expired sessions, login windows, API keys and idempotency records are deleted — then the same
 * `sweepStuckWork` the scheduled Lambda runs, with the sweep function's table grants only (as IAM
 * would), the local runner saying which executions still run.
 */
export async function sweepOnce(
  runner: LocalWorkflowRunner,
  now = new Date(),
  options: { expired?: boolean } = {},
): Promise<LocalSweepResult> {
  const expired = options.expired === false ? 0 : await deleteExpiredItems(now);
  const stuck = await withDataAccess('sweep', sweepData, () =>
    sweepStuckWork(sweepPorts(localExecutions(runner)), now),
  );
  const tiles = await withDataAccess('sweep', sweepData, () => sweepTileStore());
  return { expired, stuck, tiles };
}

/** The host's periodic sweep; `close()` clears its timer (and waits for a sweep in flight). */
export interface LocalSweeps {
  close(): Promise<void>;
}

const fromEnv = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

/**
 * Sweeps stuck work every `GEOPLANE_SWEEP_INTERVAL_MS` (default a minute) and removes expired items
 * every `GEOPLANE_TTL_SWEEP_INTERVAL_MS` (default 10 minutes); the host reads its own environment.
 */
export function startLocalSweeps(
  runner: LocalWorkflowRunner,
  intervalMs = fromEnv('GEOPLANE_SWEEP_INTERVAL_MS', LOCAL_SWEEP_INTERVAL_MS),
  ttlIntervalMs = fromEnv('GEOPLANE_TTL_SWEEP_INTERVAL_MS', LOCAL_TTL_SWEEP_INTERVAL_MS),
): LocalSweeps {
  if (!Number.isFinite(intervalMs) || intervalMs <= 0) return { close: async () => {} };
  let inFlight: Promise<void> | undefined;
  let expiredSweptAt = 0;
  const timer = setInterval(() => {
    if (inFlight) return;
    const now = new Date();
    const expired = now.getTime() - expiredSweptAt >= ttlIntervalMs;
    if (expired) expiredSweptAt = now.getTime();
    inFlight = sweepOnce(runner, now, { expired })
      .then(({ expired, stuck, tiles }) => {
        if (expired > 0 || stuck.items.length > 0 || (tiles?.tiles ?? 0) > 0)
          logger.info('local sweep', {
            expired,
            swept_tiles: tiles?.tiles ?? 0,
            examined: stuck.examined,
            ...stuck.counts,
            items: stuck.items,
          });
      })
      .catch((error: unknown) => logger.warn('local sweep failed', errorFields(error)))
      .finally(() => {
        inFlight = undefined;
      });
  }, intervalMs);
  // The host's servers keep the process alive, not the sweep.
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
