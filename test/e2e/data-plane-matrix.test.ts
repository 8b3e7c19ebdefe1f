/**
 * The data plane's authorization matrix, re-run systematically (issue #22's proof; ADR 0120): every
 * entry of the data route table × every kind of caller × every kind of layer × the protocol
 * settings, each cell's status and body derived from ADR 0120's matrix by an oracle written here
 * (not by calling `decideDataAccess`), and every refusal checked to tell nothing a missing
 * collection wouldn't. A new data route fails the classification test until it is classified.
 */
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { type DataRoute, dataRoutes } from '#api/data-routes.ts';
import { localIssuer } from '#infra/local/files.ts';
import { type ApiResponse, asSuperAdmin, call, uniqueName } from '../support/client.ts';
import {
  changeLayer,
  hostOrigin,
  publishLayer,
  servedWorkspace,
  setSettings,
} from '../support/data-plane.ts';
import { bearer, createKey, expectError, token, withKey } from '../support/fixtures.ts';

type Protocol = 'ogcapi' | 'ogc-tiles';
type Scope = 'service' | 'collection';

/**
 * ADR 0120's mapping of requests to protocol operations, written out per operation: the test's
 * own classification, checked against the route table's `access` (a route missing here fails).
 */
const classification: Record<string, { scope: Scope; protocols: Protocol[]; operation: string }> = {
  getDataLanding: { scope: 'service', protocols: ['ogcapi', 'ogc-tiles'], operation: 'GET' },
  getDataConformance: { scope: 'service', protocols: ['ogcapi', 'ogc-tiles'], operation: 'GET' },
  getDataApi: { scope: 'service', protocols: ['ogcapi', 'ogc-tiles'], operation: 'GET' },
  listDataCollections: {
    scope: 'service',
    protocols: ['ogcapi', 'ogc-tiles'],
    operation: 'LISTCOLLECTIONS',
  },
  getDataCollection: { scope: 'collection', protocols: ['ogcapi'], operation: 'GET' },
  getDataQueryables: { scope: 'collection', protocols: ['ogcapi'], operation: 'GET' },
  getDataItems: { scope: 'collection', protocols: ['ogcapi'], operation: 'GETFEATURES' },
  getDataItem: { scope: 'collection', protocols: ['ogcapi'], operation: 'GETITEM' },
  listDataTileMatrixSets: { scope: 'service', protocols: ['ogc-tiles'], operation: 'GET' },
  getDataTileMatrixSet: { scope: 'service', protocols: ['ogc-tiles'], operation: 'GET' },
  listDataTilesets: { scope: 'service', protocols: ['ogc-tiles'], operation: 'GET' },
  getDataTileset: { scope: 'service', protocols: ['ogc-tiles'], operation: 'GET' },
  getDataTile: { scope: 'service', protocols: ['ogc-tiles'], operation: 'GETTILE' },
  listCollectionTilesets: { scope: 'collection', protocols: ['ogc-tiles'], operation: 'GET' },
  getCollectionTileset: { scope: 'collection', protocols: ['ogc-tiles'], operation: 'GET' },
  getCollectionTile: { scope: 'collection', protocols: ['ogc-tiles'], operation: 'GETTILE' },
  listDataStyles: { scope: 'service', protocols: ['ogc-tiles'], operation: 'GET' },
  getDataStyle: { scope: 'service', protocols: ['ogc-tiles'], operation: 'GET' },
};

function classOf(route: DataRoute) {
  const c = classification[route.operationId];
  if (!c) throw new Error(`data route ${route.operationId} is not classified in the matrix test`);
  return c;
}

// ---------------------------------------------------------------------------------------------
// The callers: who they are to the oracle, and the headers they send.

const builtInRank: Record<string, number> = { viewer: 1, editor: 2, admin: 3 };

interface Caller {
  name: string;
  headers: Record<string, string>;
  /** anonymous: no credential; rejected: a credential the authorizer refuses. */
  kind: 'anonymous' | 'rejected' | 'super' | 'principal';
  /** The role id in the matrix workspace (allowed_roles are matched against it). */
  role?: string;
  /** Does the role grant this protocol operation in the matrix workspace? */
  grants: (protocol: Protocol, operation: string) => boolean;
}

