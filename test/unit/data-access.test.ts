/**
 * The data plane's access matrix (issue #24, ADR 0120): every caller against every kind of layer,
 * protocol setting and protocol operation. Expectations are written out cell by cell — never
 * computed — so each row can fail on its own.
 */
import { describe, expect, it } from 'vitest';
import { dataCaller } from '#auth/data-access.ts';
import { builtInPolicies, type PolicyLoader } from '#auth/permissions.ts';
import type { Principal } from '#auth/principal.ts';
import {
  allowedRolesAdmit,
  type DataAccessDecision,
  type DataCaller,
  type DataLayer,
  type DataOperation,
  type DataProtocol,
  dataOperations,
  dataProtocols,
  decideDataAccess,
  decideServiceAccess,
  mostPermissive,
  type ProtocolOperation,
  type ProtocolSwitches,
  readableCollections,
  requireDataAccess,
} from '#domain/data-access.ts';
import { dictionary } from '#domain/dictionary.ts';
import { CredentialRequiredError, NotFoundError } from '#domain/errors.ts';
import { type Policy, protocolOperations } from '#domain/roles.ts';
import { defaultSettings } from '#domain/settings.ts';
import { toErrorResponse } from '#http/errors.ts';

const WS = { id: '7b0c5c1e-0000-4000-8000-000000000001', name: 'alpha' };
const OTHER = { id: '7b0c5c1e-0000-4000-8000-000000000002', name: 'beta' };

const read = (workspace: string, service: Policy['service'], operation = '*'): Policy => ({
  workspace,
  service,
  operation,
  action: 'read',
});

/** Custom roles and their stored policies. */
const customPolicies: Record<string, Policy[]> = {
  // Both protocols, every operation, this workspace only.
  'reader-star': [read(WS.id, 'ogcapi'), read(WS.id, 'ogc-tiles')],
  // One operation of one protocol.
  'features-only': [read(WS.id, 'ogcapi', 'GETFEATURES')],
  // Every workspace (`*`), tiles only: the other protocol's grant when asked about Features.
  'global-tiles': [read('*', 'ogc-tiles')],
  // A grant for another workspace only.
  'beta-reader': [read(OTHER.id, 'ogcapi'), read(OTHER.id, 'ogc-tiles')],
  // Grants of other services: WFS reads and management reads are not OGC API grants.
  'wfs-reader': [read(WS.id, 'wfs'), read(WS.id, 'wms')],
  'console-reader': [read(WS.id, 'management')],
  'no-grants': [],
  // The role the restricted layers name.
  analyst: [read('*', 'ogcapi'), read('*', 'ogc-tiles')],
};
const load: PolicyLoader = async (roleId) => customPolicies[roleId] ?? [];

function principal(roles: [string, string][], superAdmin = false): Principal {
  return { id: 'apikey:k', subject: 'k', authMethod: 'apikey', superAdmin, roles: dictionary(roles) };
}

/** Every caller of the matrix; `undefined` is a request without any credential. */
const principals: Record<string, Principal | undefined> = {
  anonymous: undefined,
  viewer: principal([[WS.id, 'viewer']]),
  'viewer (by workspace name)': principal([[WS.name, 'viewer']]),
  'viewer (global * role)': principal([['*', 'viewer']]),
  editor: principal([[WS.id, 'editor']]),
  admin: principal([[WS.id, 'admin']]),
  super_admin: principal([], true),
  'super_admin as a workspace role': principal([[WS.id, 'super_admin']]),
  "other workspace's admin": principal([[OTHER.id, 'admin']]),
  'custom reader-star': principal([[WS.id, 'reader-star']]),
  'custom features-only': principal([[WS.id, 'features-only']]),
  'custom global-tiles': principal([[WS.id, 'global-tiles']]),
  'custom beta-reader': principal([[WS.id, 'beta-reader']]),
  'custom wfs-reader': principal([[WS.id, 'wfs-reader']]),
  'custom console-reader': principal([[WS.id, 'console-reader']]),
  'custom no-grants': principal([[WS.id, 'no-grants']]),
  'custom analyst': principal([[WS.id, 'analyst']]),
};
type CallerName = keyof typeof principals;

const callerOf = (name: CallerName): Promise<DataCaller> => dataCaller(principals[name], WS, load);

const layer = (over: Partial<DataLayer>): DataLayer => ({
  public_id: 'roads',
  enabled: true,
  public: false,
  allowed_roles: [],
  ...over,
});

