import { createHash } from 'node:crypto';
import { own } from './dictionary.ts';
import {
  AlreadyExistsError,
  DependencyConflictError,
  InvalidInputError,
  NotFoundError,
  RuleViolationError,
  StateConflictError,
} from './errors.ts';
import type { Page, PageQuery } from './page.ts';
import { currentOperationId } from './renamed-operations.ts';
import { checkVersion } from './workspaces.ts';

/** The built-in roles, in listing order. */
export const systemRoleIds = ['super_admin', 'admin', 'editor', 'viewer'] as const;
export type SystemRoleId = (typeof systemRoleIds)[number];

/** True for the four built-in roles. */
export function isSystemRole(id: string): id is SystemRoleId {
  return (systemRoleIds as readonly string[]).includes(id);
}

/** A custom role as stored. */
export interface Role {
  id: string;
  name: string;
  description?: string;
  status: 'active' | 'retired';
  /** How many claim mappings (and other assignments) use the role; deletion needs 0. */
  ref_count: number;
  version: number;
  created_at: string;
  updated_at: string;
}

/** Services a policy can name. */
export const policyServices = ['management', 'wms', 'wfs', 'wcs', 'wmts', 'ogcapi', 'ogc-tiles'] as const;
export type PolicyService = (typeof policyServices)[number];
export const policyActions = ['read', 'write', 'delete', 'manage'] as const;
export type PolicyAction = (typeof policyActions)[number];

/** One allow rule: `{workspace id | "*", service, operation | "*", action}`. */
export interface Policy {
  workspace: string;
  service: PolicyService;
  operation: string;
  action: PolicyAction;
}

/** A stored policy with its id (a digest of the rule, so granting twice is harmless). */
export interface StoredPolicy extends Policy {
  id: string;
  created_at: string;
}

/** The action each OGC protocol operation needs (upper-case names). */
export const protocolOperations: Readonly<
  Record<Exclude<PolicyService, 'management'>, Record<string, PolicyAction>>
> = {
  wms: {
    GETCAPABILITIES: 'read',
    GETMAP: 'read',
    GETFEATUREINFO: 'read',
    GETLEGENDGRAPHIC: 'read',
    DESCRIBELAYER: 'read',
  },
  wfs: {
    GETCAPABILITIES: 'read',
    DESCRIBEFEATURETYPE: 'read',
    GETFEATURE: 'read',
    GETPROPERTYVALUE: 'read',
    LISTSTOREDQUERIES: 'read',
    DESCRIBESTOREDQUERIES: 'read',
    TRANSACTION: 'write',
    LOCKFEATURE: 'write',
    GETFEATUREWITHLOCK: 'write',
    CREATESTOREDQUERY: 'manage',
    DROPSTOREDQUERY: 'manage',
  },
  wcs: { GETCAPABILITIES: 'read', DESCRIBECOVERAGE: 'read', GETCOVERAGE: 'read' },
  wmts: { GETCAPABILITIES: 'read', GETTILE: 'read', GETFEATUREINFO: 'read' },
  ogcapi: { GET: 'read', HEAD: 'read', GETITEM: 'read', GETFEATURES: 'read', LISTCOLLECTIONS: 'read' },
  'ogc-tiles': { GET: 'read', HEAD: 'read', GETTILE: 'read', LISTCOLLECTIONS: 'read' },
};

/** Port: role and policy persistence. */
export interface RoleRepository {
  create(role: Role): Promise<void>;
  /** Any stored role, retired ones included. */
  find(id: string): Promise<Role | undefined>;
  list(limit: number, cursor?: string): Promise<Page<Role>>;
  /**
   * Retires the role (and removes its policies) conditioned on it being active at `role.version`
   * with nothing referring to it: false when that condition failed (nothing written).
   */
  retire(role: Role, now: string): Promise<boolean>;
  putPolicy(roleId: string, policy: StoredPolicy): Promise<void>;
  listPolicies(roleId: string): Promise<StoredPolicy[]>;
  deletePolicy(roleId: string, policyId: string): Promise<boolean>;
  /** The role's reference records (ADR 0135), each with its referrer as stored now (absent: gone). */
  recordedReferences(roleId: string): Promise<RecordedReference[]>;
}

/** What refers to a custom role (ADR 0135): a claim mapping (global without `workspace_id`) or a layer. */
export type RoleReference =
  | { kind: 'claim_mapping'; workspace_id?: string; id: string }
  | { kind: 'layer'; workspace_id: string; service_id: string; id: string };

/** A reference record with what its referrer holds now: a mapping's `role_id`, a layer's `allowed_roles`. */
export interface RecordedReference {
  reference: RoleReference;
  current?: { role_id?: unknown; allowed_roles?: unknown };
}