const nothing = () => false;
const everyOgc = () => true;

// ---------------------------------------------------------------------------------------------
// The layers: each kind of ADR 0120's columns, with markers a refusal must never carry.

interface LayerKind {
  key: string;
  /** The collection id requested (a missing one has no layer). */
  id: string;
  exists: boolean;
  enabled: boolean;
  public: boolean;
  allowed: string[];
  /** Text of this layer's rows (its source table's `name` values). */
  rowMarker: string;
  title: string;
}

interface Fixture {
  ws: { id: string; name: string };
  callers: Caller[];
  layers: LayerKind[];
  style: string;
  analyst: string;
}

let fx: Fixture;

async function customRole(policies: Record<string, unknown>[]) {
  const id = uniqueName('mx-role');
  const created = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id } });
  expect(created.status, created.text).toBe(201);
  for (const body of policies) {
    const res = await call('POST', `/roles/${id}/policies`, { headers: asSuperAdmin(), body });
    expect(res.status, res.text).toBe(201);
  }
  return id;
}

beforeAll(async () => {
  const { ws, service } = await servedWorkspace();
  // A key that expires while the fixture is built (a past expires_at is refused at creation).
  const expiresAt = Date.now() + 3_000;
  const expiring = await createKey(ws.id, 'viewer', { expires_at: new Date(expiresAt).toISOString() });
  const other = await servedWorkspace();
  const tag = Math.random().toString(36).slice(2, 7);
  const analyst = await customRole([{ workspace: '*', service: 'ogcapi', operation: '*', action: 'read' }]);
  const tilesOnly = await customRole([
    { workspace: ws.id, service: 'ogc-tiles', operation: '*', action: 'read' },
  ]);
  const itemsOnly = await customRole([
    { workspace: ws.id, service: 'ogcapi', operation: 'GETFEATURES', action: 'read' },
  ]);
  const retired = await customRole([{ workspace: '*', service: 'ogcapi', operation: '*', action: 'read' }]);
  const retire = await call('DELETE', `/roles/${retired}`, { headers: asSuperAdmin() });
  expect(retire.status, retire.text).toBe(204);
  // A token's group claim mapped to the analyst role by a claim mapping of this workspace.
  const mapped = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
    headers: asSuperAdmin(),
    body: { claim_name: 'groups', claim_value: 'mx-analysts', role_id: analyst },
  });
  expect(mapped.status, mapped.text).toBe(201);
  const noGrant = await customRole([
    { workspace: other.ws.id, service: 'ogcapi', operation: '*', action: 'read' },
    { workspace: other.ws.id, service: 'ogc-tiles', operation: '*', action: 'read' },
    { workspace: ws.id, service: 'management', operation: '*', action: 'read' },
    { workspace: ws.id, service: 'wfs', operation: '*', action: 'read' },
  ]);

  // Kinds of layer: `places` rows are "Place n", `roads` rows "Road n"; both have rows in tile 4/5/7.
  const kinds: (Omit<LayerKind, 'id' | 'rowMarker' | 'title' | 'exists'> & { table?: string })[] = [
    { key: 'public', table: 'places', enabled: true, public: true, allowed: [] },
    { key: 'private', table: 'roads', enabled: true, public: false, allowed: [] },
    { key: 'analyst', table: 'roads', enabled: true, public: false, allowed: [analyst] },
    { key: 'viewers', table: 'roads', enabled: true, public: false, allowed: ['viewer'] },
    { key: 'editors', table: 'roads', enabled: true, public: false, allowed: ['editor'] },
    { key: 'pubanalyst', table: 'places', enabled: true, public: true, allowed: [analyst] },
    { key: 'disabled', table: 'roads', enabled: false, public: false, allowed: [] },
    { key: 'draft', table: 'roads', enabled: false, public: false, allowed: [] },
    { key: 'draftpublic', table: 'places', enabled: false, public: true, allowed: [] },
    { key: 'missing', enabled: false, public: false, allowed: [] },
  ];
  const layers: LayerKind[] = [];
  for (const k of kinds) {
    const id = `mx${tag}${k.key}`;
    const title = `Title ${k.key} ${tag}`;
    const rowMarker = k.table === 'places' ? 'Place ' : 'Road ';
    if (k.table) {
      // "disabled": published (validated) then switched off; "draft": stored disabled from the start.
      const created = await publishLayer(ws.id, service.id, {
        source_layer: `public.${k.table}`,
        public_id: id,
        title,
        public: k.public,
        allowed_roles: k.allowed,
        enabled: k.key !== 'draft' && k.key !== 'draftpublic',
      });
      if (k.key === 'disabled') await changeLayer(ws.id, service.id, created, { enabled: false });
    }
    layers.push({ ...k, id, title, rowMarker, exists: Boolean(k.table) });
  }

  // A Mapbox style with one style layer per collection (and one without a source layer).
  const style = `mx-style-${tag}`;
  const styleBody = {
    version: 8,
    sources: { all: { type: 'vector', url: 'https://elsewhere.example/tiles.json' } },
    layers: [
      { id: 'background', type: 'background' },
      ...layers.map((l, i) => ({ id: `s${i}`, type: 'line', source: 'all', 'source-layer': l.id })),
    ],
  };
  const created = await call('POST', `/workspaces/${ws.id}/styles`, {
    headers: asSuperAdmin(),
    body: { name: style, format: 'mapbox', body: JSON.stringify(styleBody) },
  });
  expect(created.status, created.text).toBe(201);

  const revoked = await createKey(ws.id, 'viewer');
  const gone = await call('DELETE', `/workspaces/${ws.id}/apikeys/${revoked.id}`, {
    headers: asSuperAdmin(),
  });
  expect(gone.status, gone.text).toBe(204);
  const key = async (role: 'viewer' | 'editor' | 'admin', workspace = ws.id) =>
    withKey((await createKey(workspace, role)).key);
  /** A browser session's cookie, signed in with a new key of `role` (and signed out again if `end`). */
  const session = async (role: 'editor', end = false) => {
    const login = await call('POST', '/auth/login', { body: { token: (await createKey(ws.id, role)).key } });
    expect(login.status, login.text).toBe(201);
    const jar = Object.fromEntries(login.cookies.map((c) => c.split(';')[0]?.split('=') as [string, string]));
    const cookie = { Cookie: `__Host-session=${jar['__Host-session']}; csrf_token=${jar.csrf_token}` };
    if (end) {
      const out = await call('POST', '/auth/logout', {
        headers: { ...cookie, 'X-CSRF-Token': jar.csrf_token as string },
      });
      expect(out.status, out.text).toBe(204);
    }
    return cookie;
  };
  const jwt = async (role: string, ttl = 600) =>
    bearer(await token({ workspaces: { [ws.id]: role } }, 'mx', ttl));
  const roles = async (r: Record<string, string>) => bearer(await token({ workspaces: r }, 'mx'));
  const issuer = await localIssuer(inject('host').dataDir);
  const builtIn = (role: string) => ({ kind: 'principal' as const, role, grants: everyOgc });
  const callers: Caller[] = [
    { name: 'anonymous', headers: {}, kind: 'anonymous', grants: nothing },
    {
      name: 'garbage key',
      headers: withKey('gp_garbage0000000000000000'),
      kind: 'rejected',
      grants: nothing,
    },
    { name: 'garbage bearer', headers: bearer('not.a.jwt'), kind: 'rejected', grants: nothing },
    { name: 'revoked key', headers: withKey(revoked.key), kind: 'rejected', grants: nothing },
    { name: 'expired token', headers: await jwt('viewer', -600), kind: 'rejected', grants: nothing },
    { name: 'viewer key', headers: await key('viewer'), ...builtIn('viewer') },
    { name: 'viewer token', headers: await jwt('viewer'), ...builtIn('viewer') },
    { name: 'editor key', headers: await key('editor'), ...builtIn('editor') },
    { name: 'editor session (cookie)', headers: await session('editor'), ...builtIn('editor') },
    { name: 'signed-out session', headers: await session('editor', true), kind: 'rejected', grants: nothing },
    { name: 'expired key', headers: withKey(expiring.key), kind: 'rejected', grants: nothing },
    { name: 'admin key', headers: await key('admin'), ...builtIn('admin') },
    {
      name: "another workspace's admin",
      headers: await key('admin', other.ws.id),
      kind: 'principal',
      grants: nothing,
    },
    // Roles by workspace name, for every workspace, and the workspace's own entry before `*`.
    {
      name: 'viewer token by workspace name',
      headers: await roles({ [ws.name]: 'viewer' }),
      ...builtIn('viewer'),
    },
    { name: "viewer token for '*'", headers: await roles({ '*': 'viewer' }), ...builtIn('viewer') },
    {
      name: "viewer here, admin for '*'",
      headers: await roles({ [ws.id]: 'viewer', '*': 'admin' }),
      ...builtIn('viewer'),
    },
    {
      name: "another workspace's admin (token)",
      headers: await roles({ [other.ws.id]: 'admin', [other.ws.name]: 'admin' }),
      kind: 'principal',
      grants: nothing,
    },
    {
      name: 'token mapped to analyst by a claim mapping',
      headers: bearer(await issuer.sign({ groups: ['mx-analysts'] }, 'mx-mapped', 600)),
      kind: 'principal',
      role: analyst,
      grants: (p) => p === 'ogcapi',
    },
    {
      name: 'custom role since retired',
      headers: await jwt(retired),
      kind: 'principal',
      role: retired,
      grants: nothing,
    },
    {
      name: 'custom role analyst (ogcapi *)',
      headers: await jwt(analyst),
      kind: 'principal',
      role: analyst,
      grants: (p) => p === 'ogcapi',
    },
    {
      name: 'custom role ogc-tiles only',
      headers: await jwt(tilesOnly),
      kind: 'principal',
      role: tilesOnly,
      grants: (p) => p === 'ogc-tiles',
    },
    {
      name: 'custom role ogcapi GETFEATURES only',
      headers: await jwt(itemsOnly),
      kind: 'principal',
      role: itemsOnly,
      grants: (p, op) => p === 'ogcapi' && op === 'GETFEATURES',
    },
    {
      name: 'custom role without the grant',
      headers: await jwt(noGrant),
      kind: 'principal',
      role: noGrant,
      grants: nothing,
    },
    // A workspace-scoped super_admin role (a token claim) grants nothing: only the global flag counts.
    {
      name: 'workspace-scoped super_admin claim',
      headers: await jwt('super_admin'),
      kind: 'principal',
      role: 'super_admin',
      grants: nothing,
    },
    { name: 'super_admin key', headers: asSuperAdmin(), kind: 'super', grants: everyOgc },
    {
      name: 'super_admin token',
      headers: bearer(await token({ superAdmin: true }, 'mx-root')),
      kind: 'super',
      grants: everyOgc,
    },
  ];
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 1_000)));
  fx = { ws, callers, layers, style, analyst };
}, 180_000);

