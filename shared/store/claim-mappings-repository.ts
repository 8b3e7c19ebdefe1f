import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import {
  type ClaimMapping,
  type ClaimMappingRepository,
  claimDigest,
  GLOBAL_SCOPE,
  mappingTriple,
} from '../domain/claim-mappings.ts';
import { AlreadyExistsError, InvalidInputError, NotFoundError } from '../domain/errors.ts';
import type { Page } from '../domain/page.ts';
import { documentClient, tableName } from './client.ts';
import { cancellationCodes, translateStoreError } from './errors.ts';
import { getItem, queryPrefixPage } from './items.ts';
import { entities, keys } from './keys.ts';

/** Mappings read per scope for role resolution; more would make every request slow. */
export const MAX_MAPPINGS_PER_SCOPE = 500;

function scopeWorkspace(scope: string): string | undefined {
  return scope === GLOBAL_SCOPE ? undefined : scope;
}

function toMapping(item: Record<string, unknown>): ClaimMapping {
  const { PK: _pk, SK: _sk, GSI1PK: _g1, GSI1SK: _g2, entity: _e, ...m } = item;
  return m as unknown as ClaimMapping;
}

/** DynamoDB implementation of the claim mapping port. */
export class DynamoClaimMappingRepository implements ClaimMappingRepository {
  private readonly db = documentClient();
  private readonly table = tableName();

  async create(m: ClaimMapping): Promise<void> {
    const ws = scopeWorkspace(m.workspace_id);
    const items = [
      {
        Put: {
          TableName: this.table,
          Item: {
            ...keys.claimMappingTriple(ws, mappingTriple(m)),
            entity: entities.claimMappingTriple,
            mapping_id: m.id,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      {
        Put: {
          TableName: this.table,
          Item: {
            ...keys.claimMapping(ws, m.id),
            ...keys.claimMappingByClaim(claimDigest(m.claim_name, m.claim_value), m.workspace_id, m.id),
            entity: entities.claimMapping,
            ...m,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      ...(m.custom_role
        ? [
            {
              // The role must still be active, and now counts one more assignment (see deleteRole).
              Update: {
                TableName: this.table,
                Key: keys.role(m.role_id),
                UpdateExpression: 'ADD ref_count :one',
                ConditionExpression: '#s = :active',
                ExpressionAttributeNames: { '#s': 'status' },
                ExpressionAttributeValues: { ':one': 1, ':active': 'active' },
              },
            },
          ]
        : []),
      ...(ws
        ? [
            {
              // The workspace must be active, and counts its mappings so reads can skip the lookup.
              Update: {
                TableName: this.table,
                Key: keys.workspace(ws),
                UpdateExpression: 'ADD claim_mapping_count :one',
                ConditionExpression: '#s = :active',
                ExpressionAttributeNames: { '#s': 'status' },
                ExpressionAttributeValues: { ':active': 'active', ':one': 1 },
              },
            },
          ]
        : []),
    ];
    try {
      await this.db.send(new TransactWriteCommand({ TransactItems: items }));
    } catch (error) {
      const codes = cancellationCodes(error);
      if (codes?.[0] === 'ConditionalCheckFailed') {
        throw new AlreadyExistsError(
          'claim_mapping_exists',
          'This claim name, value and role are already mapped here.',
        );
      }
      if (m.custom_role && codes?.[2] === 'ConditionalCheckFailed') {
        throw new InvalidInputError('unknown_role', `role_id '${m.role_id}' is not a role.`);
      }
      if (codes?.some((c) => c === 'ConditionalCheckFailed')) {
        throw new NotFoundError('workspace_not_found', 'The workspace no longer exists.');
      }
      translateStoreError(error);
    }
  }

  async find(scope: string, id: string): Promise<ClaimMapping | undefined> {
    const out = await getItem(this.db, this.table, keys.claimMapping(scopeWorkspace(scope), id));
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
    try {
      await this.db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName: this.table,
                Key: keys.claimMapping(ws, m.id),
                ConditionExpression: 'attribute_exists(PK)',
              },
            },
            { Delete: { TableName: this.table, Key: keys.claimMappingTriple(ws, mappingTriple(m)) } },
            ...(m.custom_role
              ? [
                  {
                    Update: {
                      TableName: this.table,
                      Key: keys.role(m.role_id),
                      UpdateExpression: 'ADD ref_count :minus',
                      ConditionExpression: 'attribute_exists(PK)',
                      ExpressionAttributeValues: { ':minus': -1 },
                    },
                  },
                ]
              : []),
            ...(ws
              ? [
                  {
                    Update: {
                      TableName: this.table,
                      Key: keys.workspace(ws),
                      UpdateExpression: 'ADD claim_mapping_count :minus',
                      // Never recreate a deleted workspace item.
                      ConditionExpression: 'attribute_exists(PK)',
                      ExpressionAttributeValues: { ':minus': -1 },
                    },
                  },
                ]
              : []),
          ],
        }),
      );
    } catch (error) {
      if (cancellationCodes(error)?.[0] === 'ConditionalCheckFailed') {
        throw new NotFoundError('claim_mapping_not_found', `Claim mapping '${m.id}' no longer exists.`);
      }
      translateStoreError(error);
    }
  }

  async findByClaims(pairs: ReadonlyArray<readonly [string, string]>): Promise<ClaimMapping[]> {
    try {
      const pages = await Promise.all(
        pairs.map(([name, value]) =>
          this.db.send(
            new QueryCommand({
              TableName: this.table,
              IndexName: 'GSI1',
              KeyConditionExpression: 'GSI1PK = :p',
              ExpressionAttributeValues: {
                ':p': keys.claimMappingByClaimPartition(claimDigest(name, value)),
              },
              Limit: 100,
            }),
          ),
        ),
      );
      return pages.flatMap((out) => (out.Items ?? []).map(toMapping));
    } catch (error) {
      translateStoreError(error);
    }
  }
}