/** Every kind of layer (the columns of the matrix); `missing` is an id no layer has. */
const layers = {
  private: layer({}),
  public: layer({ public: true }),
  draft: layer({ enabled: false }),
  'public draft': layer({ enabled: false, public: true }),
  'allowed_roles [analyst]': layer({ allowed_roles: ['analyst'] }),
  'allowed_roles [viewer]': layer({ allowed_roles: ['viewer'] }),
  'allowed_roles [editor]': layer({ allowed_roles: ['editor'] }),
  'public, allowed_roles [analyst]': layer({ public: true, allowed_roles: ['analyst'] }),
  missing: undefined,
} satisfies Record<string, DataLayer | undefined>;
type LayerName = keyof typeof layers;
const columns = Object.keys(layers) as LayerName[];

const settings = {
  enabled: { enabled: true, public: false },
  'enabled+public': { enabled: true, public: true },
  disabled: { enabled: false, public: false },
  'disabled+public': { enabled: false, public: true },
} satisfies Record<string, ProtocolSwitches>;

/** Cell shorthand: ok = allow, 401, 404:<why>, off = protocol not served. */
type Cell = 'ok' | '401' | 'off' | `404:${'not_found' | 'draft' | 'no_grant' | 'not_allowed_role'}`;

function decision(cell: Cell): DataAccessDecision {
  if (cell === 'ok') return { outcome: 'allow' };
  if (cell === '401') return { outcome: 'unauthenticated' };
  if (cell === 'off') return { outcome: 'not_served' };
  return { outcome: 'hidden', why: cell.slice(4) as 'not_found' };
}

const N = '404:no_grant' as const;
const D = '404:draft' as const;
const M = '404:not_found' as const;
const R = '404:not_allowed_role' as const;

/**
 * THE matrix (ADR 0120), settings enabled (public flag off), OGC API Features GetFeatures.
 * Columns in the order of `layers`:
 *   private, public, draft, public draft, [analyst], [viewer], [editor], public+[analyst], missing
 */
const matrix: Record<CallerName, Cell[]> = {
  anonymous: ['401', 'ok', '401', '401', '401', '401', '401', 'ok', '401'],
  viewer: ['ok', 'ok', D, D, R, 'ok', R, 'ok', M],
  'viewer (by workspace name)': ['ok', 'ok', D, D, R, 'ok', R, 'ok', M],
  'viewer (global * role)': ['ok', 'ok', D, D, R, 'ok', R, 'ok', M],
  editor: ['ok', 'ok', D, D, R, 'ok', 'ok', 'ok', M],
  admin: ['ok', 'ok', D, D, R, 'ok', 'ok', 'ok', M],
  super_admin: ['ok', 'ok', D, D, 'ok', 'ok', 'ok', 'ok', M],
  'super_admin as a workspace role': [N, 'ok', D, D, N, N, N, 'ok', M],
  "other workspace's admin": [N, 'ok', D, D, N, N, N, 'ok', M],
  'custom reader-star': ['ok', 'ok', D, D, R, R, R, 'ok', M],
  'custom features-only': ['ok', 'ok', D, D, R, R, R, 'ok', M],
  'custom global-tiles': [N, 'ok', D, D, N, N, N, 'ok', M],
  'custom beta-reader': [N, 'ok', D, D, N, N, N, 'ok', M],
  'custom wfs-reader': [N, 'ok', D, D, N, N, N, 'ok', M],
  'custom console-reader': [N, 'ok', D, D, N, N, N, 'ok', M],
  'custom no-grants': [N, 'ok', D, D, N, N, N, 'ok', M],
  'custom analyst': ['ok', 'ok', D, D, 'ok', R, R, 'ok', M],
};

const features = { protocol: 'ogcapi', operation: 'GETFEATURES' } as const satisfies ProtocolOperation;

async function decide(
  caller: CallerName,
  layerName: LayerName,
  settingsName: keyof typeof settings,
  op: ProtocolOperation = features,
): Promise<DataAccessDecision> {
  return decideDataAccess({
    caller: await callerOf(caller),
    workspaceId: WS.id,
    layer: layers[layerName],
    settings: settings[settingsName],
    ...op,
  });
}

describe('decideDataAccess: callers × layers (settings enabled, GetFeatures)', () => {
  const cells = Object.entries(matrix).flatMap(([caller, row]) =>
    row.map((cell, i) => ({ caller: caller as CallerName, layer: columns[i] as LayerName, cell })),
  );

  it('has one cell per caller and layer kind', () => {
    expect(Object.keys(matrix).sort()).toEqual(Object.keys(principals).sort());
    for (const row of Object.values(matrix)) expect(row).toHaveLength(columns.length);
  });

  it.each(cells)('$caller reading a $layer layer → $cell', async ({ caller, layer: l, cell }) => {
    expect(await decide(caller, l, 'enabled')).toEqual(decision(cell));
  });
});

