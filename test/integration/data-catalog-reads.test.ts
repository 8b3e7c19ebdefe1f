import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataCatalog } from '#domain/data-plane.ts';
import type { Service } from '#domain/services.ts';
import { hostDynamo, layerRecord, serviceRecord, useHostStore } from '../support/store.ts';

// The data plane's collection read (ADR 0123) against the run's DynamoDB Local: every DynamoDB
// command the store sends is counted. A collection read again by the same catalog costs one
// BatchGetItem, and what it answers is always where the public id points now.

const sent: string[] = [];
let catalog: DataCatalog;
let layers: import('#domain/layers.ts').LayerRepository;
let services: import('#domain/services.ts').ServiceRepository;
let newWorkspace: () => Promise<string>;
const client = hostDynamo();
afterAll(() => client.destroy());

beforeAll(async () => {
  useHostStore();
  const { documentClient } = await import('#store/client.ts');
  documentClient().middlewareStack.add(
    (next, ctx) => async (args) => {
      sent.push(ctx.commandName ?? 'unknown');
      return next(args);
    },
    { step: 'initialize', name: 'countCatalogReads' },
  );
  const repos = await import('#wiring/repositories.ts');
  catalog = repos.dataCatalog();
  layers = repos.layerRepository();
  services = repos.serviceRepository();
  const { createWorkspace } = await import('#domain/workspaces.ts');
  newWorkspace = async () =>
    (
      await createWorkspace(
        { workspaces: repos.workspaceRepository() },
        { body: { name: `catalog-${randomUUID().slice(0, 13)}` } },
      )
    ).id;
});

/** A published layer of `service`. */
const layerOf = (service: Service, publicId: string) =>
  layerRecord(service, publicId, { enabled: true, public: true });

/** The collection as the catalog reads it, and the commands that read it. */
async function read(workspaceId: string, publicId: string) {
  sent.length = 0;
  const records = await catalog.collection(workspaceId, publicId);
  return { records, calls: [...sent] };
}

describe('the data plane catalog: a collection read', () => {
  it('reads the marker, then the layer and service; read again, all of them in one BatchGetItem', async () => {
    const workspaceId = await newWorkspace();
    const service = serviceRecord(workspaceId, 'roads-db');
    await services.create(service);
    const roads = layerOf(service, 'roads');
    await layers.create(roads);

    const first = await read(workspaceId, 'roads');
    expect(first.calls).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
    expect(first.records.layer?.id).toBe(roads.id);
    expect(first.records.service?.id).toBe(service.id);

    const again = await read(workspaceId, 'roads');
    expect(again.calls).toEqual(['BatchGetItemCommand']);
    expect(again.records.layer).toEqual(first.records.layer);
    expect(again.records.service).toEqual(first.records.service);
    expect(again.records.settings).toEqual(first.records.settings);

    // Changes to the layer are read at once: nothing of it is answered from memory.
    await layers.update(roads, { ...roads, title: 'Roads, renamed', version: 2 });
    const changed = await read(workspaceId, 'roads');
    expect(changed.calls).toEqual(['BatchGetItemCommand']);
    expect(changed.records.layer?.title).toBe('Roads, renamed');
  });

  it('answers where the public id points now: another layer took it, or nothing has it', async () => {
    const workspaceId = await newWorkspace();
    const a = serviceRecord(workspaceId, 'a-db');
    const b = serviceRecord(workspaceId, 'b-db');
    await services.create(a);
    await services.create(b);
    const old = layerOf(a, 'rivers');
    await layers.create(old);
    expect((await read(workspaceId, 'rivers')).records.layer?.id).toBe(old.id);

    // The old layer keeps existing under another public id; a layer of another service takes 'rivers'.
    await layers.update(old, { ...old, public_id: 'old-rivers', version: 2 });
    const taker = layerOf(b, 'rivers');
    await layers.create(taker);
    const moved = await read(workspaceId, 'rivers');
    expect(moved.calls).toEqual(['BatchGetItemCommand', 'BatchGetItemCommand']);
    expect(moved.records.layer?.id).toBe(taker.id);
    expect(moved.records.service?.id).toBe(b.id);
    expect((await read(workspaceId, 'rivers')).calls).toEqual(['BatchGetItemCommand']);

    // Deleted, the public id points nowhere: no layer, no service, and the next read asks again.
    await layers.delete(taker);
    const gone = await read(workspaceId, 'rivers');
    expect(gone.records.layer).toBeUndefined();
    expect(gone.records.service).toBeUndefined();
    expect(gone.calls).toEqual(['BatchGetItemCommand']);
    expect((await read(workspaceId, 'old-rivers')).records.layer?.public_id).toBe('old-rivers');
  });

  it('keeps public ids apart per workspace', async () => {
    const [one, two] = [await newWorkspace(), await newWorkspace()];
    const s1 = serviceRecord(one, 'db');
    const s2 = serviceRecord(two, 'db');
    await services.create(s1);
    await services.create(s2);
    const l1 = layerOf(s1, 'parcels');
    const l2 = layerOf(s2, 'parcels');
    await layers.create(l1);
    await layers.create(l2);
    await read(one, 'parcels');
    await read(two, 'parcels');
    const [r1, r2] = [await read(one, 'parcels'), await read(two, 'parcels')];
    expect([r1.records.layer?.id, r2.records.layer?.id]).toEqual([l1.id, l2.id]);
    expect([r1.calls, r2.calls]).toEqual([['BatchGetItemCommand'], ['BatchGetItemCommand']]);
  });
});
