import {
  AlreadyExistsError,
  DependencyConflictError,
  InvalidInputError,
  NotFoundError,
} from '../domain/errors.ts';
import {
  customRoles,
  type Layer,
  type LayerRepository,
  type PublicIdMarker,
  usedStyles,
} from '../domain/layers.ts';
import type { Page } from '../domain/page.ts';
import { DynamoRepository, queryPrefixPage, withoutKeys } from './items.ts';
import { entities, keys } from './keys.ts';
import { layerCountChanges } from './plan-counters.ts';
import { itemExists } from './table.ts';
import {
  activeCheck,
  concurrentModification,
  type GuardedItem,
  putNew,
  transact,
  versionIs,
} from './transactions.ts';

/** Role reference count changes for a set of custom roles (each must be active when added). */
export function roleReferences(table: string, add: string[], remove: string[]): GuardedItem[] {
  return [
    ...add.map((roleId) => ({
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
    })),
    ...remove.map((roleId) => ({
      item: {
        Update: {
          TableName: table,
          Key: keys.role(roleId),
          UpdateExpression: 'ADD ref_count :minus',
          ExpressionAttributeValues: { ':minus': -1 },
        },
      },
    })),
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
      ...roleReferences(this.table, customRoles(l.allowed_roles), []),
      ...styleReferences(this.table, l.workspace_id, usedStyles(l), []),
      // The plan's counters change with the layer or not at all (ADR 0101).
      ...layerCountChanges(this.table, undefined, l),
    ]);
  }

  async find(workspaceId: string, serviceId: string, layerId: string): Promise<Layer | undefined> {
    const out = await this.get(keys.layer(workspaceId, serviceId, layerId));
    return out ? (withoutKeys(out) as unknown as Layer) : undefined;
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
    return { items: page.items.map((i) => withoutKeys(i) as unknown as Layer), nextCursor: page.nextCursor };
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
      out.push(...page.items.map((i) => withoutKeys(i) as unknown as Layer));
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
        ...roleReferences(this.table, [], customRoles(l.allowed_roles)),
        ...styleReferences(this.table, l.workspace_id, [], usedStyles(l)),
        ...layerCountChanges(this.table, l, undefined),
      ],
      concurrentModification('The layer'),
    );
  }

  async findPublicId(workspaceId: string, publicId: string): Promise<PublicIdMarker | undefined> {
    const out = await this.get(keys.publicId(workspaceId, publicId));
    return out ? (withoutKeys(out) as unknown as PublicIdMarker) : undefined;
  }
}