describe("decideDataAccess: the settings' public flag opens no collection", () => {
  // Same cells as the matrix: settings.public governs the service documents only.
  it.each([
    ['anonymous', 'private', '401'],
    ['anonymous', 'public', 'ok'],
    ['anonymous', 'missing', '401'],
    ['anonymous', 'allowed_roles [analyst]', '401'],
    ['custom no-grants', 'private', N],
    ['custom no-grants', 'public', 'ok'],
    ["other workspace's admin", 'private', N],
    ['viewer', 'private', 'ok'],
    ['viewer', 'allowed_roles [analyst]', R],
    ['super_admin', 'draft', D],
  ] as [CallerName, LayerName, Cell][])('%s reading a %s layer → %s', async (caller, l, cell) => {
    expect(await decide(caller, l, 'enabled+public')).toEqual(decision(cell));
  });
});

describe('decideDataAccess: a disabled protocol serves nothing, to anyone', () => {
  it.each(
    (['anonymous', 'viewer', 'admin', 'super_admin', 'custom analyst'] as CallerName[]).flatMap((caller) =>
      (['public', 'private', 'public, allowed_roles [analyst]', 'missing'] as LayerName[]).flatMap((l) =>
        (['disabled', 'disabled+public'] as const).map((s) => ({ caller, layer: l, settings: s })),
      ),
    ),
  )(
    '$caller reading a $layer layer with settings $settings → not served',
    async ({ caller, layer: l, settings: s }) => {
      expect(await decide(caller, l, s)).toEqual({ outcome: 'not_served' });
    },
  );

  it('serves a public layer through Features but not Tiles in a fresh workspace (Tiles default off)', async () => {
    const input = { caller: await callerOf('anonymous'), workspaceId: WS.id, layer: layers.public };
    expect(decideDataAccess({ ...input, ...features, settings: defaultSettings.ogcapi })).toEqual({
      outcome: 'allow',
    });
    expect(
      decideDataAccess({
        ...input,
        protocol: 'ogc-tiles',
        operation: 'GETTILE',
        settings: defaultSettings['ogc-tiles'],
      }),
    ).toEqual({ outcome: 'not_served' });
  });
});

