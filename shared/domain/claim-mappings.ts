import { createHash, randomUUID } from 'node:crypto';
import { own } from './dictionary.ts';
import { InvalidInputError, NotFoundError } from './errors.ts';
import type { Page, PageQuery } from './page.ts';
import { isSystemRole, type RoleRepository } from './roles.ts';
import { checkVersion, IMMUTABLE_VERSION } from './workspaces.ts';

/** `*` is the scope of global mappings. */
export const GLOBAL_SCOPE = '*';

/** A mapping from a token claim to a role, in one workspace or globally. */
export interface ClaimMapping {
  id: string;
  /** A workspace id, or `*` for a global mapping. */
  workspace_id: string;
  claim_name: string;
  claim_value: string;
  role_id: string;
  priority: number;
  /** True when `role_id` is a custom role (its reference count is kept). */
  custom_role: boolean;
  /** `bootstrap`: made by the deployment's `bootstrapAdmins` (ADR 0089), which removes it when unlisted. */
  created_by?: 'bootstrap';
  created_at: string;
}

/** What role resolution needs of a mapping (a scope's summary carries only this; ADR 0103). */
export type RoleRule = Pick<ClaimMapping, 'claim_name' | 'claim_value' | 'role_id' | 'priority'>;

/** Port: claim mapping persistence. */
export interface ClaimMappingRepository {
  /** Stores the mapping, its uniqueness marker and (custom roles) the role's reference, atomically. */
  create(mapping: ClaimMapping): Promise<void>;
  find(scope: string, id: string): Promise<ClaimMapping | undefined>;
  list(scope: string, limit: number, cursor?: string): Promise<Page<ClaimMapping>>;
  /**
   * Every mapping of a scope, for role resolution when its summary can't serve (at most
   * MAX_MAPPINGS_PER_SCOPE: a create past it is refused).
   */
  all(scope: string): Promise<ClaimMapping[]>;
  delete(mapping: ClaimMapping): Promise<void>;
  /**
   * Writes the scope's mapping summary when it has none (a deployment whose mappings are older
   * than summaries, or a scope without mappings yet), so token callers read it with their targets.
   */
  summarize(scope: string): Promise<void>;
  /** Mappings of any scope that match one of these (claim name, value) pairs. */
  findByClaims(pairs: ReadonlyArray<readonly [string, string]>): Promise<ClaimMapping[]>;
}

/** Digest of a (claim name, value) pair, the lookup key of mappings by claim. */
export function claimDigest(name: string, value: string): string {
  return createHash('sha256').update(`${name}\u0000${value}`).digest('hex');
}

/** The (name or dotted path, value) pairs a token offers to mappings, bounded. */
export function claimPairs(claims: Record<string, unknown>, limit = 50): [string, string][] {
  const pairs: [string, string][] = [];
  const add = (name: string, value: unknown) => {
    const values = Array.isArray(value) ? value.slice(0, 50) : [value];
    for (const v of values) {
      if (
        pairs.length < limit &&
        (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      ) {
        pairs.push([name, String(v)]);
      }
    }
  };
  for (const [name, value] of Object.entries(claims)) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [sub, inner] of Object.entries(value as Record<string, unknown>))
        add(`${name}.${sub}`, inner);
    } else {
      add(name, value);
    }
  }
  return pairs;
}

/** Digest of the (claim_name, claim_value, role_id) triple that must be unique per scope. */
export function mappingTriple(m: { claim_name: string; claim_value: string; role_id: string }): string {
  return createHash('sha256').update(`${m.claim_name}\u0000${m.claim_value}\u0000${m.role_id}`).digest('hex');
}

/** What a use case on one mapping is asked: the scope (a workspace's id or the global one) and the mapping. */
export interface ClaimMappingCommand {
  scope: string;
  mappingId: string;
  ifMatch?: string;
}