/** What deleting a custom role meets (getRoleDeletionPlan, ADR 0135). */
export interface RoleDeletionPlan {
  role: Role;
  /** The referrers recorded and still naming the role. */
  references: RoleReference[];
  /** What `ref_count` counts beyond them: references made before the records existed (never negative). */
  unrecorded: number;
  /** Removed with the role; they don't block its deletion. */
  policies: StoredPolicy[];
}

/** Does a recorded referrer still name the role (a mapping of it, a layer allowing it)? */
export function stillRefers(recorded: RecordedReference, roleId: string): boolean {
  const current = recorded.current;
  if (!current) return false;
  if (recorded.reference.kind === 'claim_mapping') return current.role_id === roleId;
  return Array.isArray(current.allowed_roles) && current.allowed_roles.includes(roleId);
}

/** Ports of the role use cases. */
export interface RoleDeps {
  roles: RoleRepository;
}

/** What a use case on one role is asked: the role the path names. */
export interface RoleCommand {
  roleId: string;
}

/**
 * The deletion plan of a custom role: the claim mappings and layers whose references make up its
 * `ref_count` (deleteRole is refused while it is above 0), read from its reference records, each
 * checked against its referrer as stored now; what the count holds beyond them is `unrecorded`
 * (references made before the records existed), so the plan never claims less than deleteRole
 * will meet. Its policies go with it. API keys can't carry a custom role and sessions hold roles
 * resolved per request, so neither refers to it.
 */
export async function roleDeletionPlan(
  { roles: repo }: RoleDeps,
  { roleId: id }: RoleCommand,
): Promise<RoleDeletionPlan> {
  if (isSystemRole(id))
    throw new InvalidInputError('system_role', `'${id}' is a built-in role and can't be deleted.`);
  const role = await requireCustomRole(repo, id);
  const [recorded, policies] = await Promise.all([repo.recordedReferences(id), repo.listPolicies(id)]);
  const references = recorded.filter((r) => stillRefers(r, id)).map((r) => r.reference);
  return {
    role,
    references,
    unrecorded: Math.max(0, (role.ref_count ?? 0) - references.length),
    policies,
  };
}

/** The management operations a policy may name, with the action each uses. */
export type ManagementCatalog = ReadonlyMap<string, PolicyAction | 'global'>;