describe('decideDataAccess: what a policy grants (private layer, settings enabled)', () => {
  const ops = (protocol: DataProtocol): ProtocolOperation[] =>
    (dataOperations[protocol] as readonly DataOperation[]).map(
      (operation) => ({ protocol, operation }) as ProtocolOperation,
    );
  const every = [...ops('ogcapi'), ...ops('ogc-tiles')];

  it.each(
    (
      ['viewer', 'editor', 'admin', 'super_admin', 'custom reader-star', 'custom analyst'] as CallerName[]
    ).flatMap((caller) => every.map((op) => ({ caller, ...op }))),
  )('$caller may $protocol $operation', async ({ caller, protocol, operation }) => {
    expect(await decide(caller, 'private', 'enabled', { protocol, operation } as ProtocolOperation)).toEqual({
      outcome: 'allow',
    });
  });

  it.each([
    // Operation-specific grant: exactly that operation of that protocol.
    ['custom features-only', 'ogcapi', 'GETFEATURES', 'ok'],
    ['custom features-only', 'ogcapi', 'GETITEM', N],
    ['custom features-only', 'ogcapi', 'GET', N],
    ['custom features-only', 'ogcapi', 'HEAD', N],
    ['custom features-only', 'ogcapi', 'LISTCOLLECTIONS', N],
    ['custom features-only', 'ogc-tiles', 'GETTILE', N],
    // `*` workspace and `*` operation, one protocol: the other protocol's grant is not enough.
    ['custom global-tiles', 'ogc-tiles', 'GETTILE', 'ok'],
    ['custom global-tiles', 'ogc-tiles', 'GET', 'ok'],
    ['custom global-tiles', 'ogc-tiles', 'LISTCOLLECTIONS', 'ok'],
    ['custom global-tiles', 'ogcapi', 'GETFEATURES', N],
    ['custom global-tiles', 'ogcapi', 'GET', N],
    // A workspace-specific grant for another workspace.
    ['custom beta-reader', 'ogcapi', 'GETFEATURES', N],
    ['custom beta-reader', 'ogc-tiles', 'GETTILE', N],
    // Grants of other services.
    ['custom wfs-reader', 'ogcapi', 'GETFEATURES', N],
    ['custom console-reader', 'ogc-tiles', 'GETTILE', N],
    ['custom no-grants', 'ogcapi', 'GETITEM', N],
    ["other workspace's admin", 'ogc-tiles', 'GETTILE', N],
    ['anonymous', 'ogc-tiles', 'GETTILE', '401'],
  ] as [CallerName, DataProtocol, DataOperation, Cell][])(
    '%s asking %s %s → %s',
    async (caller, protocol, operation, cell) => {
      expect(
        await decide(caller, 'private', 'enabled', { protocol, operation } as ProtocolOperation),
      ).toEqual(decision(cell));
    },
  );

  it('reads the policy of the workspace asked about: beta-reader reads beta', async () => {
    const caller = await dataCaller(principal([[OTHER.id, 'beta-reader']]), OTHER, load);
    expect(
      decideDataAccess({
        caller,
        workspaceId: OTHER.id,
        layer: layers.private,
        settings: settings.enabled,
        ...features,
      }),
    ).toEqual({ outcome: 'allow' });
  });

  it('ignores a non-read action even on a matching service (defence in depth)', () => {
    const caller: DataCaller = {
      kind: 'principal',
      superAdmin: false,
      role: { id: 'odd', policies: [{ workspace: '*', service: 'ogcapi', operation: '*', action: 'write' }] },
    };
    expect(
      decideDataAccess({
        caller,
        workspaceId: WS.id,
        layer: layers.private,
        settings: settings.enabled,
        ...features,
      }),
    ).toEqual({ outcome: 'hidden', why: 'no_grant' });
  });

  it('names exactly the operations role policies validate (roles.ts protocolOperations)', () => {
    for (const protocol of dataProtocols) {
      expect([...dataOperations[protocol]].sort()).toEqual(Object.keys(protocolOperations[protocol]).sort());
      for (const op of dataOperations[protocol]) expect(protocolOperations[protocol][op]).toBe('read');
    }
  });

  it('relies on the built-in sets granting both protocols to viewer, editor and admin', () => {
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      for (const service of dataProtocols) {
        expect(builtInPolicies[role]).toContainEqual({
          workspace: '*',
          service,
          operation: '*',
          action: 'read',
        });
      }
    }
  });
});

describe('a rejected (garbage) credential', () => {
  // The authorizer answers 401 to a garbage, revoked or expired credential before any handler runs
  // (DESIGN §4, spec §5 rule 1): the decision never sees it. A request without a credential is the
  // only credential-less caller it sees, and that one is refused with 401 wherever nothing is public.
  it.each(columns.filter((c) => c !== 'public' && c !== 'public, allowed_roles [analyst]'))(
    'an anonymous caller gets 401 for a %s layer, never 404',
    async (l) => {
      expect(await decide('anonymous', l, 'enabled')).toEqual({ outcome: 'unauthenticated' });
    },
  );
});

describe('allowedRolesAdmit', () => {
  it.each([
    [['analyst'], 'analyst', true],
    [['analyst'], 'viewer', false],
    [['analyst'], 'admin', false],
    [['viewer'], 'viewer', true],
    [['viewer'], 'editor', true],
    [['viewer'], 'admin', true],
    [['editor'], 'viewer', false],
    [['editor'], 'editor', true],
    [['editor'], 'admin', true],
    [['admin'], 'editor', false],
    [['viewer'], 'analyst', false],
    [['viewer'], 'super_admin', false],
    [['super_admin'], 'super_admin', true],
    [['analyst', 'editor'], 'admin', true],
    [['constructor'], 'viewer', false],
    [['viewer'], 'constructor', false],
    [['toString'], 'toString', true],
  ] as [string[], string, boolean][])('%j admits %s: %s', (allowed, role, expected) => {
    expect(allowedRolesAdmit(allowed, role)).toBe(expected);
  });
});

