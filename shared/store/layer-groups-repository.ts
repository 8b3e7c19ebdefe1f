import * as z from 'zod/mini';
import {
  AlreadyExistsError,
  DependencyConflictError,
  InvalidInputError,
  StateConflictError,
} from '#domain/errors.ts';
import type { LayerGroup, LayerGroupRepository, VisitedGroup } from '#domain/layer-groups.ts';
import type { PublicIdMarker } from '#domain/layers.ts';
import type { Page } from '#domain/page.ts';
import { decoder } from './decode.ts';
import { batchGetItems, DynamoRepository, queryPrefixPage } from './items.ts';
import { entities, keys, parseKey } from './keys.ts';
import { attributes, itemAbsent, itemExists } from './table.ts';
import {
  activeCheck,
  concurrentModification,
  type GuardedItem,
  putNew,
  transact,
  versionIs,
} from './transactions.ts';

/** A stored layer group. */
export const toGroup = /* @__PURE__ */ decoder<LayerGroup>('layer group', () =>
  z.looseObject({
    id: z.string(),
    workspace_id: z.string(),
    public_id: z.string(),
    title: z.string(),
    members: z.array(
      z.looseObject({ resource: z.string(), style: z.optional(z.string()), opacity: z.optional(z.number()) }),
    ),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

/** DynamoDB implementation of the layer group port. Membership is counted on the members' public id markers. */
export class DynamoLayerGroupRepository extends DynamoRepository implements LayerGroupRepository {
  private membership(workspaceId: string, resource: string, delta: 1 | -1): GuardedItem {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: keys.publicId(workspaceId, resource),
          UpdateExpression: 'ADD member_of_count :d',
          ConditionExpression: itemExists,
          ExpressionAttributeValues: { ':d': delta },
        },
      },
      onConditionFailed: () =>
        new InvalidInputError(
          'unknown_member',
          `Member '${resource}' is not a layer or layer group of this workspace.`,
        ),
    };
  }

  private claim(g: LayerGroup): GuardedItem {
    const marker: PublicIdMarker = { kind: 'group', target_id: g.id, member_of_count: 0 };
    return putNew(
      this.table,
      { ...keys.publicId(g.workspace_id, g.public_id), entity: entities.publicId, ...marker },
      () =>
        new AlreadyExistsError(
          'public_id_taken',
          `public_id '${g.public_id}' is already published in this workspace.`,
        ),
    );
  }

  private release(g: LayerGroup): GuardedItem {
    return {
      item: {
        Delete: {
          TableName: this.table,
          Key: keys.publicId(g.workspace_id, g.public_id),
          ConditionExpression:
            'target_id = :id AND (attribute_not_exists(member_of_count) OR member_of_count <= :zero)',
          ExpressionAttributeValues: { ':id': g.id, ':zero': 0 },
        },
      },
      onConditionFailed: () =>
        new DependencyConflictError(
          'group_in_group',
          `Group '${g.public_id}' is a member of another layer group.`,
        ),
    };
  }

  private put(g: LayerGroup, previousVersion?: number): GuardedItem {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: { ...keys.layerGroup(g.workspace_id, g.id), entity: entities.layerGroup, ...g },
          ...(previousVersion === undefined
            ? { ConditionExpression: itemAbsent }
            : {
                ...versionIs(previousVersion),
              }),
        },
      },
      onConditionFailed: () =>
        new StateConflictError('concurrent_modification', 'The group was changed by another request.'),
    };
  }

  private unchanged(workspaceId: string, v: VisitedGroup): GuardedItem {
    return {
      item: {
        ConditionCheck: {
          TableName: this.table,
          Key: keys.layerGroup(workspaceId, v.id),
          ...versionIs(v.version),
        },
      },
      onConditionFailed: () =>
        new StateConflictError('concurrent_modification', 'A nested group changed during the update; retry.'),
    };
  }

  /**
   * Layers of a service that is being deleted can't join a group: the deletion computes the groups
   * to remove once the service is hidden, so each added layer member's service must still be active
   * when the group is written (checked in the same transaction; ADR 0070).
   */
  private async activeServiceChecks(workspaceId: string, resources: string[]): Promise<GuardedItem[]> {
    if (resources.length === 0) return [];
    const markers = await batchGetItems(
      this.db,
      this.table,
      resources.map((r) => keys.publicId(workspaceId, r)),
      { expression: `${attributes.sk}, kind, service_id` },
    );
    const services = new Map<string, string>();
    for (const m of markers) {
      if (m.kind === 'layer' && typeof m.service_id === 'string') {
        services.set(m.service_id, parseKey.publicId(m.SK as string));
      }
    }
    return [...services].map(([serviceId, resource]) =>
      activeCheck(
        this.table,
        keys.service(workspaceId, serviceId),
        () =>
          new InvalidInputError(
            'unknown_member',
            `Member '${resource}' belongs to a service that is being deleted.`,
          ),
      ),
    );
  }

  async create(g: LayerGroup): Promise<void> {
    const resources = g.members.map((m) => m.resource);
    await transact(this.db, [
      this.claim(g),
      this.put(g),
      ...resources.map((r) => this.membership(g.workspace_id, r, 1)),
      ...(await this.activeServiceChecks(g.workspace_id, resources)),
    ]);
  }

  async find(workspaceId: string, id: string): Promise<LayerGroup | undefined> {
    const out = await this.get(keys.layerGroup(workspaceId, id));
    return out ? toGroup(out) : undefined;
  }

  async list(workspaceId: string, limit: number, cursor?: string): Promise<Page<LayerGroup>> {
    const partition = keys.workspacePartition(workspaceId);
    const page = await queryPrefixPage(this.db, this.table, partition, keys.layerGroupPrefix, limit, cursor);
    return { items: page.items.map(toGroup), nextCursor: page.nextCursor };
  }

  async update(previous: LayerGroup, next: LayerGroup, visited: VisitedGroup[]): Promise<void> {
    const before = new Set(previous.members.map((m) => m.resource));
    const after = new Set(next.members.map((m) => m.resource));
    const added = [...after].filter((r) => !before.has(r));
    const guards = await this.activeServiceChecks(next.workspace_id, added);
    await transact(
      this.db,
      [
        this.put(next, previous.version),
        ...(previous.public_id !== next.public_id ? [this.claim(next), this.release(previous)] : []),
        ...[...after].filter((r) => !before.has(r)).map((r) => this.membership(next.workspace_id, r, 1)),
        ...[...before].filter((r) => !after.has(r)).map((r) => this.membership(next.workspace_id, r, -1)),
        ...visited.filter((v) => v.id !== next.id).map((v) => this.unchanged(next.workspace_id, v)),
        ...guards,
      ],
      concurrentModification('The group'),
    );
  }

  /** The items of a group's deletion: the group (at its version), its public id, its memberships. */
  deletionItems(g: LayerGroup): GuardedItem[] {
    return [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: keys.layerGroup(g.workspace_id, g.id),
            ...versionIs(g.version),
          },
        },
        onConditionFailed: () =>
          new StateConflictError('concurrent_modification', 'The group was changed by another request.'),
      },
      this.release(g),
      ...g.members.map((m) => this.membership(g.workspace_id, m.resource, -1)),
    ];
  }

  async delete(g: LayerGroup): Promise<void> {
    await transact(this.db, this.deletionItems(g), concurrentModification('The group'));
  }
}
