import * as z from 'zod/mini';
import {
  AlreadyExistsError,
  DependencyConflictError,
  InvalidInputError,
  NotFoundError,
} from '#domain/errors.ts';
import {
  customRoles,
  type Layer,
  type LayerRepository,
  type PublicIdMarker,
  usedStyles,
} from '#domain/layers.ts';
import type { Page } from '#domain/page.ts';
import { decoder, text } from './decode.ts';
import { DynamoRepository, keyCondition, queryInput, queryPages, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';
import { decodeCursor, encodeCursor } from './paging.ts';
import { layerCountChanges } from './plan-counters.ts';
import { summaryChangeOf } from './summary-counters.ts';
import { attributes, itemExists } from './table.ts';
import {
  activeCheck,
  concurrentModification,
  type GuardedItem,
  putNew,
  transact,
  unguarded,
  versionIs,
} from './transactions.ts';

/** A stored layer (every field it was ever written with: `styles` is absent on older layers). */
export const toLayer = /* @__PURE__ */ decoder<Layer>('layer', () => {
  const dimension = z.looseObject({
    name: z.string(),
    units: z.string(),
    extent: z.string(),
    default: z.optional(z.string()),
    source_property: z.optional(z.string()),
    end_property: z.optional(z.string()),
    multiple_values: z.optional(z.boolean()),
    nearest_value: z.optional(z.boolean()),
    current: z.optional(z.boolean()),
  });
  const sqlView = z.looseObject({
    sql: z.string(),
    geometry_column: z.string(),
    geometry_type: z.optional(z.string()),
    srid: z.optional(z.number()),
    id_column: z.string(),
    properties: z.optional(z.array(z.looseObject({ name: z.string(), type: z.string() }))),
    read_only: z.literal(true),
  });
  return z.looseObject({
    id: z.string(),
    workspace_id: z.string(),
    service_id: z.string(),
    source_layer: z.string(),
    public_id: z.string(),
    title: z.string(),
    description: z.optional(z.string()),
    crs_default: z.number(),
    enabled: z.boolean(),
    public: z.boolean(),
    allowed_roles: z.array(z.string()),
    dimensions: z.array(dimension),
    default_style: z.optional(z.string()),
    styles: z.optional(z.array(z.string())),
    is_sql_view: z.boolean(),
    sql_view: z.optional(sqlView),
    geometry_type: z.optional(z.string()),
    native_extent: z.optional(
      z.looseObject({
        min_x: z.number(),
        min_y: z.number(),
        max_x: z.number(),
        max_y: z.number(),
        srid: z.number(),
      }),
    ),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  });
});

/** A stored public id marker (a layer's or a group's). */
export const toPublicIdMarker = /* @__PURE__ */ decoder<PublicIdMarker>('public id marker', () =>
  z.looseObject({
    kind: text<PublicIdMarker['kind']>(),
    target_id: z.string(),
    service_id: z.optional(z.string()),
    // Absent reads as 0, as the release's condition reads it (`attribute_not_exists(member_of_count)`).
    member_of_count: z._default(z.number(), 0),
  }),
);

/**
 * Role reference count changes of a layer's `allowed_roles` (each added role must be active), each
 * with the layer's reference record in the role's partition (ADR 0135).
 */
export function roleReferences(
  table: string,
  layer: Pick<Layer, 'workspace_id' | 'service_id' | 'id'>,
  add: string[],
  remove: string[],
): GuardedItem[] {
  const referrer = {
    kind: 'layer' as const,
    workspaceId: layer.workspace_id,
    serviceId: layer.service_id,
    id: layer.id,
  };
  return [
    ...add.flatMap((roleId) => [
      {
        item: {
          Update: {
            TableName: table,
            Key: keys.role(roleId),
            UpdateExpression: 'ADD ref_count :one',
            ConditionExpression: '#s = :active',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':one': 1, ':active': 'active' },
          },
        },
        onConditionFailed: () =>
          new InvalidInputError('unknown_role', `allowed_roles: '${roleId}' is not a role.`),
      },
      unguarded({
        Put: { TableName: table, Item: { ...keys.roleRef(roleId, referrer), entity: entities.roleRef } },
      }),
    ]),
    ...remove.flatMap((roleId) => [
      unguarded({
        Update: {
          TableName: table,
          Key: keys.role(roleId),
          UpdateExpression: 'ADD ref_count :minus',
          ExpressionAttributeValues: { ':minus': -1 },
        },
      }),
      unguarded({ Delete: { TableName: table, Key: keys.roleRef(roleId, referrer) } }),
    ]),
  ];
}

