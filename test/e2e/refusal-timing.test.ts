import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

/*
 * Issue #22 measured a caller without a role getting its 403 in 7.7 ms for an existing workspace
 * and 4.8 ms for a missing one: the authorizer read the workspace a name marker pointed to, one
 * DynamoDB round trip more. ADR 0109 makes both do the same reads. Measured black box against the
 * local host: requests in pairs (existing, missing; then the other order), the median of the
 * paired differences against one DynamoDB Local round trip measured beside them.
 */

const db = hostDynamo();
afterAll(() => db.destroy());

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** The median time of one strongly consistent BatchGetItem of two keys that don't exist. */
async function roundTripMs(samples: number): Promise<number> {
  const table = inject('host').tableName;
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await db.send(
      new BatchGetCommand({
        RequestItems: {
          [table]: {
            Keys: [
              { PK: `TIMING#${i}`, SK: 'A' },
              { PK: `TIMING#${i}`, SK: 'B' },
            ],
            ConsistentRead: true,
          },
        },
      }),
    );
    times.push(performance.now() - started);
  }
  return median(times);
}

describe('a 403 for want of a role takes as long whether the workspace exists or not (ADR 0109)', () => {
  it('by name: the median paired difference is well under one DynamoDB round trip', {
    timeout: 120_000,
  }, async () => {
    const existing = await createWorkspace(uniqueName('timing'));
    const home = await createWorkspace(uniqueName('timing-home'));
    const stranger = await createKey(home.id, 'admin');
    const timed = async (workspace: string) => {
      const started = performance.now();
      const res = await call('GET', `/workspaces/${workspace}`, { headers: withKey(stranger.key) });
      const ms = performance.now() - started;
      expectError(res, 403, 'no_workspace_access');
      return ms;
    };
    const missing = () => uniqueName('timing-missing');
    for (let i = 0; i < 10; i++) {
      await timed(existing.name);
      await timed(missing());
    }
    const differences: number[] = [];
    const existingTimes: number[] = [];
    const missingTimes: number[] = [];
    for (let i = 0; i < 200; i++) {
      let a: number;
      let b: number;
      if (i % 2 === 0) {
        a = await timed(existing.name);
        b = await timed(missing());
      } else {
        b = await timed(missing());
        a = await timed(existing.name);
      }
      existingTimes.push(a);
      missingTimes.push(b);
      differences.push(a - b);
    }
    const roundTrip = await roundTripMs(60);
    const difference = median(differences);
    const report = `existing ${median(existingTimes).toFixed(2)} ms, missing ${median(missingTimes).toFixed(2)} ms, median paired difference ${difference.toFixed(2)} ms, one round trip ${roundTrip.toFixed(2)} ms`;
    expect(Math.abs(difference), report).toBeLessThan(Math.max(0.5 * roundTrip, 0.3));
  });
});
