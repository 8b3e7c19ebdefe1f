import { config } from '#config/env.ts';
import type { ApiKeyRepository } from '#domain/api-keys.ts';
import type { AuditTrail, RefusalLog } from '#domain/audit.ts';
import type { ClaimMappingRepository } from '#domain/claim-mappings.ts';
import type { DataCatalog } from '#domain/data-plane.ts';
import type { DeletionRepository } from '#domain/deletions.ts';
import type { IdempotencyStore } from '#domain/idempotency.ts';
import type { ImportRepository } from '#domain/imports.ts';
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
import type { UsageKeySlotRepository } from '#domain/usage-keys.ts';
import type { WorkspaceRepository } from '#domain/workspaces.ts';
import { DynamoApiKeyRepository } from '#store/api-keys-repository.ts';
import { DynamoAuditTrail } from '#store/audit-records.ts';
import { DynamoClaimMappingRepository } from '#store/claim-mappings-repository.ts';
import { dynamoDataCatalog } from '#store/data-catalog.ts';
import { DynamoDeletionRepository } from '#store/deletions-repository.ts';
import { DynamoIdempotencyStore } from '#store/idempotency-repository.ts';
import { DynamoImportRepository } from '#store/imports-repository.ts';
import { DynamoLayerGroupRepository } from '#store/layer-groups-repository.ts';
import { DynamoLayerRepository } from '#store/layers-repository.ts';
import { DynamoMosaicRepository } from '#store/mosaics-repository.ts';
import { DynamoRoleRepository } from '#store/roles-repository.ts';
import { DynamoServiceRepository } from '#store/services-repository.ts';
import { DynamoSessionRepository } from '#store/sessions-repository.ts';
import { DynamoSettingsRepository } from '#store/settings-repository.ts';
import { DynamoStyleAssetRepository } from '#store/style-assets-repository.ts';
import { DynamoStyleRepository } from '#store/styles-repository.ts';
import { DynamoTargetLookup } from '#store/target-lookup.ts';
import { DynamoTileMatrixSetRepository } from '#store/tile-matrix-sets-repository.ts';
import { DynamoUsageKeySlotRepository } from '#store/usage-key-slots-repository.ts';
import { DynamoWorkspaceRepository } from '#store/workspaces-repository.ts';

/*
 * The repositories, as the domain's ports: the one place that builds them (issue #28). One
 * accessor per port, each a plain function over a module variable, so esbuild keeps only the
 * repositories a handler calls, and each is built once per process, on first use.
 */

let workspaces: DynamoWorkspaceRepository | undefined;

/** The workspace repository. */
export function workspaceRepository(): WorkspaceRepository {
  workspaces ??= new DynamoWorkspaceRepository();
  return workspaces;
}

let apiKeys: DynamoApiKeyRepository | undefined;

/** The API key repository. */
export function apiKeyRepository(): ApiKeyRepository {
  apiKeys ??= new DynamoApiKeyRepository();
  return apiKeys;
}

let targets: DynamoTargetLookup | undefined;

/** The authorizer's one-round-trip lookup of the credential and the path's workspace and service (ADR 0099). */
export function targetLookup(): TargetLookup {
  targets ??= new DynamoTargetLookup();
  return targets;
}

let roles: DynamoRoleRepository | undefined;

/** The role and policy repository. */
export function roleRepository(): RoleRepository {
  roles ??= new DynamoRoleRepository();
  return roles;
}

let claimMappings: DynamoClaimMappingRepository | undefined;

/** The claim mapping repository. */
export function claimMappingRepository(): ClaimMappingRepository {
  claimMappings ??= new DynamoClaimMappingRepository();
  return claimMappings;
}

let sessions: DynamoSessionRepository | undefined;

/** The session repository. */
export function sessionRepository(): SessionRepository {
  sessions ??= new DynamoSessionRepository();
  return sessions;
}

let services: DynamoServiceRepository | undefined;

/** The service repository. */
export function serviceRepository(): ServiceRepository {
  services ??= new DynamoServiceRepository();
  return services;
}

let imports: DynamoImportRepository | undefined;

/** The import job repository. */
export function importRepository(): ImportRepository {
  imports ??= new DynamoImportRepository();
  return imports;
}

let layers: DynamoLayerRepository | undefined;

/** The store's layer repository, with the reads the data catalog makes beyond the port. */
function dynamoLayerRepository(): DynamoLayerRepository {
  layers ??= new DynamoLayerRepository();
  return layers;
}

/** The layer repository. */
export function layerRepository(): LayerRepository {
  return dynamoLayerRepository();
}

let layerGroups: DynamoLayerGroupRepository | undefined;

/** The layer group repository. */
export function layerGroupRepository(): LayerGroupRepository {
  layerGroups ??= new DynamoLayerGroupRepository();
  return layerGroups;
}

let settings: DynamoSettingsRepository | undefined;

/** The workspace settings repository. */
export function settingsRepository(): SettingsRepository {
  settings ??= new DynamoSettingsRepository();
  return settings;
}

let tileMatrixSets: DynamoTileMatrixSetRepository | undefined;

/** The tile matrix set repository. */
export function tileMatrixSetRepository(): TileMatrixSetRepository {
  tileMatrixSets ??= new DynamoTileMatrixSetRepository();
  return tileMatrixSets;
}

let styles: DynamoStyleRepository | undefined;

/** The style repository. */
export function styleRepository(): StyleRepository {
  styles ??= new DynamoStyleRepository();
  return styles;
}

let styleAssets: DynamoStyleAssetRepository | undefined;

/** The style asset repository. */
export function styleAssetRepository(): StyleAssetRepository {
  styleAssets ??= new DynamoStyleAssetRepository();
  return styleAssets;
}

let mosaics: DynamoMosaicRepository | undefined;

/** The raster mosaic repository. */
export function mosaicRepository(): MosaicRepository {
  mosaics ??= new DynamoMosaicRepository();
  return mosaics;
}

let deletions: DynamoDeletionRepository | undefined;

/**
 * Recursive deletion operations, their plans and the hide transactions; with the store's resume
 * scan (`unfinished`), which only the local host's workflow runner calls and no domain port declares.
 */
export function deletionRepository(): DeletionRepository & Pick<DynamoDeletionRepository, 'unfinished'> {
  deletions ??= new DynamoDeletionRepository();
  return deletions;
}

let idempotency: DynamoIdempotencyStore | undefined;

/** The idempotency records of POSTs (ADR 0088). */
export function idempotencyStore(): IdempotencyStore {
  idempotency ??= new DynamoIdempotencyStore();
  return idempotency;
}

let audit: DynamoAuditTrail | undefined;

/** The audit trail (ADR 0094): the listings and the records of refused requests. */
export function auditTrail(): AuditTrail & RefusalLog {
  audit ??= new DynamoAuditTrail({ days: config().AUDIT_RETENTION_DAYS });
  return audit;
}

let usageKeySlots: DynamoUsageKeySlotRepository | undefined;

/** The slots of the usage-key pool (ADR 0111). */
export function usageKeySlotRepository(): UsageKeySlotRepository {
  usageKeySlots ??= new DynamoUsageKeySlotRepository();
  return usageKeySlots;
}

/** The data plane's catalog (ADR 0123): the repositories' reads, composed by the store. */
export function dataCatalog(): DataCatalog {
  return dynamoDataCatalog({
    layerRepository: dynamoLayerRepository,
    serviceRepository,
    styleRepository,
    tileMatrixSetRepository,
  });
}
