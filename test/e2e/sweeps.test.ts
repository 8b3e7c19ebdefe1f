import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { entities, type Key, keys } from '#store/keys.ts';
import { type HostProcess, startHostProcess } from '../support/host-process.ts';
import { hostDynamo } from '../support/store.ts';

/*
 * The local host's own sweep (ADR 0093), black box but for the planted items: a host process on the
 * run's DynamoDB Local with a table of its own, sweeping every 200 ms (expired items too), with work stuck after a
 * minute. It removes an expired session (DynamoDB Local has no TTL) and restarts a deletion whose
 * execution no longer runs.
 */

const table = `sweep-host-${randomUUID().slice(0, 8)}`;
const db = hostDynamo();
let host: HostProcess;

const read = async (key: Key) =>
  (await db.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\n${host.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  host = await startHostProcess({
    GEOPLANE_DYNAMODB_ENDPOINT: inject('host').dynamoEndpoint,
    GEOPLANE_TABLE_NAME: table,
    GEOPLANE_SWEEP_INTERVAL_MS: '200',
    GEOPLANE_TTL_SWEEP_INTERVAL_MS: '200',
    SWEEP_STUCK_AFTER_MINUTES: '1',
    SWEEP_MAX_RESTARTS: '3',
  });
});

afterAll(async () => {
  await host?.stop();
  host?.cleanup();
});

describe('the local host sweeps', () => {
  it('removes an expired browser session by itself', async () => {
    const hash = randomUUID().replaceAll('-', '');
    const past = new Date(Date.now() - 60_000).toISOString();
    await db.send(
      new PutCommand({
        TableName: table,
        Item: {
          ...keys.session(hash),
          entity: entities.session,
          token_hash: hash,
          expires_at: past,
          idle_expires_at: past,
          expires_at_epoch: Math.ceil(Date.parse(past) / 1000),
        },
      }),
    );
    await until('the expired session to go', async () =>
      (await read(keys.session(hash))) ? undefined : true,
    );
  });

  it('restarts a deletion that made no progress for a while and whose execution is gone', async () => {
    const id = randomUUID();
    const workspaceId = randomUUID();
    const createdAt = new Date(Date.now() - 3_600_000).toISOString();
    await db.send(
      new PutCommand({
        TableName: table,
        Item: {
          ...keys.deletion(id),
          ...keys.deletionListing(createdAt, id),
          ...keys.deletionActive(createdAt, id),
          entity: entities.deletion,
          id,
          scope: 'service',
          workspace_id: workspaceId,
          workspace_name: 'gone',
          target_id: randomUUID(),
          target_name: 'gone',
          status: 'running',
          phase: 'layers',
          progress: { total: 1, deleted: 0 },
          attempt_count: 1,
          created_at: createdAt,
          updated_at: createdAt,
          created_by: 'test',
        },
      }),
    );
    const restarted = await until('the sweep to restart the deletion', async () => {
      const item = await read(keys.deletion(id));
      return item && Number(item.attempt_count) >= 2 ? item : undefined;
    });
    expect(restarted.sweep).toMatchObject({ restarts: 1, attempt: 2, progress: 'layers:0' });
    // The sweep logs after its write: the line may reach the host's output a moment after the restart.
    await expect.poll(() => host.output()).toContain('local sweep');
  });
});