// ---------------------------------------------------------------------------------------------
// The oracle: ADR 0120's matrix and service table, as the test reads them.

interface Switches {
  enabled: boolean;
  public: boolean;
}
type Settings = Record<Protocol, Switches>;

type Outcome = 'allow' | 'unauthenticated' | 'hidden' | 'not_served' | 'rejected';

function admits(allowed: readonly string[], role: string | undefined): boolean {
  if (role === undefined) return false;
  if (allowed.includes(role)) return true;
  const rank = builtInRank[role];
  return rank !== undefined && allowed.some((r) => (builtInRank[r] ?? Number.POSITIVE_INFINITY) <= rank);
}

/** One collection through one protocol operation (the matrix's rows and columns). */
function collectionOutcome(
  caller: Caller,
  layer: LayerKind,
  protocol: Protocol,
  operation: string,
  settings: Settings,
): Outcome {
  if (caller.kind === 'rejected') return 'rejected';
  if (!settings[protocol].enabled) return 'not_served';
  if (layer.exists && layer.enabled && layer.public) return 'allow';
  if (caller.kind === 'anonymous') return 'unauthenticated';
  if (!layer.exists || !layer.enabled) return 'hidden';
  if (caller.kind === 'super') return 'allow';
  if (!caller.grants(protocol, operation)) return 'hidden';
  if (layer.allowed.length > 0 && !admits(layer.allowed, caller.role)) return 'hidden';
  return 'allow';
}