/** Creates a custom role; the id must never have been used (built-ins, existing or retired). */
export async function createRole(
  { roles: repo }: RoleDeps,
  {
    body: input,
    now = new Date(),
  }: { body: { id: string; name?: string; description?: string }; now?: Date },
): Promise<Role> {
  if (isSystemRole(input.id)) {
    throw new AlreadyExistsError('role_id_unavailable', `'${input.id}' is a built-in role.`);
  }
  const ts = now.toISOString();
  const role: Role = {
    id: input.id,
    name: input.name ?? input.id,
    ...(input.description ? { description: input.description } : {}),
    status: 'active',
    ref_count: 0,
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  await repo.create(role);
  return role;
}

/** Reads an active custom role. */
export async function requireCustomRole(repo: RoleRepository, id: string): Promise<Role> {
  const role = await repo.find(id);
  if (role?.status !== 'active') throw new NotFoundError('role_not_found', `Role '${id}' does not exist.`);
  return role;
}

/** A page of the custom roles, retired ones included (listRoles). */
export function listRoles({ roles }: RoleDeps, { limit, cursor }: PageQuery): Promise<Page<Role>> {
  return roles.list(limit, cursor);
}

/** Reads an active custom role (getRole of a role that isn't built in): 404 otherwise. */
export function getCustomRole({ roles }: RoleDeps, { roleId }: RoleCommand): Promise<Role> {
  return requireCustomRole(roles, roleId);
}

/** A custom role's policies: 404 for a built-in, missing or deleted role. */
export async function listRolePolicies(
  { roles }: RoleDeps,
  { roleId }: RoleCommand,
): Promise<StoredPolicy[]> {
  await requireCustomRole(roles, roleId);
  return roles.listPolicies(roleId);
}

/** Retires a custom role forever; built-ins can't be deleted. */
export async function deleteRole(
  { roles: repo }: RoleDeps,
  { roleId: id, ifMatch, now = new Date() }: RoleCommand & { ifMatch?: string; now?: Date },
): Promise<void> {
  if (isSystemRole(id))
    throw new InvalidInputError('system_role', `'${id}' is a built-in role and can't be deleted.`);
  const role = await requireCustomRole(repo, id);
  // If-Match names the role's version; retiring is conditioned on it, so a race is a 412 too.
  checkVersion(role, ifMatch);
  if (!(await repo.retire(role, now.toISOString())))
    throw roleRetireRefusal(role, await repo.find(role.id), ifMatch);
}

/**
 * Why retiring `role` was refused, from the role as read afterwards: gone or retired (404), changed
 * since it was read (412 with If-Match, else 409 `concurrent_modification`), or still assigned (409).
 */
export function roleRetireRefusal(role: Role, current: Role | undefined, ifMatch?: string): Error {
  if (current?.status !== 'active')
    return new NotFoundError('role_not_found', `Role '${role.id}' does not exist.`);
  if (current.version !== role.version) {
    if (ifMatch !== undefined) checkVersion(current, ifMatch);
    return new StateConflictError(
      'concurrent_modification',
      `Role '${role.id}' was changed by another request; retry.`,
    );
  }
  // The count is of claim mappings and layers' allowed_roles both (ADR 0135).
  return new DependencyConflictError(
    'role_in_use',
    `Role '${role.id}' is still referenced ${current.ref_count} time(s) by claim mappings and layers' allowed_roles; GET /roles/${role.id}/deletion-plan lists them. Remove them first.`,
    { dependencies: { references: current.ref_count, claim_mappings: current.ref_count } },
  );
}

/** The built-in roles a workspace assigns (super_admin is global only), in listing order. */
export const workspaceRoleIds = ['admin', 'editor', 'viewer'] as const;

/** What can carry a role in a workspace: API keys take the built-ins only (DESIGN §6), mappings any role. */
export type RoleAssignment = 'api_keys' | 'claim_mappings';

/** A page of the roles assignable in a workspace (listWorkspaceRoles, ADR 0131). */
export interface WorkspaceRolesPage {
  /** The built-ins: on the first page only. */
  builtIns: readonly (typeof workspaceRoleIds)[number][];
  /** A page of the active custom roles (every custom role applies in any workspace its policies name). */
  custom: Role[];
  nextCursor?: string;
}

/**
 * The roles assignable in a workspace: admin, editor and viewer lead the first page, then a page of
 * the active custom roles. Custom roles are global (their policies say where they grant), so every
 * workspace lists the same ones: one Query of the role listing, as listRoles reads it.
 */
export async function listWorkspaceRoles(
  { roles: repo }: RoleDeps,
  { limit, cursor }: PageQuery,
): Promise<WorkspaceRolesPage> {
  const page = await repo.list(limit, cursor);
  return {
    builtIns: cursor === undefined ? workspaceRoleIds : [],
    custom: page.items.filter((r) => r.status === 'active'),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** Validates a policy against the services, operations and actions that exist (422 otherwise). */
export function normalisePolicy(
  input: { workspace: string; service: PolicyService; operation?: string; action: PolicyAction },
  management: ManagementCatalog,
): Omit<Policy, 'workspace'> {
  const given = input.operation?.trim() || '*';
  const invalid = (detail: string) => new RuleViolationError('invalid_policy', detail);
  if (input.service === 'management') {
    // An id this API had before it took the peer's is stored as its replacement (ADR 0132).
    const operation = currentOperationId(given);
    const actions = new Set([...management.values()].filter((a) => a !== 'global'));
    if (operation === '*') {
      if (!actions.has(input.action)) {
        throw invalid(
          `No management operation uses the action '${input.action}' (use read, write or manage).`,
        );
      }
      return { service: 'management', operation, action: input.action };
    }
    const needed = management.get(operation);
    if (!needed) throw invalid(`'${operation}' is not an operation of this API.`);
    if (needed === 'global') throw invalid(`'${operation}' is reserved to super_admin and can't be granted.`);
    if (needed !== input.action) {
      throw invalid(`'${operation}' uses the action '${needed}', not '${input.action}'.`);
    }
    return { service: 'management', operation, action: input.action };
  }
  const operation = given;
  const table = protocolOperations[input.service];
  if (operation === '*') {
    if (!Object.values(table).includes(input.action)) {
      throw invalid(`No ${input.service} operation uses the action '${input.action}'.`);
    }
    return { service: input.service, operation, action: input.action };
  }
  const upper = operation.toUpperCase();
  const needed = own(table, upper);
  if (!needed) throw invalid(`'${operation}' is not a ${input.service} operation.`);
  if (needed !== input.action)
    throw invalid(`${input.service} ${upper} uses the action '${needed}', not '${input.action}'.`);
  return { service: input.service, operation: upper, action: input.action };
}

/** The stable id of a policy rule. */
export function policyId(p: Policy): string {
  return createHash('sha256')
    .update(`${p.workspace}\u0000${p.service}\u0000${p.operation}\u0000${p.action}`)
    .digest('hex')
    .slice(0, 20);
}
