import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError, DependencyConflictError, NotFoundError } from '../domain/errors.ts';
import type { Page } from '../domain/page.ts';
import type { Role, RoleRepository, StoredPolicy } from '../domain/roles.ts';
import { documentClient, tableName } from './client.ts';
import { isConditionFailure, translateStoreError } from './errors.ts';
import { getItem } from './items.ts';
import { entities, keys } from './keys.ts';
import { decodeCursor, encodeCursor } from './paging.ts';

function toRole(item: Record<string, unknown>): Role {
  const { PK: _pk, SK: _sk, GSI1PK: _g1, GSI1SK: _g2, entity: _e, ...role } = item;
  return role as unknown as Role;
}

function toPolicy(item: Record<string, unknown>): StoredPolicy {
  const { PK: _pk, SK: _sk, entity: _e, ...policy } = item;
  return policy as unknown as StoredPolicy;
}

/** DynamoDB implementation of the role port. A retired role keeps its item forever, so its id stays taken. */
export class DynamoRoleRepository implements RoleRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  async create(role: Role): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...keys.role(role.id), ...keys.roleListing(role.id), entity: entities.role, ...role },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new AlreadyExistsError(
          'role_id_unavailable',
          `The role id '${role.id}' exists or was retired.`,
        );
      }
      translateStoreError(error);
    }
  }

  async find(id: string): Promise<Role | undefined> {
    const out = await getItem(this.db, this.table, keys.role(id));
    return out ? toRole(out) : undefined;
  }

  async list(limit: number, cursor?: string): Promise<Page<Role>> {
    const start = decodeCursor(cursor, {
      PK: { prefix: keys.role('').PK },
      SK: { equals: keys.role('').SK },
      GSI1PK: { equals: keys.roleListingPartition },
      GSI1SK: true,
    });
    try {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: 'GSI1',
          KeyConditionExpression: 'GSI1PK = :p',
          ExpressionAttributeValues: { ':p': keys.roleListingPartition },
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      return { items: (out.Items ?? []).map(toRole), nextCursor: encodeCursor(out.LastEvaluatedKey) };
    } catch (error) {
      translateStoreError(error);
    }
  }

  async retire(role: Role, now: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.role(role.id),
          // Retired roles leave the listing (GSI1) but keep the item, so the id can never be reused.
          UpdateExpression: 'SET #s = :retired, updated_at = :now, #v = #v + :one REMOVE GSI1PK, GSI1SK',
          ConditionExpression: '#s = :active AND (attribute_not_exists(ref_count) OR ref_count <= :zero)',
          ExpressionAttributeNames: { '#s': 'status', '#v': 'version' },
          ExpressionAttributeValues: {
            ':retired': 'retired',
            ':active': 'active',
            ':now': now,
            ':one': 1,
            ':zero': 0,
          },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        const current = await this.find(role.id);
        if (current?.status !== 'active')
          throw new NotFoundError('role_not_found', `Role '${role.id}' does not exist.`);
        throw new DependencyConflictError(
          'role_in_use',
          `Role '${role.id}' is still assigned by ${current.ref_count} claim mapping(s); remove them first.`,
          { dependencies: { claim_mappings: current.ref_count } },
        );
      }
      translateStoreError(error);
    }
    // The policies of a retired role can never apply again; remove them.
    for (const policy of await this.listPolicies(role.id)) await this.deletePolicy(role.id, policy.id);
  }

  async putPolicy(roleId: string, policy: StoredPolicy): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...keys.rolePolicy(roleId, policy.id), entity: entities.rolePolicy, ...policy },
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    } catch (error) {
      // Granting the same rule twice is harmless.
      if (isConditionFailure(error)) return;
      translateStoreError(error);
    }
  }

  async listPolicies(roleId: string): Promise<StoredPolicy[]> {
    const items: StoredPolicy[] = [];
    let start: Record<string, unknown> | undefined;
    try {
      do {
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
            ExpressionAttributeValues: { ':p': keys.role(roleId).PK, ':s': keys.rolePolicyPrefix },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        items.push(...(out.Items ?? []).map(toPolicy));
        start = out.LastEvaluatedKey;
      } while (start);
      return items;
    } catch (error) {
      translateStoreError(error);
    }
  }

  async deletePolicy(roleId: string, policyId: string): Promise<boolean> {
    try {
      const out = await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: keys.rolePolicy(roleId, policyId),
          ReturnValues: 'ALL_OLD',
        }),
      );
      return out.Attributes !== undefined;
    } catch (error) {
      translateStoreError(error);
    }
  }
}
