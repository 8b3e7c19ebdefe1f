import { sweepStuckWork } from '#domain/sweeps.ts';
import { errorFields, logger } from '#log/logger.ts';
import { sweepPorts } from '#wiring/sweeps.ts';
import { sweepTileStore } from '#wiring/tile-cache.ts';
import { sweepUsageKeys } from '#wiring/usage-keys.ts';
import { asSystemChange } from '#wiring/workflows.ts';

/**
 * The scheduled sweep (ADR 0093), invoked by an EventBridge rule: deletions, imports, harvest and
 * tile cache jobs that made no progress for a while and whose execution no longer runs are
 * restarted, or failed once
 * restarts stop helping. Expired sessions and keys need nothing here: the table's TTL removes them.
 */
async function run(): Promise<{ examined: number; restarted: number; failed: number }> {
  const report = await sweepStuckWork(sweepPorts());
  // Keys of the usage-key pool that no slot records (ADR 0111): a failed creation's leftovers.
  const usageKeys = await sweepUsageKeys().catch((error: unknown) => {
    logger.error('Sweep could not look through the usage keys', errorFields(error));
    return { deleted: 0, failed: 1 };
  });
  if (usageKeys.deleted || usageKeys.failed) logger.warn('Sweep deleted orphaned usage keys', usageKeys);
  // Stale and orphaned tiles (ADR 0139): a bounded number per run.
  const tiles = await sweepTileStore().catch((error: unknown) => {
    logger.error('Sweep could not look through the tile cache', errorFields(error));
    return undefined;
  });
  if (tiles && tiles.tiles > 0) logger.info('Sweep removed stale and orphaned tiles', { ...tiles });
  const summary = { examined: report.examined, ...report.counts, items: report.items };
  if (report.counts.error > 0) logger.error('Sweep could not handle every item', summary);
  else if (report.items.length > 0) logger.warn('Sweep restarted or failed stuck work', summary);
  else logger.info('Sweep found no stuck work', summary);
  return { examined: report.examined, restarted: report.counts.restarted, failed: report.counts.failed };
}

export const handler = asSystemChange('sweep', () => new Date().toISOString(), run);