describe('decideServiceAccess: landing page, conformance, API, tile matrix sets, the list', () => {
  const listing = { protocol: 'ogcapi', operation: 'LISTCOLLECTIONS' } as const satisfies ProtocolOperation;
  it.each([
    ['anonymous', 'enabled', '401'],
    ['anonymous', 'enabled+public', 'ok'],
    ['anonymous', 'disabled', 'off'],
    ['anonymous', 'disabled+public', 'off'],
    ['viewer', 'enabled', 'ok'],
    ['viewer', 'disabled', 'off'],
    ['super_admin', 'enabled', 'ok'],
    ['super_admin', 'disabled', 'off'],
    ["other workspace's admin", 'enabled', N],
    ["other workspace's admin", 'enabled+public', 'ok'],
    ['custom features-only', 'enabled', N],
    ['custom features-only', 'enabled+public', 'ok'],
    ['custom reader-star', 'enabled', 'ok'],
    ['custom global-tiles', 'enabled', N],
    ['custom no-grants', 'enabled', N],
    ['super_admin as a workspace role', 'enabled', N],
  ] as [CallerName, keyof typeof settings, Cell][])('%s with settings %s → %s', async (caller, s, cell) => {
    expect(
      decideServiceAccess({
        caller: await callerOf(caller),
        workspaceId: WS.id,
        settings: settings[s],
        ...listing,
      }),
    ).toEqual(decision(cell));
  });

  it('checks the operation asked: features-only may not GET the landing page', async () => {
    const caller = await callerOf('custom features-only');
    const base = { caller, workspaceId: WS.id, settings: settings.enabled, protocol: 'ogcapi' } as const;
    expect(decideServiceAccess({ ...base, operation: 'GET' })).toEqual({
      outcome: 'hidden',
      why: 'no_grant',
    });
    expect(decideServiceAccess({ ...base, operation: 'GETFEATURES' })).toEqual({ outcome: 'allow' });
  });
});

describe('mostPermissive (documents both protocols share)', () => {
  const ok = { outcome: 'allow' } as const;
  const u = { outcome: 'unauthenticated' } as const;
  const h = { outcome: 'hidden', why: 'no_grant' } as const;
  const off = { outcome: 'not_served' } as const;
  it.each([
    [[ok, off], ok],
    [[off, ok], ok],
    [[u, off], u],
    [[h, u], u],
    [[off, h], h],
    [[off, off], off],
    [[], off],
  ] as [DataAccessDecision[], DataAccessDecision][])('%j → %j', (decisions, expected) => {
    expect(mostPermissive(decisions)).toEqual(expected);
  });
});

describe('readableCollections (/collections)', () => {
  const named = (public_id: string, over: Partial<DataLayer>) => layer({ ...over, public_id });
  const catalog = [
    named('open', { public: true }),
    named('closed', {}),
    named('draft', { enabled: false, public: true }),
    named('analysts', { allowed_roles: ['analyst'] }),
    named('editors', { allowed_roles: ['editor'] }),
  ];
  const both = (ogcapi: ProtocolSwitches, tiles: ProtocolSwitches) => ({ ogcapi, 'ogc-tiles': tiles });
  const on = settings.enabled;
  const onPublic = settings['enabled+public'];
  const off = settings.disabled;

  async function list(caller: CallerName, s: ReturnType<typeof both>) {
    const out = readableCollections({
      caller: await callerOf(caller),
      workspaceId: WS.id,
      layers: catalog,
      settings: s,
    });
    return out.outcome === 'allow'
      ? Object.fromEntries(out.collections.map((c) => [c.layer.public_id, c.protocols.join('+')]))
      : out;
  }

  it.each([
    ['anonymous', both(on, on), { outcome: 'unauthenticated' }],
    ['anonymous', both(onPublic, on), { open: 'ogcapi' }],
    ['anonymous', both(onPublic, onPublic), { open: 'ogcapi+ogc-tiles' }],
    ['anonymous', both(off, off), { outcome: 'not_served' }],
    ['viewer', both(on, on), { open: 'ogcapi+ogc-tiles', closed: 'ogcapi+ogc-tiles' }],
    ['viewer', both(on, off), { open: 'ogcapi', closed: 'ogcapi' }],
    [
      'editor',
      both(on, on),
      { open: 'ogcapi+ogc-tiles', closed: 'ogcapi+ogc-tiles', editors: 'ogcapi+ogc-tiles' },
    ],
    [
      'super_admin',
      both(on, on),
      {
        open: 'ogcapi+ogc-tiles',
        closed: 'ogcapi+ogc-tiles',
        analysts: 'ogcapi+ogc-tiles',
        editors: 'ogcapi+ogc-tiles',
      },
    ],
    ['super_admin', both(off, off), { outcome: 'not_served' }],
    [
      'custom analyst',
      both(on, on),
      { open: 'ogcapi+ogc-tiles', closed: 'ogcapi+ogc-tiles', analysts: 'ogcapi+ogc-tiles' },
    ],
    ['custom global-tiles', both(on, on), { open: 'ogc-tiles', closed: 'ogc-tiles' }],
    ['custom global-tiles', both(onPublic, on), { open: 'ogcapi+ogc-tiles', closed: 'ogc-tiles' }],
    // GetFeatures without LISTCOLLECTIONS: may read items, may not list.
    ['custom features-only', both(on, on), { outcome: 'hidden', why: 'no_grant' }],
    ['custom features-only', both(onPublic, on), { open: 'ogcapi' }],
    ["other workspace's admin", both(on, on), { outcome: 'hidden', why: 'no_grant' }],
    ["other workspace's admin", both(onPublic, onPublic), { open: 'ogcapi+ogc-tiles' }],
    ['custom no-grants', both(on, onPublic), { open: 'ogc-tiles' }],
  ] as [CallerName, ReturnType<typeof both>, unknown][])(
    '%s with settings %j lists %j',
    async (caller, s, expected) => {
      expect(await list(caller, s)).toEqual(expected);
    },
  );

  it('keeps the catalog order and the layer objects given', async () => {
    const out = readableCollections({
      caller: await callerOf('admin'),
      workspaceId: WS.id,
      layers: catalog,
      settings: both(on, on),
    });
    expect(out.outcome === 'allow' && out.collections.map((c) => c.layer)).toEqual([
      catalog[0],
      catalog[1],
      catalog[4],
    ]);
  });
});