const rank: Record<Outcome, number> = {
  allow: 3,
  unauthenticated: 2,
  hidden: 1,
  not_served: 0,
  rejected: -1,
};

/** A workspace-level document: the most permissive of its protocols' service decisions. */
function serviceOutcome(
  caller: Caller,
  protocols: Protocol[],
  operation: string,
  settings: Settings,
): Outcome {
  if (caller.kind === 'rejected') return 'rejected';
  let best: Outcome = 'not_served';
  for (const p of protocols) {
    let d: Outcome;
    if (!settings[p].enabled) d = 'not_served';
    else if (caller.kind === 'super' || caller.grants(p, operation) || settings[p].public) d = 'allow';
    else d = caller.kind === 'anonymous' ? 'unauthenticated' : 'hidden';
    if (rank[d] > rank[best]) best = d;
  }
  return best;
}

/** The gate open for a protocol of a workspace-level document (which protocols' layers it may show). */
function gateOpen(caller: Caller, protocol: Protocol, operation: string, settings: Settings) {
  return serviceOutcome(caller, [protocol], operation, settings) === 'allow';
}

/** The ids a workspace-level answer must list exactly (undefined: it lists none). */
function expectedListing(route: DataRoute, caller: Caller, settings: Settings): string[] | undefined {
  const enabled = fx.layers.filter((l) => l.exists && l.enabled);
  const readable = (p: Protocol, op: string) =>
    enabled.filter((l) => collectionOutcome(caller, l, p, op, settings) === 'allow').map((l) => l.id);
  switch (route.operationId) {
    case 'listDataCollections': {
      const open = (['ogcapi', 'ogc-tiles'] as const).filter((p) =>
        gateOpen(caller, p, 'LISTCOLLECTIONS', settings),
      );
      return [...new Set(open.flatMap((p) => readable(p, 'LISTCOLLECTIONS')))].sort();
    }
    case 'getDataTileset':
    case 'getDataTile':
    case 'getDataStyle':
      return readable('ogc-tiles', 'GETTILE').sort();
    default:
      return undefined;
  }
}

