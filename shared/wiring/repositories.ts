import type { ApiKeyRepository } from '#domain/api-keys.ts';
import type { AuditTrail, RefusalLog } from '#domain/audit.ts';
import type { ClaimMappingRepository } from '#domain/claim-mappings.ts';
import type { DeletionRepository } from '#domain/deletions.ts';
import type { LayerGroupRepository } from '#domain/layer-groups.ts';
import type { LayerRepository } from '#domain/layers.ts';
import type { MosaicRepository } from '#domain/mosaics.ts';
import type { TargetLookup } from '#domain/request-targets.ts';
import type { RoleRepository } from '#domain/roles.ts';
import type { ServiceRepository } from '#domain/services.ts';
import type { SessionRepository } from '#domain/sessions.ts';
import type { SettingsRepository } from '#domain/settings.ts';
import type { StyleAssetRepository } from '#domain/style-assets.ts';
import type { StyleRepository } from '#domain/styles.ts';
import type { TileMatrixSetRepository } from '#domain/tile-matrix-sets.ts';
import type { WorkspaceRepository } from '#domain/workspaces.ts';
import * as store from '#store/repositories.ts';

/*
 * The repositories, as the domain's ports. One accessor per port, each a plain function, so
 * esbuild keeps only the accessors a handler calls (and the store builds each repository once per
 * process, on first use).
 */

/** The workspace repository. */
export function workspaceRepository(): WorkspaceRepository {
  return store.workspaceRepository();
}

/** The API key repository. */
export function apiKeyRepository(): ApiKeyRepository {
  return store.apiKeyRepository();
}

/** The authorizer's lookup of the credential and the path's workspace and service (ADR 0099). */
export function targetLookup(): TargetLookup {
  return store.targetLookup();
}

/** The role and policy repository. */
export function roleRepository(): RoleRepository {
  return store.roleRepository();
}

/** The claim mapping repository. */
export function claimMappingRepository(): ClaimMappingRepository {
  return store.claimMappingRepository();
}

/** The session repository. */
export function sessionRepository(): SessionRepository {
  return store.sessionRepository();
}

/** The service repository. */
export function serviceRepository(): ServiceRepository {
  return store.serviceRepository();
}

/** The layer repository. */
export function layerRepository(): LayerRepository {
  return store.layerRepository();
}

/** The layer group repository. */
export function layerGroupRepository(): LayerGroupRepository {
  return store.layerGroupRepository();
}

/** The workspace settings repository. */
export function settingsRepository(): SettingsRepository {
  return store.settingsRepository();
}

/** The tile matrix set repository. */
export function tileMatrixSetRepository(): TileMatrixSetRepository {
  return store.tileMatrixSetRepository();
}

/** The style repository. */
export function styleRepository(): StyleRepository {
  return store.styleRepository();
}

/** The style asset repository. */
export function styleAssetRepository(): StyleAssetRepository {
  return store.styleAssetRepository();
}

/** The raster mosaic repository. */
export function mosaicRepository(): MosaicRepository {
  return store.mosaicRepository();
}

/** Recursive deletion operations, their plans and the hide transactions. */
export function deletionRepository(): DeletionRepository {
  return store.deletionRepository();
}

/** The audit trail (ADR 0094). */
export function auditTrail(): AuditTrail & RefusalLog {
  return store.auditTrail();
}
