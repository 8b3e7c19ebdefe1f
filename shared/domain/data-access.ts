/**
 * Who may read what through the data plane (DESIGN §8a, issue #24, ADR 0120): one pure decision
 * over the caller, the layer and the workspace's protocol settings. No HTTP here: the edge maps
 * the outcome (`shared/auth/data-access.ts` throws the matching error).
 */
import { CredentialRequiredError, NotFoundError } from './errors.ts';
import type { Layer } from './layers.ts';
import type { Policy } from './roles.ts';

/** The protocols the data plane serves: OGC API Features and OGC API Tiles. */
export const dataProtocols = ['ogcapi', 'ogc-tiles'] as const;
export type DataProtocol = (typeof dataProtocols)[number];

/**
 * The protocol operations a request is authorised as: the names role policies use
 * (`protocolOperations` in roles.ts, all of them `read`); a test keeps the two in step.
 */
export const dataOperations = {
  ogcapi: ['GET', 'HEAD', 'GETITEM', 'GETFEATURES', 'LISTCOLLECTIONS'],
  'ogc-tiles': ['GET', 'HEAD', 'GETTILE', 'LISTCOLLECTIONS'],
} as const satisfies Record<DataProtocol, readonly string[]>;
export type DataOperation<P extends DataProtocol = DataProtocol> = (typeof dataOperations)[P][number];

/** A protocol and one of its operations (the pair a policy grants). */
export type ProtocolOperation = {
  [P in DataProtocol]: { protocol: P; operation: DataOperation<P> };
}[DataProtocol];

/**
 * The caller, as the authorizer let it through: no credential at all (a rejected credential never
 * gets here: the authorizer answers 401 first), or a principal with its role in this workspace
 * (after claim mappings) and that role's policies — the built-in set or the custom role's rules.
 */
export type DataCaller =
  | { kind: 'anonymous' }
  | {
      kind: 'principal';
      /** The global super_admin: reads every served layer; `allowed_roles` does not narrow it. */
      superAdmin: boolean;
      /** Undefined when the principal has no role in this workspace (another workspace's admin). */
      role?: { id: string; policies: readonly Policy[] };
    };

/** The layer fields access depends on; undefined when no layer has the requested public id. */
export type DataLayer = Pick<Layer, 'public_id' | 'enabled' | 'public' | 'allowed_roles'>;

/** The protocol settings fields access depends on (both settings documents have them). */
export interface ProtocolSwitches {
  enabled: boolean;
  public: boolean;
}

/** Why a caller does not see something: logged, never answered (every hidden answer is the same 404). */
export type HiddenWhy = 'not_found' | 'draft' | 'no_grant' | 'not_allowed_role';

/** The outcome of one access decision. */
export type DataAccessDecision =
  | { outcome: 'allow' }
  /** Answer as if it did not exist (404). */
  | { outcome: 'hidden'; why: HiddenWhy }
  /** No credential and nothing public here: 401 with a challenge. */
  | { outcome: 'unauthenticated' }
  /** The protocol is disabled in the workspace's settings: nothing is served, to anyone (404). */
  | { outcome: 'not_served' };

const allow = { outcome: 'allow' } as const;
const hidden = (why: HiddenWhy) => ({ outcome: 'hidden', why }) as const;

/** Does any of the policies grant this protocol operation in this workspace? */
export function policiesGrant(
  policies: readonly Policy[],
  workspaceId: string,
  { protocol, operation }: ProtocolOperation,
): boolean {
  return policies.some(
    (p) =>
      p.service === protocol &&
      p.action === 'read' &&
      (p.workspace === '*' || p.workspace === workspaceId) &&
      (p.operation === '*' || p.operation === operation),
  );
}

// Built-in workspace roles by strength (a Map: a custom role named `constructor` ranks nothing).
const builtInRank = new Map<string, number>([
  ['viewer', 1],
  ['editor', 2],
  ['admin', 3],
]);

/**
 * Does a layer's non-empty `allowed_roles` admit the role? Custom roles by exact id; a built-in
 * role also when a weaker built-in role is listed (`viewer` admits editor and admin), because the
 * built-in policy sets are nested (ADR 0120).
 */
export function allowedRolesAdmit(allowedRoles: readonly string[], roleId: string): boolean {
  if (allowedRoles.includes(roleId)) return true;
  const rank = builtInRank.get(roleId);
  return (
    rank !== undefined && allowedRoles.some((r) => (builtInRank.get(r) ?? Number.POSITIVE_INFINITY) <= rank)
  );
}

/**
 * May the caller read one collection (a layer, by its public id) through one protocol operation?
 * `public: true` on an enabled layer opens it to everyone while the protocol is enabled; anything
 * else needs a principal whose role grants the operation, narrowed by `allowed_roles`. A layer the
 * caller may not read is hidden (404) — to an anonymous caller every such collection, existing or
 * not, answers 401, so a 401 never tells which private ids exist.
 */
