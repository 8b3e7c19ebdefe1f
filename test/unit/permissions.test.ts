import { describe, expect, it } from 'vitest';
import { managementCatalog } from '#api/catalog.ts';
import { routes } from '#api/routes.ts';
import { authorize, builtInPolicies, type PolicyLoader } from '#auth/permissions.ts';
import type { Principal } from '#auth/principal.ts';
import { normalisePolicy, type Policy } from '#domain/roles.ts';
import { ForbiddenError } from '#http/errors.ts';

const ws = { id: '6a1d3b2e-0000-4000-8000-000000000001', name: 'alpha' };
const other = { id: '6a1d3b2e-0000-4000-8000-000000000002', name: 'beta' };

function principal(roles: Record<string, string>, superAdmin = false): Principal {
  return { id: 'p', subject: 's', authMethod: 'apikey', superAdmin, roles };
}

const customPolicies: Record<string, Policy[]> = {
  // One grant: update this workspace, nothing else.
  'one-grant': [{ workspace: ws.id, service: 'management', operation: 'updateWorkspace', action: 'manage' }],
};
const load: PolicyLoader = async (roleId) => customPolicies[roleId] ?? [];

async function allowedOperations(p: Principal): Promise<string[]> {
  const allowed: string[] = [];
  for (const op of routes) {
    try {
      await authorize(p, op, ws, load);
      allowed.push(op.operationId);
    } catch (error) {
      expect(error).toBeInstanceOf(ForbiddenError);
    }
  }
  return allowed.sort();
}

const open = [
  'getAuthMe',
  'getConsoleConfig',
  'getOpenAPI',
  'getHealth',
  'getReadiness',
  'login',
  'logout',
  'refreshSession',
  'getTileMatrixSet',
  'listTileMatrixSets',
  // Authenticated: the handlers decide what the caller may see (admins of the operation's workspace).
  'getDeletionOperation',
  'listDeletionOperations',
  'retryDeletionOperation',
];
const reads = [
  'getMosaic',
  'listMosaicHarvestJobs',
  'getMosaicHarvestJob',
  'getMosaicGranule',
  'listMosaicGranules',
  'getLayer',
  'getLayerGroup',
  'getService',
  'getServiceDeletionPlan',
  'getWorkspace',
  'listLayerGroups',
  'listLayers',
  'listWorkspaceLayers',
  'listServices',
  'getWMSSettings',
  'getOGCAPISettings',
  'getOGCTilesAPISettings',
  'getWFSSettings',
  'getWCSSettings',
  'getWMTSSettings',
  'listWorkspaceTileMatrixSets',
  'getStyle',
  'listStyles',
  'getStyleAsset',
  'listStyleAssets',
  'getImport',
  'listImports',
  'getImportHistory',
  // ADR 0139.
  'getPersistentTileCacheStats',
  'listTileCacheJobs',
  'getTileCacheJob',
  'getTileCacheJobProgress',
];
const writes = [
  'deleteMosaicGranule',
  'harvestMosaicGranules',
  'createMosaicHarvestJob',
  'cancelMosaicHarvestJob',
  'createStyle',
  'updateStyle',
  'deleteStyle',
  'putStyleAsset',
  'deleteStyleAsset',
  'createLayer',
  'createLayerGroup',
  'deleteLayer',
  'deleteLayerGroup',
  'discoverLayers',
  'updateLayer',
  'updateLayerGroup',
  'validateSQLView',
  'createImport',
  'startImport',
  'retryImport',
  'setImportPlan',
  'previewImport',
  'publishImport',
];
const manages = [
  'createAPIKey',
  'createClaimMapping',
  'createService',
  'deleteClaimMapping',
  'deleteService',
  'getAPIKey',
  'listAPIKeys',
  'listClaimMappings',
  'revokeAPIKey',
  'testExistingServiceConnection',
  'updateService',
  'updateWorkspace',
  'updateWMSSettings',
  'updateOGCAPISettings',
  'updateOGCTilesAPISettings',
  'updateWFSSettings',
  'updateWCSSettings',
  'updateWMTSSettings',
  'cancelImport',
  'rollbackImport',
  'listWorkspaceAudit',
  // Issue #26 (ADR 0131).
  'getClaimMapping',
  'deleteAPIKey',
  'listWorkspaceRoles',
  'getWorkspaceDeletionPlan',
  'testNewServiceConnection',
  // ADR 0137.
  'getWorkspaceSummary',
  // ADR 0139.
  'createTileCacheJob',
  'cancelTileCacheJob',
  'clearWorkspaceCache',
];
const everything = routes.map((r) => r.operationId).sort();

// Every operation × every kind of caller, with the exact allow set (a new route must be placed here).
const matrix: [string, Principal, string[]][] = [
  ['viewer', principal({ [ws.id]: 'viewer' }), [...open, ...reads]],
  ['editor', principal({ [ws.id]: 'editor' }), [...open, ...reads, ...writes]],
  ['admin', principal({ [ws.id]: 'admin' }), [...open, ...reads, ...writes, ...manages]],
  ['admin by workspace name', principal({ alpha: 'admin' }), [...open, ...reads, ...writes, ...manages]],
  ['super_admin', principal({}, true), everything],
  ['a custom role with one grant', principal({ [ws.id]: 'one-grant' }), [...open, 'updateWorkspace']],
  ['admin of another workspace', principal({ [other.id]: 'admin' }), open],
  ['a retired or unknown custom role', principal({ [ws.id]: 'gone' }), open],
];

describe('the authorization engine', () => {
  it('places every route in exactly one permission class', () => {
    const classified = new Set([...open, ...reads, ...writes, ...manages]);
    const global = routes.filter((r) => r.permission === 'global').map((r) => r.operationId);
    for (const op of routes)
      expect(classified.has(op.operationId) || global.includes(op.operationId)).toBe(true);
  });

  it.each(matrix)('allows %s exactly the expected operations', async (_who, p, expected) => {
    expect(await allowedOperations(p)).toEqual([...expected].sort());
  });

  it('evaluates built-in roles as ordinary policy sets that pass policy validation', () => {
    const used = new Set(managementCatalog().values());
    for (const policies of Object.values(builtInPolicies)) {
      for (const p of policies.filter((x) => x.service !== 'management' || used.has(x.action))) {
        expect(() => normalisePolicy(p, managementCatalog())).not.toThrow();
      }
    }
  });
});
