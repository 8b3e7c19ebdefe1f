import * as z from 'zod/mini';
import { NotFoundError } from '#domain/errors.ts';
import {
  type Granule,
  type GranuleFilter,
  isActive,
  type MosaicRepository,
  type MosaicState,
} from '#domain/mosaics.ts';
import type { Page } from '#domain/page.ts';
import type { Service } from '#domain/services.ts';
import { decoder } from './decode.ts';
import { DynamoRepository, forEachPrefixPage, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { itemAbsent, itemExists } from './table.ts';
import { type GuardedItem, putNew, transactOr, unguarded } from './transactions.ts';

/** A granule read for its source and generations only (the projection `activeSources` reads). */
const toGranuleSpan = /* @__PURE__ */ decoder<
  Pick<Granule, 'source_uri' | 'added_generation' | 'removed_generation'>
>('mosaic granule', () =>
  z.looseObject({
    source_uri: z.string(),
    added_generation: z.number(),
    removed_generation: z.optional(z.number()),
  }),
);

/** A stored mosaic granule (its header as read from the file, and the generations it is in). */
export const toGranule = /* @__PURE__ */ decoder<Granule>('mosaic granule', () =>
  z.looseObject({
    id: z.string(),
    workspace_id: z.string(),
    service_id: z.string(),
    source_uri: z.string(),
    time: z.optional(z.string()),
    elevation: z.optional(z.number()),
    added_generation: z.number(),
    removed_generation: z.optional(z.number()),
    created_at: z.string(),
    crs: z.string(),
    srid: z.optional(z.number()),
    bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]),
    width: z.number(),
    height: z.number(),
    band_count: z.number(),
    data_type: z.string(),
    resolution_x: z.number(),
    resolution_y: z.number(),
  }),
);

/** True when a cancelled transaction lost to a concurrent writer (condition on `generation`, or a conflict). */
function lostRace(codes: string[], mosaicIndex: number): boolean {
  return codes[mosaicIndex] === 'ConditionalCheckFailed' || codes.includes('TransactionConflict');
}

/** The service must still be an active raster mosaic when a generation commits. */
export function mosaicServiceCheck(table: string, service: Service): GuardedItem {
  return unguarded({
    ConditionCheck: {
      TableName: table,
      Key: keys.service(service.workspace_id, service.id),
      ConditionExpression: '#st = :active AND #ty = :mosaic',
      ExpressionAttributeNames: { '#st': 'status', '#ty': 'type' },
      ExpressionAttributeValues: { ':active': 'active', ':mosaic': 'raster_mosaic' },
    },
  });
}

/**
 * A generation that adds `granules`: the mosaic's flip from `base` to base+1 (the first one creates
 * it), the service check, then the granules — in that order, the indexes a caller's codes read.
 */
export function addedGeneration(
  table: string,
  service: Service,
  base: MosaicState,
  granules: Granule[],
  now: string,
): GuardedItem[] {
  const first = base.generation === 0;
  return [
    unguarded({
      Update: {
        TableName: table,
        Key: keys.mosaic(service.workspace_id, service.id),
        UpdateExpression:
          'SET #g = :next, granule_count = :count, updated_at = :now, entity = :e, service_id = :sid',
        ConditionExpression: first ? itemAbsent : '#g = :g',
        ExpressionAttributeNames: { '#g': 'generation' },
        ExpressionAttributeValues: {
          ':next': base.generation + 1,
          ':count': base.granule_count + granules.length,
          ':now': now,
          ':e': entities.mosaic,
          ':sid': service.id,
          ...(first ? {} : { ':g': base.generation }),
        },
      },
    }),
    mosaicServiceCheck(table, service),
    ...granules.map((g) =>
      putNew(table, {
        ...keys.mosaicGranule(g.workspace_id, g.service_id, g.id),
        entity: entities.mosaicGranule,
        ...g,
      }),
    ),
  ];
}

/**
 * The mosaic's flip from `base` to base+1 that removes `count` granules. The last granule stays
 * (spec 4.17): the count condition holds even if a read was stale.
 */
export function shrunkGeneration(
  table: string,
  service: Service,
  base: MosaicState,
  count: number,
  now: string,
) {
  return unguarded({
    Update: {
      TableName: table,
      Key: keys.mosaic(service.workspace_id, service.id),
      UpdateExpression: 'SET #g = :next, granule_count = granule_count - :k, updated_at = :now',
      ConditionExpression: '#g = :g AND granule_count > :k',
      ExpressionAttributeNames: { '#g': 'generation' },
      ExpressionAttributeValues: {
        ':next': base.generation + 1,
        ':g': base.generation,
        ':k': count,
        ':now': now,
      },
    },
  });
}