/** Every id the caller may learn of: readable through some protocol operation. */
function knowable(caller: Caller, settings: Settings): Set<string> {
  const ops: [Protocol, string][] = [
    ['ogcapi', 'GET'],
    ['ogcapi', 'GETFEATURES'],
    ['ogcapi', 'GETITEM'],
    ['ogcapi', 'LISTCOLLECTIONS'],
    ['ogc-tiles', 'GET'],
    ['ogc-tiles', 'GETTILE'],
    ['ogc-tiles', 'LISTCOLLECTIONS'],
  ];
  return new Set(
    fx.layers
      .filter((l) => ops.some(([p, op]) => collectionOutcome(caller, l, p, op, settings) === 'allow'))
      .map((l) => l.id),
  );
}

// ---------------------------------------------------------------------------------------------
// Requests.

const TILE = { tileMatrixSetId: 'WebMercatorQuad', tileMatrix: '4', tileRow: '5', tileCol: '7' };

function pathOf(route: DataRoute, collectionId?: string): string {
  const values: Record<string, string> = {
    workspace: fx.ws.id,
    collectionId: collectionId ?? '',
    featureId: '7',
    styleId: fx.style,
    ...TILE,
  };
  const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`no value for {${name}} of ${route.operationId}`);
    return encodeURIComponent(v);
  });
  return route.operationId === 'getDataItems' ? `${path}?limit=2` : path;
}

function get(path: string, headers: Record<string, string>): Promise<ApiResponse> {
  return call('GET', path, { baseUrl: hostOrigin(), headers });
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T);
      }
    }),
  );
  return out;
}

function mentions(text: string, id: string): boolean {
  return new RegExp(`(^|[^a-z0-9])${id}([^a-z0-9]|$)`).test(text);
}

/** The layer names of an MVT answer. */
function tileLayers(res: ApiResponse): string[] {
  return Object.keys(new VectorTile(new PbfReader(res.raw as Buffer)).layers).sort();
}

/** A refusal with its request id dropped and the requested collection id replaced: what it tells. */
function told(res: ApiResponse, collectionId: string | undefined): string {
  const { request_id: _r, ...rest } = (res.body ?? {}) as Record<string, unknown>;
  const text = JSON.stringify({
    status: res.status,
    www: res.headers['www-authenticate'] ?? null,
    body: rest,
  });
  return collectionId ? text.split(collectionId).join('<id>') : text;
}

