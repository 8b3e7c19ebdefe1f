import * as z from 'zod/mini';
import {
  type ClaimMapping,
  type ClaimMappingRepository,
  claimDigest,
  GLOBAL_SCOPE,
  mappingTriple,
  type RoleRule,
} from '#domain/claim-mappings.ts';
import {
  AlreadyExistsError,
  InvalidInputError,
  NotFoundError,
  RuleViolationError,
  StateConflictError,
} from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import { ruleOf, summaryMappings } from './claim-summaries.ts';
import { decoder, text } from './decode.ts';
import {
  DynamoRepository,
  indexCondition,
  keyCondition,
  queryInput,
  queryPage,
  queryPages,
  queryPrefixPage,
} from './items.ts';
import { entities, keys, type RoleReferrer } from './keys.ts';
import { summaryChangeOf } from './summary-counters.ts';
import { itemExists } from './table.ts';
import { concurrentModification, type GuardedItem, putNew, transact, unguarded } from './transactions.ts';

/**
 * The most mappings a scope (a workspace, or the global scope) may have: every request of a token
 * caller resolves its roles over them. Creating one more is refused (422 `claim_mapping_limit`).
 */
export const MAX_MAPPINGS_PER_SCOPE = 500;

function scopeWorkspace(scope: string): string | undefined {
  return scope === GLOBAL_SCOPE ? undefined : scope;
}

/** A stored claim mapping (a workspace's, or a global one with `workspace_id` `*`). */
export const toMapping = /* @__PURE__ */ decoder<ClaimMapping>('claim mapping', () =>
  z.looseObject({
    id: z.string(),
    workspace_id: z.string(),
    claim_name: z.string(),
    claim_value: z.string(),
    role_id: z.string(),
    priority: z.number(),
    custom_role: z.boolean(),
    created_by: z.optional(text<NonNullable<ClaimMapping['created_by']>>()),
    created_at: z.string(),
  }),
);

/**
 * The most bytes of rules a scope's summary holds (ADR 0103): ~300 typical mappings, ~25 of the
 * longest. A scope with more has an overflowed summary, and its callers query its mappings.
 */
export const SUMMARY_MAX_BYTES = 32 * 1024;

/**
 * How often a create or delete re-reads a summary another writer changed meanwhile: each round
 * one of the writers wins, so a burst of N concurrent writes of one scope needs N rounds.
 */
const SUMMARY_ATTEMPTS = 25;

/** Another writer changed the scope's summary between its read and this transaction. */
class SummaryMoved extends Error {}