/** A granule's removal as of generation `next` (it must exist and not be removed yet). */
export function removedGranule(table: string, service: Service, granuleId: string, next: number) {
  return unguarded({
    Update: {
      TableName: table,
      Key: keys.mosaicGranule(service.workspace_id, service.id, granuleId),
      UpdateExpression: 'SET removed_generation = :next',
      ConditionExpression: `${itemExists} AND attribute_not_exists(removed_generation)`,
      ExpressionAttributeValues: { ':next': next },
    },
  });
}

/**
 * DynamoDB implementation of the mosaic port (ADR 0060): one `MOSAIC#<service>` item with the
 * committed generation, granule items that record the generations they lived in. Every commit is
 * one TransactWriteItems conditioned on the generation it read, so readers see N or N+1, never a mix.
 */
export class DynamoMosaicRepository extends DynamoRepository implements MosaicRepository {
  async state(workspaceId: string, serviceId: string): Promise<MosaicState> {
    const item = await this.get(keys.mosaic(workspaceId, serviceId));
    return {
      generation: (item?.generation as number | undefined) ?? 0,
      granule_count: (item?.granule_count as number | undefined) ?? 0,
      ...(item?.updated_at ? { updated_at: item.updated_at as string } : {}),
    };
  }

  async findGranule(workspaceId: string, serviceId: string, granuleId: string): Promise<Granule | undefined> {
    const item = await this.get(keys.mosaicGranule(workspaceId, serviceId, granuleId));
    return item ? toGranule(item) : undefined;
  }

  async listGranules(
    workspaceId: string,
    serviceId: string,
    generation: number,
    filter: GranuleFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Granule>> {
    const partition = keys.workspacePartition(workspaceId);
    const prefix = keys.mosaicGranulePrefix(serviceId);
    const conditions = ['#added <= :g', '(attribute_not_exists(#removed) OR #removed > :g)'];
    const names: Record<string, string> = { '#added': 'added_generation', '#removed': 'removed_generation' };
    const values: Record<string, unknown> = { ':g': generation };
    if (filter.bbox) {
      const [minx, miny, maxx, maxy] = filter.bbox;
      conditions.push('#b[0] <= :maxx', '#b[2] >= :minx', '#b[1] <= :maxy', '#b[3] >= :miny');
      names['#b'] = 'bbox';
      Object.assign(values, { ':minx': minx, ':miny': miny, ':maxx': maxx, ':maxy': maxy });
    }
    if (filter.time) {
      names['#t'] = 'time';
      conditions.push('attribute_exists(#t)');
      if (filter.time.start) {
        conditions.push('#t >= :tstart');
        values[':tstart'] = filter.time.start;
      }
      if (filter.time.end) {
        conditions.push('#t <= :tend');
        values[':tend'] = filter.time.end;
      }
    }
    const page = await queryPrefixPage(this.db, this.table, partition, prefix, limit, cursor, {
      filter: { expression: conditions.join(' AND '), names, values },
      consistent: true,
    });
    return { items: page.items.map(toGranule), nextCursor: page.nextCursor };
  }

  async activeSources(workspaceId: string, serviceId: string, generation: number): Promise<Set<string>> {
    const sources = new Set<string>();
    await forEachPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      keys.mosaicGranulePrefix(serviceId),
      (items) => {
        for (const item of items) {
          const granule = toGranuleSpan(item);
          if (isActive(granule, generation)) sources.add(granule.source_uri);
        }
      },
      { expression: 'source_uri, added_generation, removed_generation' },
    );
    return sources;
  }

  private serviceGone(service: Service) {
    return new NotFoundError('service_not_found', `Service '${service.name}' no longer exists.`);
  }

  async commitHarvest(
    service: Service,
    base: MosaicState,
    granules: Granule[],
    now: string,
  ): Promise<boolean> {
    const lost = await transactOr(
      this.db,
      addedGeneration(this.table, service, base, granules, now),
      (codes) => {
        if (lostRace(codes, 0)) return true;
        if (codes[1] === 'ConditionalCheckFailed') throw this.serviceGone(service);
        return undefined;
      },
    );
    return !lost;
  }

  async commitRemoval(
    service: Service,
    base: MosaicState,
    granuleId: string,
    now: string,
  ): Promise<'ok' | 'retry' | 'gone'> {
    const answer = await transactOr<'retry' | 'gone'>(
      this.db,
      [
        shrunkGeneration(this.table, service, base, 1, now),
        removedGranule(this.table, service, granuleId, base.generation + 1),
        mosaicServiceCheck(this.table, service),
      ],
      (codes) => {
        if (codes[1] === 'ConditionalCheckFailed') return 'gone';
        if (lostRace(codes, 0)) return 'retry';
        if (codes[2] === 'ConditionalCheckFailed') throw this.serviceGone(service);
        return undefined;
      },
    );
    return answer ?? 'ok';
  }
}