/** Checks one answer against its cell; the mismatches, as lines. */
function checkCell(
  route: DataRoute,
  caller: Caller,
  layer: LayerKind | undefined,
  outcome: Outcome,
  res: ApiResponse,
  settings: Settings,
): string[] {
  const where = `${route.operationId} ${layer ? `[${layer.key}] ` : ''}as ${caller.name}`;
  const bad: string[] = [];
  const fail = (what: string) => bad.push(`${where}: ${what} (got ${res.status} ${res.text.slice(0, 160)})`);
  const text = res.raw ? res.raw.toString('latin1') : res.text;
  if (outcome === 'allow') {
    const listing = expectedListing(route, caller, settings);
    const isTile = route.operationId === 'getDataTile' || route.operationId === 'getCollectionTile';
    const expected = isTile && listing !== undefined && listing.length === 0 ? 204 : 200;
    if (res.status !== expected)
      return [`${where}: expected ${expected}, got ${res.status} ${res.text.slice(0, 160)}`];
    const cache = res.headers['cache-control'] ?? '';
    if (caller.kind === 'anonymous' ? !cache.startsWith('public') : cache !== 'private, no-cache')
      fail(`Cache-Control '${cache}' for a ${caller.kind} caller`);
    if (layer && !mentions(text, layer.id)) fail('the answer does not name its collection');
    if (layer && route.operationId === 'getCollectionTile' && tileLayers(res).join() !== layer.id)
      fail(`tile layers ${tileLayers(res).join()}`);
    const known = knowable(caller, settings);
    for (const l of fx.layers)
      if (!known.has(l.id) && (mentions(text, l.id) || text.includes(l.title)))
        fail(`names ${l.key}, which the caller may not read`);
    if (listing !== undefined) {
      let got: string[] | undefined;
      if (route.operationId === 'listDataCollections')
        got = (res.body.collections as { id: string }[]).map((c) => c.id);
      else if (route.operationId === 'getDataTileset')
        got = (res.body.layers as { id: string }[]).map((l) => l.id);
      else if (route.operationId === 'getDataTile') got = res.status === 204 ? [] : tileLayers(res);
      else if (route.operationId === 'getDataStyle')
        got = (res.body.layers as { 'source-layer'?: string }[]).flatMap((l) => l['source-layer'] ?? []);
      const ours = (got ?? []).filter((id) => fx.layers.some((l) => l.id === id)).sort();
      if (ours.join() !== listing.join()) fail(`lists [${ours.join()}], expected [${listing.join()}]`);
    }
    return bad;
  }
  const status = outcome === 'unauthenticated' || outcome === 'rejected' ? 401 : 404;
  if (res.status !== status)
    return [`${where}: expected ${status} (${outcome}), got ${res.status} ${res.text.slice(0, 160)}`];
  if (outcome === 'rejected') {
    // The authorizer's refusal: the gateway's standard error body (DESIGN §5), before any handler.
    if (res.body?.code !== 401 || res.body?.reason !== 'unauthenticated') fail('not the authorizer 401');
  } else {
    const code =
      outcome === 'unauthenticated'
        ? 'credential_required'
        : layer
          ? outcome === 'hidden'
            ? 'collection_not_found'
            : 'not_served'
          : 'not_served';
    const b = res.body ?? {};
    if (
      b.code !== code ||
      typeof b.description !== 'string' ||
      b.status !== status ||
      typeof b.request_id !== 'string'
    )
      fail(`not the OGC exception '${code}'`);
    if (outcome === 'unauthenticated' && !/X-API-Key/.test(res.headers['www-authenticate'] ?? ''))
      fail('a 401 without WWW-Authenticate');
  }
  if ((res.headers['cache-control'] ?? '').startsWith('public')) fail('a refusal a shared cache may keep');
  for (const h of ['etag', 'content-crs', 'geoplane-tile-features', 'geoplane-tile-truncated'])
    if (res.headers[h] !== undefined) fail(`a refusal with ${h}`);
  for (const l of fx.layers) {
    if (l.id !== layer?.id && mentions(text, l.id)) fail(`names ${l.key}`);
    if (text.includes(l.title)) fail(`carries the title of ${l.key}`);
  }
  if (/Road |Place |bbox|extent|coordinates/.test(text)) fail('carries rows or an extent');
  return bad;
}

