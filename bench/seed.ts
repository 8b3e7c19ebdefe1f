import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DataSourceGateway } from '#domain/datasource.ts';
import { createLayer, type Layer, type LayerRepository, type PublicIdMarker } from '#domain/layers.ts';
import type { SecretBox } from '#domain/secrets.ts';
import type { Service } from '#domain/services.ts';
import { entities, keys } from '#store/keys.ts';

/**
 * Seeding of the scaling run (ADR 0021): layers written straight into DynamoDB Local, because
 * 100,000 creates through the API would take far too long. Items are built exactly as
 * `DynamoLayerRepository.create` writes them (the product's key builders and entity tags, the
 * `Layer` from the product's own `createLayer`); `scaling.ts` compares a seeded item with one
 * the API created, attribute by attribute, before measuring anything.
 */

/** Throws when a draft's creation touches its source: drafts never do (ADR 0021). */
const untouchable = new Proxy(
  {},
  {
    get: (_, name) => () => {
      throw new Error(`a draft layer touched its source (${String(name)})`);
    },
  },
);

/**
 * The layer the product's own `createLayer` stores for `{source_layer, public_id, enabled: false}`
 * (a draft): the domain function runs with a repository that keeps the layer instead of writing
 * it, and a data source and secret box that throw if touched.
 */
export async function draftLayer(
  workspaceId: string,
  serviceId: string,
  sourceLayer: string,
  publicId: string,
  now: Date,
): Promise<Layer> {
  let kept: Layer | undefined;
  // Only create() is reached for a draft; the cast keeps this independent of the port's other methods.
  const keep = {
    create: async (layer: Layer) => {
      kept = layer;
    },
  } as unknown as LayerRepository;
  const service = { id: serviceId, workspace_id: workspaceId, type: 'postgis' } as Service;
  await createLayer(
    { layers: keep, gateway: untouchable as DataSourceGateway, secrets: untouchable as SecretBox },
    { service, body: { source_layer: sourceLayer, public_id: publicId, enabled: false }, now },
  );
  if (!kept) throw new Error('createLayer stored nothing');
  return kept;
}

/** The two items `DynamoLayerRepository.create` puts for a layer: the layer and its public id marker. */
export function layerItems(layer: Layer): Record<string, unknown>[] {
  const marker: PublicIdMarker = {
    kind: 'layer',
    target_id: layer.id,
    service_id: layer.service_id,
    member_of_count: 0,
  };
  return [
    { ...keys.layer(layer.workspace_id, layer.service_id, layer.id), entity: entities.layer, ...layer },
    { ...keys.publicId(layer.workspace_id, layer.public_id), entity: entities.publicId, ...marker },
  ];
}

/** The product's document client settings (`shared/store/client.ts`), pointed at DynamoDB Local. */
export function seedClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 5,
      requestHandler: { connectionTimeout: 2000, requestTimeout: 30_000 },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
}

export interface SeedPlan {
  endpoint: string;
  table: string;
  workspaceId: string;
  serviceId: string;
  sourceLayer: string;
  count: number;
  /** `public_id` of the i-th layer. */
  publicId: (i: number) => string;
  /** BatchWriteItem requests in flight at once. */
  concurrency: number;
  /** Stop starting new batches after this long (the result then says `complete: false`). */
  budgetMs: number;
  progress: (s: string) => void;
}

export interface SeedResult {
  /** Layers whose two items are both written. */
  layers: number;
  items: number;
  requests: number;
  /** Items DynamoDB Local handed back as unprocessed and that were written on a retry. */
  retriedItems: number;
  ms: number;
  complete: boolean;
  /** Ids of the written layers. */
  ids: string[];
}

/** BatchWriteItem takes 25 items at most; 12 layers (24 items) keep each layer's pair in one request. */
const LAYERS_PER_BATCH = 12;

/**
 * Writes `count` draft layers (2 items each) with BatchWriteItem, `concurrency` requests in
 * flight, retrying unprocessed items with a short backoff. Bounded by `budgetMs`.
 */
export async function seedLayers(plan: SeedPlan): Promise<SeedResult> {
  const db = seedClient(plan.endpoint);
  const started = Date.now();
  const now = new Date();
  let next = 0;
  let layers = 0;
  let items = 0;
  let requests = 0;
  let retriedItems = 0;
  let lastReport = started;
  let stopped = false;
  const ids: string[] = [];

  const write = async (batch: Record<string, unknown>[]) => {
    let pending: Record<string, unknown>[] = batch;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt > 0) retriedItems += pending.length;
      if (attempt > 8) throw new Error(`seeding: ${pending.length} items stayed unprocessed after 8 retries`);
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 20 * 2 ** attempt)));
      requests++;
      const out = await db.send(
        new BatchWriteCommand({
          RequestItems: { [plan.table]: pending.map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
      const unprocessed = out.UnprocessedItems?.[plan.table] ?? [];
      pending = unprocessed.flatMap((r) => (r.PutRequest?.Item ? [r.PutRequest.Item] : []));
    }
  };

  const worker = async () => {
    while (next < plan.count) {
      if (Date.now() - started > plan.budgetMs) {
        stopped = true;
        return;
      }
      const from = next;
      const to = Math.min(plan.count, from + LAYERS_PER_BATCH);
      next = to;
      const batch: Record<string, unknown>[] = [];
      const written: string[] = [];
      for (let i = from; i < to; i++) {
        const layer = await draftLayer(
          plan.workspaceId,
          plan.serviceId,
          plan.sourceLayer,
          plan.publicId(i),
          now,
        );
        batch.push(...layerItems(layer));
        written.push(layer.id);
      }
      await write(batch);
      ids.push(...written);
      layers += to - from;
      items += batch.length;
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        const s = (lastReport - started) / 1000;
        plan.progress(`seeding: ${layers} of ${plan.count} layers (${Math.round(items / s)} items/s)`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: plan.concurrency }, worker));
  } finally {
    db.destroy();
  }
  return {
    layers,
    items,
    requests,
    retriedItems,
    ms: Date.now() - started,
    complete: !stopped && layers === plan.count,
    ids,
  };
}