describe('dataCaller', () => {
  it.each([
    ['anonymous', { kind: 'anonymous' }],
    ['super_admin', { kind: 'principal', superAdmin: true }],
    ["other workspace's admin", { kind: 'principal', superAdmin: false }],
    [
      'viewer (by workspace name)',
      { kind: 'principal', superAdmin: false, role: { id: 'viewer', policies: builtInPolicies.viewer } },
    ],
    [
      'viewer (global * role)',
      { kind: 'principal', superAdmin: false, role: { id: 'viewer', policies: builtInPolicies.viewer } },
    ],
    [
      'super_admin as a workspace role',
      { kind: 'principal', superAdmin: false, role: { id: 'super_admin', policies: [] } },
    ],
    [
      'custom features-only',
      {
        kind: 'principal',
        superAdmin: false,
        role: { id: 'features-only', policies: customPolicies['features-only'] },
      },
    ],
  ] as [CallerName, DataCaller][])('%s → %j', async (name, expected) => {
    expect(await callerOf(name)).toEqual(expected);
  });
});

describe('requireDataAccess: the answers (through the one error table)', () => {
  const answer = (d: DataAccessDecision, collectionId?: string) => {
    try {
      requireDataAccess(d, 'ogcapi', collectionId);
      return 'allowed';
    } catch (error) {
      const { status, body } = toErrorResponse(error, 'r1');
      return { status, reason: body.reason, detail: body.detail, error };
    }
  };

  it('returns for allow', () => {
    expect(answer({ outcome: 'allow' }, 'roads')).toBe('allowed');
  });

  it('answers 401 credential_required, with WWW-Authenticate, for an anonymous refusal', () => {
    const out = answer({ outcome: 'unauthenticated' }, 'roads');
    expect(out).toMatchObject({ status: 401, reason: 'credential_required' });
    expect(typeof out === 'object' && out.error).toBeInstanceOf(CredentialRequiredError);
    expect(toErrorResponse(new CredentialRequiredError(), 'r1').headers['WWW-Authenticate']).toMatch(
      /X-API-Key/,
    );
  });

  it('answers the same 404 for every hidden collection, whatever the reason', () => {
    const whys = ['not_found', 'draft', 'no_grant', 'not_allowed_role'] as const;
    const outs = whys.map((why) => answer({ outcome: 'hidden', why }, 'roads'));
    for (const out of outs) {
      expect(out).toMatchObject({
        status: 404,
        reason: 'collection_not_found',
        detail: "Collection 'roads' does not exist.",
      });
      expect(typeof out === 'object' && out.error).toBeInstanceOf(NotFoundError);
    }
  });

  it('answers 404 not_served for a disabled protocol, on a collection or not', () => {
    for (const id of ['roads', undefined]) {
      expect(answer({ outcome: 'not_served' }, id)).toMatchObject({ status: 404, reason: 'not_served' });
    }
  });

  it('answers a hidden service document like a disabled protocol', () => {
    expect(answer({ outcome: 'hidden', why: 'no_grant' })).toEqual(answer({ outcome: 'not_served' }));
  });
});
