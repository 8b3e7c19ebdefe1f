import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Layer } from '#domain/layers.ts';
import { hostDynamo, layerRecord, useHostStore } from '../support/store.ts';

// listWorkspaceLayers' store query (ADR 0130) against the run's DynamoDB Local: a filtered page
// reads at most its budget, may come back short or empty with a cursor, and following the cursors
// yields every match once — also when a page fills in the middle of a Query page.

type Repo = import('#store/layers-repository.ts').DynamoLayerRepository;
let repo: Repo;
let keys: typeof import('#store/keys.ts');
const client = hostDynamo();
afterAll(() => client.destroy());

beforeAll(async () => {
  useHostStore();
  keys = await import('#store/keys.ts');
  repo = new (await import('#store/layers-repository.ts')).DynamoLayerRepository();
});

/** A workspace of `n` layer items over three services, written straight to the table. */
async function workspaceOf(n: number): Promise<{ workspaceId: string; layers: Layer[] }> {
  const workspaceId = randomUUID();
  const services = [randomUUID(), randomUUID(), randomUUID()];
  const layers: Layer[] = Array.from({ length: n }, (_, i) =>
    layerRecord(
      { id: services[i % 3] as string, workspace_id: workspaceId },
      `layer-${String(i).padStart(3, '0')}`,
      {
        source_layer: `t${i}`,
        title: i % 4 === 0 ? `Road ${i}` : `Other ${i}`,
      },
    ),
  );
  for (const l of layers) {
    await client.send(
      new PutCommand({
        TableName: process.env.TABLE_NAME as string,
        Item: { ...keys.keys.layer(workspaceId, l.service_id, l.id), entity: keys.entities.layer, ...l },
      }),
    );
  }
  return { workspaceId, layers };
}

/** Follows the cursors; every page as read. */
async function pages(
  workspaceId: string,
  limit: number,
  keep: ((l: Layer) => boolean) | undefined,
  budget?: number,
) {
  const out: Layer[][] = [];
  let cursor: string | undefined;
  do {
    const page = await repo.listInWorkspacePage(workspaceId, limit, cursor, keep, budget);
    out.push(page.items);
    cursor = page.nextCursor;
  } while (cursor && out.length < 100);
  return out;
}

describe('the workspace layer range, filtered in code (ADR 0130)', () => {
  it('reads at most its budget per call: short and empty pages carry on, and every match comes once', async () => {
    const { workspaceId, layers } = await workspaceOf(25);
    const road = (l: Layer) => l.title.toLowerCase().includes('road');
    const read = await pages(workspaceId, 5, road, 7);
    // 25 items at 7 a call: 4 calls, whatever they find.
    expect(read).toHaveLength(4);
    expect(read.every((p) => p.length <= 5)).toBe(true);
    const found = read.flat().map((l) => l.id);
    expect(new Set(found).size).toBe(found.length);
    expect(found.sort()).toEqual(
      layers
        .filter(road)
        .map((l) => l.id)
        .sort(),
    );

    // A filter nothing passes: empty pages with a cursor until the range ends.
    const none = await pages(workspaceId, 5, () => false, 10);
    expect(none.map((p) => p.length)).toEqual([0, 0, 0]);
  });

  it('resumes right after the last item a page kept when the page fills inside a Query page', async () => {
    const { workspaceId, layers } = await workspaceOf(12);
    const read = await pages(workspaceId, 5, () => true);
    expect(read.map((p) => p.length)).toEqual([5, 5, 2]);
    const all = read.flat().map((l) => l.id);
    expect(new Set(all).size).toBe(12);
    expect(all.sort()).toEqual(layers.map((l) => l.id).sort());
    // Without a filter: the same pages, by DynamoDB's Limit.
    const plain = await pages(workspaceId, 5, undefined);
    expect(plain.flat().map((l) => l.id)).toEqual(
      (await pages(workspaceId, 5, () => true)).flat().map((l) => l.id),
    );
  });
});