/** Style reference count changes: a layer counts once on every style it uses (which must exist). */
function styleReferences(table: string, workspaceId: string, add: string[], remove: string[]): GuardedItem[] {
  return [
    ...add.map((name) => ({
      item: {
        Update: {
          TableName: table,
          Key: keys.style(workspaceId, name),
          UpdateExpression: 'ADD layer_ref_count :one',
          ConditionExpression: itemExists,
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
      onConditionFailed: () =>
        new InvalidInputError('unknown_style', `Style '${name}' does not exist in this workspace.`),
    })),
    ...remove.map((name) => ({
      item: {
        Update: {
          TableName: table,
          Key: keys.style(workspaceId, name),
          UpdateExpression: 'ADD layer_ref_count :minus',
          ConditionExpression: itemExists,
          ExpressionAttributeValues: { ':minus': -1 },
        },
      },
    })),
  ];
}

/** Most layer items one filtered page of listWorkspaceLayers reads (its cost bound, ADR 0130). */
export const WORKSPACE_LAYER_SCAN = 1000;
/** Items per Query of a filtered page. */
const WORKSPACE_LAYER_CHUNK = 250;

function publicIdTaken(publicId: string) {
  return new AlreadyExistsError(
    'public_id_taken',
    `public_id '${publicId}' is already published in this workspace.`,
  );
}

/** DynamoDB implementation of the layer port. */
export class DynamoLayerRepository extends DynamoRepository implements LayerRepository {
  private claimPublicId(l: Layer): GuardedItem {
    const marker: PublicIdMarker = {
      kind: 'layer',
      target_id: l.id,
      service_id: l.service_id,
      member_of_count: 0,
    };
    return putNew(
      this.table,
      { ...keys.publicId(l.workspace_id, l.public_id), entity: entities.publicId, ...marker },
      () => publicIdTaken(l.public_id),
    );
  }

  private releasePublicId(l: Layer): GuardedItem {
    return {
      item: {
        Delete: {
          TableName: this.table,
          Key: keys.publicId(l.workspace_id, l.public_id),
          // A resource that a group lists can't disappear or change its public id.
          ConditionExpression:
            'target_id = :id AND (attribute_not_exists(member_of_count) OR member_of_count <= :zero)',
          ExpressionAttributeValues: { ':id': l.id, ':zero': 0 },
        },
      },
      onConditionFailed: () =>
        new DependencyConflictError(
          'layer_in_group',
          `Layer '${l.public_id}' is a member of a layer group; remove it there first.`,
        ),
    };
  }

  async create(l: Layer): Promise<void> {
    await transact(this.db, [
      this.claimPublicId(l),
      putNew(this.table, { ...keys.layer(l.workspace_id, l.service_id, l.id), entity: entities.layer, ...l }),
      activeCheck(
        this.table,
        keys.service(l.workspace_id, l.service_id),
        () => new NotFoundError('service_not_found', 'The service no longer exists.'),
      ),
      ...roleReferences(this.table, l, customRoles(l.allowed_roles), []),
      ...styleReferences(this.table, l.workspace_id, usedStyles(l), []),
      // The plan's counters change with the layer or not at all (ADR 0101).
      ...layerCountChanges(this.table, undefined, l),
      ...summaryChangeOf(this.table, 'layer', l, undefined, l),
    ]);
  }

  async find(workspaceId: string, serviceId: string, layerId: string): Promise<Layer | undefined> {
    const out = await this.get(keys.layer(workspaceId, serviceId, layerId));
    return out ? toLayer(out) : undefined;
  }

  async list(workspaceId: string, serviceId: string, limit: number, cursor?: string): Promise<Page<Layer>> {
    const page = await queryPrefixPage(
      this.db,
      this.table,
      keys.workspacePartition(workspaceId),
      keys.layerPrefix(serviceId),
      limit,
      cursor,
    );
    return { items: page.items.map(toLayer), nextCursor: page.nextCursor };
  }

  /**
   * A page of the layers of a workspace, every service's (in key order: by service, then layer).
   * With `keep`, only the layers it keeps fill the page: DynamoDB can't match a case-insensitive
   * substring, so the page is filtered here, reading at most `budget` items per call;
   * a page may then come back short (or empty) with a cursor to read on (ADR 0130).
   */
  async listInWorkspacePage(
    workspaceId: string,
    limit: number,
    cursor?: string,
    keep?: (layer: Layer) => boolean,
    budget = WORKSPACE_LAYER_SCAN,
  ): Promise<Page<Layer>> {
    const partition = keys.workspacePartition(workspaceId);
    const prefix = keys.layerPrefixAll;
    if (!keep) {
      const page = await queryPrefixPage(this.db, this.table, partition, prefix, limit, cursor);
      return {
        items: page.items.map(toLayer),
        nextCursor: page.nextCursor,
      };
    }
    const start = decodeCursor(cursor, {
      [attributes.pk]: { equals: partition },
      [attributes.sk]: { prefix },
    });
    const items: Layer[] = [];
    let scanned = 0;
    // The key of the last item looked at, when the page filled before its Query page ended.
    let stoppedAt: Record<string, unknown> | undefined;
    const next = await queryPages(
      this.db,
      queryInput(this.table, keyCondition(partition)),
      (page) => {
        for (const item of page) {
          scanned += 1;
          const layer = toLayer(item);
          if (keep(layer)) items.push(layer);
          if (items.length >= limit && item !== page[page.length - 1]) {
            stoppedAt = { [attributes.pk]: item[attributes.pk], [attributes.sk]: item[attributes.sk] };
            return false;
          }
        }
        return items.length < limit && scanned < budget;
      },
      {
        ...(start ? { start } : {}),
        seek: { partition, range: { prefix } },
        limit: () => Math.min(WORKSPACE_LAYER_CHUNK, budget - scanned),
      },
    );
    return { items, nextCursor: encodeCursor(stoppedAt ?? next) };
  }

  /** Every layer of a workspace, whatever its service, at most `limit` (the data plane's catalog). */
  async listInWorkspace(workspaceId: string, limit: number): Promise<Layer[]> {
    const out: Layer[] = [];
    let cursor: string | undefined;
    do {
      const page = await queryPrefixPage(
        this.db,
        this.table,
        keys.workspacePartition(workspaceId),
        keys.layerPrefixAll,
        Math.min(1000, limit - out.length),
        cursor,
      );
      out.push(...page.items.map(toLayer));
      cursor = page.nextCursor;
    } while (cursor && out.length < limit);
    return out;
  }

  async update(previous: Layer, next: Layer): Promise<void> {
    const before = customRoles(previous.allowed_roles);
    const after = customRoles(next.allowed_roles);
    const renamed = previous.public_id !== next.public_id;
    await transact(
      this.db,
      [
        {
          item: {
            Put: {
              TableName: this.table,
              Item: {
                ...keys.layer(next.workspace_id, next.service_id, next.id),
                entity: entities.layer,
                ...next,
              },
              ...versionIs(previous.version),
            },
          },
          onConditionFailed: concurrentModification('The layer'),
        },
        ...(renamed ? [this.claimPublicId(next), this.releasePublicId(previous)] : []),
        ...roleReferences(
          this.table,
          next,
          after.filter((r) => !before.includes(r)),
          before.filter((r) => !after.includes(r)),
        ),
        ...styleReferences(
          this.table,
          next.workspace_id,
          usedStyles(next).filter((st) => !usedStyles(previous).includes(st)),
          usedStyles(previous).filter((st) => !usedStyles(next).includes(st)),
        ),
        ...layerCountChanges(this.table, previous, next),
        ...summaryChangeOf(this.table, 'layer', next, previous, next),
      ],
      concurrentModification('The layer'),
    );
  }

  async delete(l: Layer): Promise<void> {
    await transact(
      this.db,
      [
        {
          item: {
            Delete: {
              TableName: this.table,
              Key: keys.layer(l.workspace_id, l.service_id, l.id),
              ...versionIs(l.version),
            },
          },
          onConditionFailed: concurrentModification('The layer'),
        },
        this.releasePublicId(l),
        ...roleReferences(this.table, l, [], customRoles(l.allowed_roles)),
        ...styleReferences(this.table, l.workspace_id, [], usedStyles(l)),
        ...layerCountChanges(this.table, l, undefined),
        ...summaryChangeOf(this.table, 'layer', l, l, undefined),
      ],
      concurrentModification('The layer'),
    );
  }

  async findPublicId(workspaceId: string, publicId: string): Promise<PublicIdMarker | undefined> {
    const out = await this.get(keys.publicId(workspaceId, publicId));
    return out ? toPublicIdMarker(out) : undefined;
  }
}