/** Creates a mapping (spec 4.9). super_admin can only be granted by a global mapping. */
export async function createClaimMapping(
  { mappings: repo, roles }: { mappings: ClaimMappingRepository; roles: Pick<RoleRepository, 'find'> },
  {
    scope,
    body: input,
    now = new Date(),
  }: {
    scope: string;
    body: {
      claim_name: string;
      claim_value: string;
      role_id: string;
      priority?: number;
      created_by?: 'bootstrap';
    };
    now?: Date;
  },
): Promise<ClaimMapping> {
  const system = isSystemRole(input.role_id);
  if (input.role_id === 'super_admin' && scope !== GLOBAL_SCOPE) {
    throw new InvalidInputError('invalid_role', 'super_admin can only be granted by a global claim mapping.');
  }
  if (!system) {
    const role = await roles.find(input.role_id);
    if (role?.status !== 'active') {
      throw new InvalidInputError(
        'unknown_role',
        `role_id '${input.role_id}' is not a role (see GET /roles).`,
      );
    }
  }
  const mapping: ClaimMapping = {
    id: randomUUID(),
    workspace_id: scope,
    claim_name: input.claim_name,
    claim_value: input.claim_value,
    role_id: input.role_id,
    priority: input.priority ?? 0,
    custom_role: !system,
    ...(input.created_by ? { created_by: input.created_by } : {}),
    created_at: now.toISOString(),
  };
  await repo.create(mapping);
  return mapping;
}

/** Reads a mapping of the scope; one of another scope (a workspace's or the global one) is not found. */
export async function getClaimMapping(
  { mappings: repo }: { mappings: ClaimMappingRepository },
  { scope, mappingId: id }: Omit<ClaimMappingCommand, 'ifMatch'>,
): Promise<ClaimMapping> {
  // Ids are stored lower case; UUIDs compare case-insensitively, as API key ids do.
  const mapping = await repo.find(scope, id.toLowerCase());
  if (!mapping)
    throw new NotFoundError('claim_mapping_not_found', `Claim mapping '${id}' does not exist here.`);
  return mapping;
}

/** A page of the scope's mappings (listClaimMappings, listGlobalClaimMappings). */
export function listClaimMappings(
  { mappings }: { mappings: ClaimMappingRepository },
  { scope, limit, cursor }: PageQuery & { scope: string },
): Promise<Page<ClaimMapping>> {
  return mappings.list(scope, limit, cursor);
}

/**
 * Deletes a mapping of the scope; one of another scope is not found (spec 4.10). A mapping never
 * changes: its ETag is `"1"` for its whole life, and If-Match is checked against that (ADR 0087).
 */
export async function deleteClaimMapping(
  { mappings: repo }: { mappings: ClaimMappingRepository },
  { scope, mappingId: id, ifMatch }: ClaimMappingCommand,
): Promise<void> {
  const mapping = await repo.find(scope, id);
  if (!mapping)
    throw new NotFoundError('claim_mapping_not_found', `Claim mapping '${id}' does not exist here.`);
  checkVersion({ version: IMMUTABLE_VERSION }, ifMatch);
  await repo.delete(mapping);
}

/**
 * The values of a claim: literal name first, then a dotted path (`realm_access.roles`). Only the
 * token's own members are walked: `constructor.name` or `__proto__.toString` find nothing.
 */
export function claimValues(claims: Record<string, unknown>, name: string): string[] {
  let value: unknown = own(claims, name);
  if (value === undefined && name.includes('.')) {
    value = name.split('.').reduce<unknown>((node, part) => {
      return node && typeof node === 'object' && !Array.isArray(node)
        ? own(node as Record<string, unknown>, part)
        : undefined;
    }, claims);
  }
  const scalars = Array.isArray(value) ? value : [value];
  return scalars
    .filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
    .map((v) => String(v));
}

// A Map: a custom role id such as `constructor` must rank 0, not NaN (ADR 0075).
const strength = new Map<string, number>([
  ['super_admin', 4],
  ['admin', 3],
  ['editor', 2],
  ['viewer', 1],
]);

/**
 * The role the claims earn among a scope's mappings: highest priority first, then the stronger
 * built-in role, then the role id; undefined when nothing matches.
 */
export function resolveRole(
  mappings: readonly RoleRule[],
  claims: Record<string, unknown>,
): string | undefined {
  const matching = mappings.filter((m) => claimValues(claims, m.claim_name).includes(m.claim_value));
  matching.sort(
    (a, b) =>
      b.priority - a.priority ||
      (strength.get(b.role_id) ?? 0) - (strength.get(a.role_id) ?? 0) ||
      a.role_id.localeCompare(b.role_id),
  );
  return matching[0]?.role_id;
}

/** The API view of a mapping (`version` is constant: a mapping never changes). */
export function presentClaimMapping(m: ClaimMapping) {
  const { custom_role: _custom, created_by: _by, ...rest } = m;
  return { ...rest, version: IMMUTABLE_VERSION };
}