// ---------------------------------------------------------------------------------------------

describe('the matrix covers every data route', () => {
  it('classifies every entry of the data route table as ADR 0120 maps it', () => {
    expect(dataRoutes.length).toBeGreaterThanOrEqual(18);
    for (const route of dataRoutes) {
      const c = classOf(route);
      expect(route.method, route.operationId).toBe('GET');
      expect([...route.access.protocols], route.operationId).toEqual(c.protocols);
      expect(route.access.operation, route.operationId).toBe(c.operation);
      expect(route.path.includes('{collectionId}'), route.operationId).toBe(c.scope === 'collection');
    }
    expect(Object.keys(classification).sort()).toEqual(dataRoutes.map((r) => r.operationId).sort());
  });
});

/**
 * The settings each pass runs under. A disabled protocol answers alike whatever the layer, so the
 * passes with one off run the layer kinds that tell the switches apart (public or not, a draft,
 * none): the others' cells are the first pass's.
 */
const FEW = ['public', 'private', 'pubanalyst', 'draftpublic', 'missing'];
const phases: { name: string; settings: Settings; kinds?: string[] }[] = [
  {
    name: 'Features and Tiles enabled, documents not public',
    settings: { ogcapi: { enabled: true, public: false }, 'ogc-tiles': { enabled: true, public: false } },
  },
  {
    name: 'Features and Tiles enabled, documents public',
    settings: { ogcapi: { enabled: true, public: true }, 'ogc-tiles': { enabled: true, public: true } },
  },
  {
    name: 'Features disabled (public), Tiles enabled',
    kinds: FEW,
    settings: { ogcapi: { enabled: false, public: true }, 'ogc-tiles': { enabled: true, public: false } },
  },
  {
    name: 'Features enabled, Tiles disabled (public)',
    kinds: FEW,
    settings: { ogcapi: { enabled: true, public: false }, 'ogc-tiles': { enabled: false, public: true } },
  },
  {
    name: 'both disabled',
    kinds: FEW,
    settings: { ogcapi: { enabled: false, public: false }, 'ogc-tiles': { enabled: false, public: false } },
  },
];

async function applySettings(settings: Settings) {
  await setSettings(fx.ws.id, 'ogcapi', { ...settings.ogcapi });
  await setSettings(fx.ws.id, 'ogc-tiles', { ...settings['ogc-tiles'] });
}

describe.each(phases)('every route × caller × layer: $name', ({ settings, kinds }) => {
  beforeAll(() => applySettings(settings));

  it.each(dataRoutes.map((r) => [r.operationId, r] as const))(
    '%s answers each cell as ADR 0120 says, and a refusal as a missing collection',
    async (_id, route) => {
      const c = classOf(route);
      const ofPass = fx.layers.filter((l) => !kinds || kinds.includes(l.key));
      const layers: (LayerKind | undefined)[] = c.scope === 'collection' ? ofPass : [undefined];
      const cells = fx.callers.flatMap((caller) => layers.map((layer) => ({ caller, layer })));
      // A workspace tile renders every readable collection; several at once outwait the PostGIS
      // pool's checkout timeout (a 503 under load, reported separately): those go one at a time.
      const parallel = route.operationId === 'getDataTile' ? 1 : 6;
      const answers = await pool(cells, parallel, ({ caller, layer }) =>
        get(pathOf(route, layer?.id), caller.headers),
      );
      const failures: string[] = [];
      const missing = fx.layers.find((l) => !l.exists) as LayerKind;
      const outcomes = new Set<Outcome>();
      cells.forEach(({ caller, layer }, i) => {
        const res = answers[i] as ApiResponse;
        const outcome = layer
          ? collectionOutcome(caller, layer, c.protocols[0] as Protocol, c.operation, settings)
          : serviceOutcome(caller, c.protocols, c.operation, settings);
        outcomes.add(outcome);
        failures.push(...checkCell(route, caller, layer, outcome, res, settings));
        if (layer && outcome !== 'allow') {
          // The same answer as for an id no layer has, to the same caller.
          const j = cells.findIndex((x) => x.caller === caller && x.layer === missing);
          const asMissing = told(answers[j] as ApiResponse, missing.id);
          if (told(res, layer.id) !== asMissing)
            failures.push(
              `${route.operationId} [${layer.key}] as ${caller.name}: answers unlike a missing collection: ${told(res, layer.id)} vs ${asMissing}`,
            );
        }
      });
      expect(failures).toEqual([]);
      // Every route's cells hold refusals, and allowed ones while one of its protocols is served.
      expect(outcomes.has('rejected')).toBe(true);
      expect(outcomes.has('allow')).toBe(c.protocols.some((p) => settings[p].enabled));
    },
    120_000,
  );
});