export function decideDataAccess(
  input: ProtocolOperation & {
    caller: DataCaller;
    workspaceId: string;
    layer: DataLayer | undefined;
    settings: ProtocolSwitches;
  },
): DataAccessDecision {
  const { caller, layer } = input;
  if (!input.settings.enabled) return { outcome: 'not_served' };
  if (layer?.enabled && layer.public) return allow;
  if (caller.kind === 'anonymous') return { outcome: 'unauthenticated' };
  if (!layer) return hidden('not_found');
  if (!layer.enabled) return hidden('draft');
  if (caller.superAdmin) return allow;
  if (!caller.role || !policiesGrant(caller.role.policies, input.workspaceId, input))
    return hidden('no_grant');
  if (layer.allowed_roles.length > 0 && !allowedRolesAdmit(layer.allowed_roles, caller.role.id)) {
    return hidden('not_allowed_role');
  }
  return allow;
}

/**
 * May the caller read the workspace-level documents of a protocol (landing page, conformance, API
 * definition, tile matrix sets, the collection list)? The settings' `public` flag opens exactly
 * these to everyone; otherwise a principal whose role grants the operation (or super_admin).
 */
export function decideServiceAccess(
  input: ProtocolOperation & { caller: DataCaller; workspaceId: string; settings: ProtocolSwitches },
): DataAccessDecision {
  const { caller } = input;
  if (!input.settings.enabled) return { outcome: 'not_served' };
  if (caller.kind === 'principal') {
    if (caller.superAdmin) return allow;
    if (caller.role && policiesGrant(caller.role.policies, input.workspaceId, input)) return allow;
  }
  if (input.settings.public) return allow;
  return caller.kind === 'anonymous' ? { outcome: 'unauthenticated' } : hidden('no_grant');
}

const preference: Record<DataAccessDecision['outcome'], number> = {
  allow: 3,
  unauthenticated: 2,
  hidden: 1,
  not_served: 0,
};

/**
 * The answer for a document both protocols share (the landing page, `/conformance`, `/api`,
 * `/collections`): the most permissive of the per-protocol decisions.
 */
export function mostPermissive(decisions: readonly DataAccessDecision[]): DataAccessDecision {
  let best: DataAccessDecision = { outcome: 'not_served' };
  for (const d of decisions) if (preference[d.outcome] > preference[best.outcome]) best = d;
  return best;
}

/** One listed collection and the protocols it is readable through. */
export interface ReadableCollection<L extends DataLayer> {
  layer: L;
  protocols: DataProtocol[];
}

/**
 * `/collections` for this caller: the layers it may read (in the given order), each with the
 * protocols it may read them through; or, when it may not list at all, the refusal to answer.
 */
export function readableCollections<L extends DataLayer>(input: {
  caller: DataCaller;
  workspaceId: string;
  layers: readonly L[];
  settings: Readonly<Record<DataProtocol, ProtocolSwitches>>;
}):
  | { outcome: 'allow'; collections: ReadableCollection<L>[] }
  | Exclude<DataAccessDecision, { outcome: 'allow' }> {
  const listing = (protocol: DataProtocol) =>
    ({ protocol, operation: 'LISTCOLLECTIONS' }) as const satisfies ProtocolOperation;
  const base = { caller: input.caller, workspaceId: input.workspaceId };
  const gates = dataProtocols.map((protocol) => ({
    protocol,
    decision: decideServiceAccess({ ...base, ...listing(protocol), settings: input.settings[protocol] }),
  }));
  const overall = mostPermissive(gates.map((g) => g.decision));
  if (overall.outcome !== 'allow') return overall;
  const open = gates.filter((g) => g.decision.outcome === 'allow').map((g) => g.protocol);
  const collections: ReadableCollection<L>[] = [];
  for (const layer of input.layers) {
    const protocols = open.filter(
      (protocol) =>
        decideDataAccess({ ...base, ...listing(protocol), layer, settings: input.settings[protocol] })
          .outcome === 'allow',
    );
    if (protocols.length > 0) collections.push({ layer, protocols });
  }
  return { outcome: 'allow', collections };
}

const protocolTitles: Record<DataProtocol, string> = {
  ogcapi: 'OGC API Features',
  'ogc-tiles': 'OGC API Tiles',
};

/**
 * The 404 of a refused decision. Every hidden collection gets the answer a missing one gets (the
 * edge uses the same error for an unknown id), so the reason never tells a draft, a missing grant
 * or `allowed_roles` from absence.
 */
export function dataNotFound(protocol: DataProtocol, collectionId?: string): NotFoundError {
  return collectionId === undefined
    ? new NotFoundError('not_served', `${protocolTitles[protocol]} is not served at this address.`)
    : new NotFoundError('collection_not_found', `Collection '${collectionId}' does not exist.`);
}

/**
 * Returns when the decision allows; otherwise throws: CredentialRequiredError (401 with
 * `WWW-Authenticate`) or NotFoundError (404) — for a collection when `collectionId` is given, else
 * for the protocol's documents.
 */
export function requireDataAccess(
  decision: DataAccessDecision,
  protocol: DataProtocol,
  collectionId?: string,
): void {
  switch (decision.outcome) {
    case 'allow':
      return;
    case 'unauthenticated':
      throw new CredentialRequiredError();
    case 'not_served':
      throw dataNotFound(protocol);
    case 'hidden':
      throw dataNotFound(protocol, collectionId);
  }
}
