import { config } from '#config/env.ts';
import { assignUsageKey, sweepOrphanedKeys, type UsageKeyProvisioner } from '#domain/usage-keys.ts';
import { usageKeyInventory, usageKeyMaker } from '#platform/usage-keys.ts';
import { usageKeySlotRepository } from './repositories.ts';

/** The usage-key pool of this deployment (ADR 0111): API Gateway keys on AWS, values alone locally. */
export function usageKeys(): UsageKeyProvisioner {
  return {
    assign: () => assignUsageKey(usageKeySlotRepository(), usageKeyMaker(), config().USAGE_KEY_POOL_SIZE),
  };
}

/** Deletes the keys of the pool no slot records (the scheduled sweep, ADR 0111). */
export function sweepUsageKeys(now = new Date()): Promise<{ deleted: number; failed: number }> {
  return sweepOrphanedKeys(usageKeySlotRepository(), usageKeyInventory(), now);
}