describe('revalidation and empty tiles never open a refused cell', () => {
  const base = phases[0]?.settings as Settings;
  beforeAll(() => applySettings(base));

  it.each(dataRoutes.map((r) => [r.operationId, r] as const))(
    '%s: an allowed caller revalidates to 304; the same If-None-Match from a refused caller is still refused',
    async (_id, route) => {
      const c = classOf(route);
      const layer = c.scope === 'collection' ? fx.layers.find((l) => l.key === 'private') : undefined;
      const path = pathOf(route, layer?.id);
      const super_ = fx.callers.find((x) => x.kind === 'super') as Caller;
      const first = await get(path, super_.headers);
      expect(first.status, first.text).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"/);
      // An items page carries its `timeStamp`, so only `*` revalidates it; every other answer is stable.
      for (const inm of route.operationId === 'getDataItems' ? ['*'] : [etag, '*']) {
        const again = await get(path, { ...super_.headers, 'If-None-Match': inm });
        expect(again.status, `If-None-Match ${inm}`).toBe(304);
        expect(again.raw?.length).toBe(0);
      }
      for (const caller of fx.callers.filter((x) => x.kind !== 'super')) {
        const outcome = layer
          ? collectionOutcome(caller, layer, c.protocols[0] as Protocol, c.operation, base)
          : serviceOutcome(caller, c.protocols, c.operation, base);
        for (const inm of [etag, '*']) {
          const res = await get(path, { ...caller.headers, 'If-None-Match': inm });
          if (outcome === 'allow') expect([200, 304], `${caller.name}`).toContain(res.status);
          else
            expect(res.status, `${caller.name} with If-None-Match ${inm}: ${res.text}`).toBe(
              outcome === 'hidden' || outcome === 'not_served' ? 404 : 401,
            );
        }
      }
    },
    60_000,
  );

  it('an empty tile is 204 to a reader, and refused (not 204) to a caller who may not read the collection', async () => {
    const priv = fx.layers.find((l) => l.key === 'private') as LayerKind;
    const missing = fx.layers.find((l) => !l.exists) as LayerKind;
    const empty = (id: string) => `/workspaces/${fx.ws.id}/ogc/collections/${id}/tiles/WebMercatorQuad/4/0/0`;
    const viewer = fx.callers.find((x) => x.name === 'viewer key') as Caller;
    const outsider = fx.callers.find((x) => x.name === "another workspace's admin") as Caller;
    expect((await get(empty(priv.id), viewer.headers)).status).toBe(204);
    expect(
      (await get(`/workspaces/${fx.ws.id}/ogc/tiles/WebMercatorQuad/4/0/0`, viewer.headers)).status,
    ).toBe(204);
    const anon = await get(empty(priv.id), {});
    expect(anon.status).toBe(401);
    expect(told(anon, priv.id)).toBe(told(await get(empty(missing.id), {}), missing.id));
    const other = await get(empty(priv.id), outsider.headers);
    expect(other.status).toBe(404);
    expect(told(other, priv.id)).toBe(told(await get(empty(missing.id), outsider.headers), missing.id));
  });

  it('a garbage credential is refused by the authorizer with the standard body, also on a public layer', async () => {
    const pub = fx.layers.find((l) => l.key === 'public') as LayerKind;
    for (const caller of fx.callers.filter((x) => x.kind === 'rejected')) {
      const res = await get(
        `/workspaces/${fx.ws.id}/ogc/collections/${pub.id}/items?limit=1`,
        caller.headers,
      );
      expectError(res, 401, 'unauthenticated');
      expect(res.text).not.toMatch(/Place /);
    }
  });
});