/** A mapping as the referrer of its custom role (ADR 0135). */
function mappingReferrer(m: Pick<ClaimMapping, 'workspace_id' | 'id'>): RoleReferrer {
  const ws = scopeWorkspace(m.workspace_id);
  return { kind: 'claim_mapping', ...(ws ? { workspaceId: ws } : {}), id: m.id };
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
            // What the count is made of (ADR 0135).
            unguarded({
              Put: {
                TableName: this.table,
                Item: { ...keys.roleRef(m.role_id, mappingReferrer(m)), entity: entities.roleRef },
              },
            }),
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
    // The workspace summary counts it (ADR 0137).
    if (ws)
      items.push(
        ...summaryChangeOf(this.table, 'claim_mapping', { id: m.id, workspace_id: ws }, undefined, m),
      );
    await this.withSummary(m.workspace_id, items, {
      adds: 1,
      change: (rules) => {
        rules[m.id] = ruleOf(m);
      },
    });
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

  /** Every mapping of the scope, over as many pages as it takes (`consistent` for a summary's rebuild). */
  async all(scope: string, consistent = false): Promise<ClaimMapping[]> {
    const partition = keys.claimMapping(scopeWorkspace(scope), '').PK;
    const all: ClaimMapping[] = [];
    await queryPages(
      this.db,
      queryInput(this.table, keyCondition(partition, { prefix: keys.claimMappingPrefix }), { consistent }),
      (items) => {
        all.push(...items.map(toMapping));
        return true;
      },
    );
    return all;
  }

  async delete(m: ClaimMapping): Promise<void> {
    const ws = scopeWorkspace(m.workspace_id);
    const items: GuardedItem[] = [
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
            unguarded({
              Delete: { TableName: this.table, Key: keys.roleRef(m.role_id, mappingReferrer(m)) },
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
    ];
    if (ws)
      items.push(
        ...summaryChangeOf(this.table, 'claim_mapping', { id: m.id, workspace_id: ws }, m, undefined),
      );
    await this.withSummary(m.workspace_id, items, {
      adds: -1,
      change: (rules) => {
        delete rules[m.id];
      },
    });
  }

  async summarize(scope: string): Promise<void> {
    try {
      await this.withSummary(scope, [], { adds: 0, onlyIfMissing: true });
    } catch (error) {
      // Written meanwhile by a create or delete of the scope: it exists, which is the goal.
      if (!(error instanceof StateConflictError)) throw error;
    }
  }

  /**
   * Commits a mapping's `items` with the scope's summary updated by `change` (ADR 0103). The
   * summary is the scope's serialisation point: it is read, changed and put back conditioned on its
   * write count, so two writers never both commit from the same state (the loser re-reads). A scope
   * without one (its first mapping, or mappings older than summaries) gets it from a Query of its
   * mappings in the same way: any writer that commits meanwhile changes the count the put expects.
   * The summary counts the scope's mappings, overflowed or not, so a create past
   * MAX_MAPPINGS_PER_SCOPE is refused in the same serialised step.
   */
  private async withSummary(
    scope: string,
    items: GuardedItem[],
    how: { adds: number; change?: (rules: Record<string, RoleRule>) => void; onlyIfMissing?: boolean },
  ): Promise<void> {
    const key = keys.claimMappingSummary(scopeWorkspace(scope));
    for (let attempt = 1; ; attempt++) {
      const current = await this.get(key);
      if (current && how.onlyIfMissing) return;
      let rules = summaryMappings(current);
      let count = typeof current?.count === 'number' && rules ? current.count : undefined;
      if (!rules || count === undefined) {
        // Strongly consistent: a mapping deleted just before must not come back into the summary.
        const all = await this.all(scope, true);
        rules = Object.fromEntries(all.map((m) => [m.id, ruleOf(m)]));
        count = all.length;
      }
      if (how.adds > 0 && count + how.adds > MAX_MAPPINGS_PER_SCOPE) {
        throw new RuleViolationError(
          'claim_mapping_limit',
          `A ${scope === GLOBAL_SCOPE ? 'deployment' : 'workspace'} has at most ${MAX_MAPPINGS_PER_SCOPE} claim mappings; delete one first.`,
        );
      }
      how.change?.(rules);
      count = Math.max(0, count + how.adds);
      const fits = JSON.stringify(rules).length <= SUMMARY_MAX_BYTES;
      const writes = Number(current?.writes ?? 0);
      const summary: GuardedItem = {
        item: {
          Put: {
            TableName: this.table,
            Item: {
              ...key,
              entity: entities.claimMappingSummary,
              writes: writes + 1,
              count,
              ...(fits ? { mappings: rules } : { overflow: true }),
            },
            ...(current
              ? {
                  ConditionExpression: 'writes = :writes',
                  ExpressionAttributeValues: { ':writes': writes },
                }
              : { ConditionExpression: 'attribute_not_exists(PK)' }),
          },
        },
        onConditionFailed: () => new SummaryMoved(),
      };
      try {
        await transact(this.db, [...items, summary], () => new SummaryMoved());
        return;
      } catch (error) {
        if (!(error instanceof SummaryMoved)) throw error;
        if (attempt >= SUMMARY_ATTEMPTS) throw concurrentModification('The claim mapping summary')();
        // Jittered, so the writers that lost this round don't meet again at once.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
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
