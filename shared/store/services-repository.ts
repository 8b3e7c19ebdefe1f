import * as z from 'zod/mini';
import type { PostgisConnectionInfo } from '#domain/datasource.ts';
import { AlreadyExistsError, NotFoundError } from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import { type Service, type ServiceRepository, WITHHELD_SECRET } from '#domain/services.ts';
import { decoder, text } from './decode.ts';
import { DynamoRepository, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { newServiceCounters } from './plan-counters.ts';
import { summaryChangeOf } from './summary-counters.ts';
import { activeCheck, concurrentModification, putNew, transact } from './transactions.ts';

/** A service from its item (a PostGIS service or a raster mosaic, by `type`). */
export const toService = /* @__PURE__ */ decoder<Service>('service', () => {
  const base = {
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    password_enc: z.optional(z.string()),
    enabled: z.boolean(),
    status: text<Service['status']>(),
    deletion_id: z.optional(z.string()),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  };
  return z.discriminatedUnion('type', [
    z.looseObject({
      ...base,
      type: z.literal('postgis'),
      connection: z.looseObject({
        host: z.string(),
        port: z.number(),
        database: z.string(),
        user: z.string(),
        sslmode: z.optional(text<NonNullable<PostgisConnectionInfo['sslmode']>>()),
        schemas: z.optional(z.array(z.string())),
      }),
    }),
    z.looseObject({
      ...base,
      type: z.literal('raster_mosaic'),
      connection: z.looseObject({ root_uri: z.string() }),
    }),
  ]);
});

function nameTaken(name: string) {
  return new AlreadyExistsError(
    'service_name_taken',
    `A service named '${name}' already exists in this workspace.`,
  );
}

/** DynamoDB implementation of the service port (items in the workspace partition). */
export class DynamoServiceRepository extends DynamoRepository implements ServiceRepository {
  async create(s: Service): Promise<void> {
    await transact(this.db, [
      putNew(
        this.table,
        { ...keys.serviceName(s.workspace_id, s.name), entity: entities.serviceName, service_id: s.id },
        () => nameTaken(s.name),
      ),
      putNew(this.table, { ...keys.service(s.workspace_id, s.id), entity: entities.service, ...s }),
      // Its deletion plan's counters start exact, at zero (ADR 0101).
      newServiceCounters(this.table, s.workspace_id, s.id),
      ...summaryChangeOf(this.table, 'service', s, undefined, s),
      activeCheck(
        this.table,
        keys.workspace(s.workspace_id),
        () => new NotFoundError('workspace_not_found', 'The workspace no longer exists.'),
      ),
    ]);
  }

  async findById(workspaceId: string, id: string): Promise<Service | undefined> {
    const out = await this.get(keys.service(workspaceId, id));
    return out ? toService(out) : undefined;
  }

  async findByName(workspaceId: string, name: string): Promise<Service | undefined> {
    const marker = await this.get(keys.serviceName(workspaceId, name));
    const id = marker?.service_id as string | undefined;
    return id ? this.findById(workspaceId, id) : undefined;
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<Service>> {
    const partition = keys.workspacePartition(workspaceId);
    const page = await queryPrefixPage(this.db, this.table, partition, keys.servicePrefix, limit, cursor, {
      filter: { expression: '#st = :active', names: { '#st': 'status' }, values: { ':active': 'active' } },
    });
    return { items: page.items.map(toService), nextCursor: page.nextCursor };
  }

  async update(previous: Service, next: Service): Promise<void> {
    // A service the authorizer carried has its password withheld (ADR 0099): never written back.
    if (next.password_enc === WITHHELD_SECRET) {
      throw new Error('a service read without its secret was about to be written');
    }
    const renamed = previous.name !== next.name;
    const concurrent = concurrentModification('The service');
    await transact(
      this.db,
      [
        {
          item: {
            Put: {
              TableName: this.table,
              Item: { ...keys.service(next.workspace_id, next.id), entity: entities.service, ...next },
              ConditionExpression: '#v = :v AND #s = :active',
              ExpressionAttributeNames: { '#v': 'version', '#s': 'status' },
              ExpressionAttributeValues: { ':v': previous.version, ':active': 'active' },
            },
          },
          onConditionFailed: concurrent,
        },
        ...(renamed
          ? [
              putNew(
                this.table,
                {
                  ...keys.serviceName(next.workspace_id, next.name),
                  entity: entities.serviceName,
                  service_id: next.id,
                },
                () => nameTaken(next.name),
              ),
              {
                item: {
                  Delete: {
                    TableName: this.table,
                    Key: keys.serviceName(previous.workspace_id, previous.name),
                  },
                },
              },
            ]
          : []),
      ],
      concurrent,
    );
  }
}
