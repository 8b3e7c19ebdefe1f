/**
 * The usage-key assignment (ADR 0111) against DynamoDB Local: what creating a workspace pays for its
 * slot of the pool. `BENCH_ONLY=usage-keys npm run bench` runs it alone. The key maker is the local
 * one (API Gateway can't run here), so this is the table's part: one counter update and one read
 * per workspace, plus the conditional put of the slot's first workspace.
 */
import { performance } from 'node:perf_hooks';
import { ensureTable, startDynamoLocal } from '#infra/local/dynamodb.ts';
import { freePort } from '../test/support/ports.ts';
import { onCleanup } from './cleanup.ts';
import { fixed, median, percentile, table } from './stats.ts';

const POOL = 100;
const SEQUENTIAL = 300;
const CONCURRENT = 20;
const ROUNDS = 10;

export interface UsageKeyRun {
  firstOfSlot: number[];
  reuse: number[];
  concurrentRounds: number[];
  distinct: boolean;
}

export async function measureUsageKeys(progress: (text: string) => void): Promise<UsageKeyRun> {
  const dynamo = await startDynamoLocal(await freePort());
  onCleanup('DynamoDB Local (usage keys)', () => dynamo.stop());
  const tableName = 'bench-usage-keys';
  await ensureTable(dynamo.endpoint, tableName);
  Object.assign(process.env, {
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_REGION: 'us-east-1',
  });
  const { assignUsageKey } = await import('#domain/usage-keys.ts');
  const { localUsageKeys } = await import('#platform/usage-keys.ts');
  const { usageKeySlotRepository } = await import('#wiring/repositories.ts');
  const slots = usageKeySlotRepository();
  const run: UsageKeyRun = { firstOfSlot: [], reuse: [], concurrentRounds: [], distinct: true };
  progress(`usage keys: ${SEQUENTIAL} assignments one after the other on a pool of ${POOL}`);
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = performance.now();
    await assignUsageKey(slots, localUsageKeys, POOL);
    (i < POOL ? run.firstOfSlot : run.reuse).push(performance.now() - started);
  }
  progress(`usage keys: ${ROUNDS} rounds of ${CONCURRENT} concurrent assignments`);
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    const assigned = await Promise.all(
      Array.from({ length: CONCURRENT }, () => assignUsageKey(slots, localUsageKeys, 1_000_000)),
    );
    run.concurrentRounds.push(performance.now() - started);
    if (new Set(assigned.map((a) => a.slot)).size !== CONCURRENT) run.distinct = false;
  }
  await dynamo.stop();
  return run;
}

export function usageKeysSection(run: UsageKeyRun): string {
  const row = (name: string, samples: number[]) => [
    name,
    String(samples.length),
    fixed(median(samples), 1),
    fixed(percentile(samples, 95), 1),
  ];
  return [
    '## Usage-key assignment (ADR 0111)',
    '',
    `Pool of ${POOL}; DynamoDB Local; the local key maker (API Gateway's CreateApiKey and CreateUsagePlanKey are not timed).`,
    '',
    table(
      ['path', 'n', 'median ms', 'p95 ms'],
      [
        row("a slot's first workspace (counter, read, conditional put)", run.firstOfSlot),
        row('a slot already made (counter, read)', run.reuse),
        row(`${CONCURRENT} concurrent assignments (whole round)`, run.concurrentRounds),
      ],
      '---|---:|---:|---:',
    ),
    '',
    `Concurrent assignments always got distinct slots: ${run.distinct ? 'yes' : 'NO'}.`,
  ].join('\n');
}
