import {
  type ClaimMapping,
  type ClaimMappingRepository,
  claimDigest,
  GLOBAL_SCOPE,
  mappingTriple,
} from '../domain/claim-mappings.ts';
import { AlreadyExistsError, InvalidInputError, NotFoundError } from '../domain/errors.ts';
import type { Page } from '../domain/page.ts';
import {
  DynamoRepository,
  indexCondition,
  queryInput,
  queryPage,
  queryPrefixPage,
  withoutKeys,
} from './items.ts';
import { entities, keys } from './keys.ts';
import { itemExists } from './table.ts';
import { type GuardedItem, putNew, transact, unguarded } from './transactions.ts';

/** Mappings read per scope for role resolution; more would make every request slow. */
export const MAX_MAPPINGS_PER_SCOPE = 500;

function scopeWorkspace(scope: string): string | undefined {
  return scope === GLOBAL_SCOPE ? undefined : scope;
}

function toMapping(item: Record<string, unknown>): ClaimMapping {
  return withoutKeys(item) as unknown as ClaimMapping;
}

/** DynamoDB implementation of the claim mapping port. */
export class DynamoClaimMappingRepository extends DynamoRepository implements ClaimMappingRepository {
  async create(m: ClaimMapping): Promise<void> {
    const ws = scopeWorkspace(m.workspace_id);
    const workspaceGone = () => new NotFoundError('workspace_not_found', 'The workspace no longer exists.');
    const items: GuardedItem[] = [
      putNew(
        this.table,
        {
          ...keys.claimMappingTriple(ws, mappingTriple(m)),
          entity: entities.claimMappingTriple,
          mapping_id: m.id,
        },
        () =>
          new AlreadyExistsError(
            'claim_mapping_exists',
            'This claim name, value and role are already mapped here.',
          ),
      ),
      putNew(
        this.table,
        {
          ...keys.claimMapping(ws, m.id),
          ...keys.claimMappingByClaim(claimDigest(m.claim_name, m.claim_value), m.workspace_id, m.id),
          entity: entities.claimMapping,
          ...m,
        },
        workspaceGone,
      ),
      ...(m.custom_role
        ? [
            {
              // The role must still be active, and now counts one more assignment (see deleteRole).
              item: {
                Update: {
                  TableName: this.table,
                  Key: keys.role(m.role_id),
                  UpdateExpression: 'ADD ref_count :one',
                  ConditionExpression: '#s = :active',
                  ExpressionAttributeNames: { '#s': 'status' },
                  ExpressionAttributeValues: { ':one': 1, ':active': 'active' },
                },
              },
              onConditionFailed: () =>
                new InvalidInputError('unknown_role', `role_id '${m.role_id}' is not a role.`),
            },
          ]
        : []),
      ...(ws
        ? [
            {
              // The workspace must be active, and counts its mappings so reads can skip the lookup.
              item: {
                Update: {
                  TableName: this.table,
                  Key: keys.workspace(ws),
                  UpdateExpression: 'ADD claim_mapping_count :one',
                  ConditionExpression: '#s = :active',
                  ExpressionAttributeNames: { '#s': 'status' },
                  ExpressionAttributeValues: { ':active': 'active', ':one': 1 },
                },
              },
              onConditionFailed: workspaceGone,
            },
          ]
        : []),
    ];
    await transact(this.db, items);
  }

  async find(scope: string, id: string): Promise<ClaimMapping | undefined> {
    const out = await this.get(keys.claimMapping(scopeWorkspace(scope), id));
    return out ? toMapping(out) : undefined;
  }

  async list(scope: string, limit: number, cursor?: string): Promise<Page<ClaimMapping>> {
    const partition = keys.claimMapping(scopeWorkspace(scope), '').PK;
    const page = await queryPrefixPage(
      this.db,
      this.table,
      partition,
      keys.claimMappingPrefix,
      limit,
      cursor,
    );
    return { items: page.items.map(toMapping), nextCursor: page.nextCursor };
  }

  async all(scope: string): Promise<ClaimMapping[]> {
    const page = await this.list(scope, MAX_MAPPINGS_PER_SCOPE);
    return page.items;
  }

  async delete(m: ClaimMapping): Promise<void> {
    const ws = scopeWorkspace(m.workspace_id);
    await transact(this.db, [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: keys.claimMapping(ws, m.id),
            ConditionExpression: itemExists,
          },
        },
        onConditionFailed: () =>
          new NotFoundError('claim_mapping_not_found', `Claim mapping '${m.id}' no longer exists.`),
      },
      unguarded({ Delete: { TableName: this.table, Key: keys.claimMappingTriple(ws, mappingTriple(m)) } }),
      ...(m.custom_role
        ? [
            unguarded({
              Update: {
                TableName: this.table,
                Key: keys.role(m.role_id),
                UpdateExpression: 'ADD ref_count :minus',
                ConditionExpression: itemExists,
                ExpressionAttributeValues: { ':minus': -1 },
              },
            }),
          ]
        : []),
      ...(ws
        ? [
            unguarded({
              Update: {
                TableName: this.table,
                Key: keys.workspace(ws),
                UpdateExpression: 'ADD claim_mapping_count :minus',
                // Never recreate a deleted workspace item.
                ConditionExpression: itemExists,
                ExpressionAttributeValues: { ':minus': -1 },
              },
            }),
          ]
        : []),
    ]);
  }

  /** Every mapping of each (claim name, value) pair, through GSI1 (at most 100 a pair). */
  async findByClaims(pairs: ReadonlyArray<readonly [string, string]>): Promise<ClaimMapping[]> {
    const pages = await Promise.all(
      pairs.map(([name, value]) =>
        queryPage(
          this.db,
          queryInput(
            this.table,
            indexCondition(keys.claimMappingByClaimPartition(claimDigest(name, value))),
            {
              limit: 100,
            },
          ),
        ),
      ),
    );
    return pages.flatMap((items) => items.map(toMapping));
  }
}
