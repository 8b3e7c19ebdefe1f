import * as z from 'zod/mini';
import { AlreadyExistsError } from '#domain/errors.ts';
import type { Page } from '#domain/page.ts';
import {
  policyActions,
  policyServices,
  type RecordedReference,
  type Role,
  type RoleReference,
  type RoleRepository,
  type StoredPolicy,
} from '#domain/roles.ts';
import { decoder, text } from './decode.ts';
import { batchGetItems, DynamoRepository, forEachPrefixPage, queryIndexPage } from './items.ts';
import { entities, type Key, keys, parseKey, type RoleReferrer } from './keys.ts';
import { attributes, itemExists } from './table.ts';
import { putNew, transact, transactOr, unguarded } from './transactions.ts';

/** A cancellation whose first reason is the failed condition of the only item: an answer, not an error. */
const conditionFailed = (codes: string[]) => (codes[0] === 'ConditionalCheckFailed' ? true : undefined);

/** A stored role (a retired one keeps its item, so its id stays taken). */
export const toRole = /* @__PURE__ */ decoder<Role>('role', () =>
  z.looseObject({
    id: z.string(),
    name: z.string(),
    description: z.optional(z.string()),
    status: text<Role['status']>(),
    ref_count: z.number(),
    version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

/** A reference record's key as the domain names the referrer (ADR 0135). */
function referenceOf(r: RoleReferrer): RoleReference {
  return r.kind === 'claim_mapping'
    ? { kind: 'claim_mapping', ...(r.workspaceId ? { workspace_id: r.workspaceId } : {}), id: r.id }
    : { kind: 'layer', workspace_id: r.workspaceId, service_id: r.serviceId, id: r.id };
}

/** The key of the item a reference names: the mapping (its workspace's or the global one) or the layer. */
function referrerKey(r: RoleReference): Key {
  return r.kind === 'claim_mapping'
    ? keys.claimMapping(r.workspace_id, r.id)
    : keys.layer(r.workspace_id, r.service_id, r.id);
}
/** A stored policy of a role; its `operation` may name an operation id since renamed (ADR 0132). */
export const toPolicy = /* @__PURE__ */ decoder<StoredPolicy>('role policy', () =>
  z.looseObject({
    id: z.string(),
    workspace: z.string(),
    service: z.enum(policyServices),
    operation: z.string(),
    action: z.enum(policyActions),
    created_at: z.string(),
  }),
);

/** DynamoDB implementation of the role port. A retired role keeps its item forever, so its id stays taken. */
export class DynamoRoleRepository extends DynamoRepository implements RoleRepository {
  async create(role: Role): Promise<void> {
    // Every write of the catalog is a transaction: its audit record rides along (ADR 0094).
    await transact(this.db, [
      putNew(
        this.table,
        { ...keys.role(role.id), ...keys.roleListing(role.id), entity: entities.role, ...role },
        () =>
          new AlreadyExistsError('role_id_unavailable', `The role id '${role.id}' exists or was retired.`),
      ),
    ]);
  }

  async find(id: string): Promise<Role | undefined> {
    const out = await this.get(keys.role(id));
    return out ? toRole(out) : undefined;
  }

  async list(limit: number, cursor?: string): Promise<Page<Role>> {
    const page = await queryIndexPage(this.db, this.table, keys.roleListingPartition, limit, cursor, {
      pk: { prefix: keys.rolePartitionPrefix },
      sk: { equals: keys.roleSortKey },
    });
    return { items: page.items.map(toRole), nextCursor: page.nextCursor };
  }

  async retire(role: Role, now: string): Promise<boolean> {
    const { gsi1pk, gsi1sk } = attributes;
    const refused = await transactOr(
      this.db,
      [
        unguarded({
          Update: {
            TableName: this.table,
            Key: keys.role(role.id),
            // Retired roles leave the listing (GSI1) but keep the item, so the id can never be reused.
            UpdateExpression: `SET #s = :retired, updated_at = :now, #v = #v + :one REMOVE ${gsi1pk}, ${gsi1sk}`,
            ConditionExpression:
              '#s = :active AND #v = :v AND (attribute_not_exists(ref_count) OR ref_count <= :zero)',
            ExpressionAttributeNames: { '#s': 'status', '#v': 'version' },
            ExpressionAttributeValues: {
              ':retired': 'retired',
              ':active': 'active',
              ':now': now,
              ':one': 1,
              ':zero': 0,
              ':v': role.version,
            },
          },
        }),
      ],
      conditionFailed,
    );
    if (refused) return false;
    // The policies of a retired role can never apply again; remove them.
    for (const policy of await this.listPolicies(role.id)) await this.deletePolicy(role.id, policy.id);
    return true;
  }

  async putPolicy(roleId: string, policy: StoredPolicy): Promise<void> {
    // Granting the same rule twice is harmless: a failed condition is no error.
    await transactOr(
      this.db,
      [putNew(this.table, { ...keys.rolePolicy(roleId, policy.id), entity: entities.rolePolicy, ...policy })],
      conditionFailed,
    );
  }

  async recordedReferences(roleId: string): Promise<RecordedReference[]> {
    const references: RoleReference[] = [];
    await forEachPrefixPage(this.db, this.table, keys.role(roleId).PK, keys.roleRefPrefix, (page) => {
      for (const item of page) {
        const referrer = parseKey.roleReferrer(item[attributes.sk] as string);
        if (referrer) references.push(referenceOf(referrer));
      }
    });
    // Each referrer as stored now, in BatchGetItems: the domain keeps those that still name the role.
    const referrerKeys = references.map(referrerKey);
    const found = await batchGetItems(this.db, this.table, referrerKeys, {
      expression: `${attributes.pk}, ${attributes.sk}, role_id, allowed_roles`,
    });
    const byKey = new Map(found.map((i) => [`${i[attributes.pk]}\n${i[attributes.sk]}`, i]));
    return references.map((reference, i) => {
      const key = referrerKeys[i] as Key;
      const current = byKey.get(`${key.PK}\n${key.SK}`);
      return {
        reference,
        ...(current ? { current: { role_id: current.role_id, allowed_roles: current.allowed_roles } } : {}),
      };
    });
  }

  async listPolicies(roleId: string): Promise<StoredPolicy[]> {
    const items: StoredPolicy[] = [];
    await forEachPrefixPage(this.db, this.table, keys.role(roleId).PK, keys.rolePolicyPrefix, (page) => {
      items.push(...page.map(toPolicy));
    });
    return items;
  }

  async deletePolicy(roleId: string, policyId: string): Promise<boolean> {
    const absent = await transactOr(
      this.db,
      [
        unguarded({
          Delete: {
            TableName: this.table,
            Key: keys.rolePolicy(roleId, policyId),
            ConditionExpression: itemExists,
          },
        }),
      ],
      conditionFailed,
    );
    return !absent;
  }
}
