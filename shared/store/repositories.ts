import { config } from '#config/env.ts';
import { DynamoApiKeyRepository } from './api-keys-repository.ts';
import { DynamoAuditTrail } from './audit-records.ts';
import { DynamoClaimMappingRepository } from './claim-mappings-repository.ts';
import { DynamoDeletionRepository } from './deletions-repository.ts';
import { DynamoIdempotencyStore } from './idempotency-repository.ts';
import { DynamoLayerGroupRepository } from './layer-groups-repository.ts';
import { DynamoLayerRepository } from './layers-repository.ts';
import { DynamoMosaicRepository } from './mosaics-repository.ts';
import { DynamoRoleRepository } from './roles-repository.ts';
import { DynamoServiceRepository } from './services-repository.ts';
import { DynamoSessionRepository } from './sessions-repository.ts';
import { DynamoSettingsRepository } from './settings-repository.ts';
import { DynamoStyleAssetRepository } from './style-assets-repository.ts';
import { DynamoStyleRepository } from './styles-repository.ts';
import { DynamoTargetLookup } from './target-lookup.ts';
import { DynamoTileMatrixSetRepository } from './tile-matrix-sets-repository.ts';
import { DynamoUsageKeySlotRepository } from './usage-key-slots-repository.ts';
import { DynamoWorkspaceRepository } from './workspaces-repository.ts';

let workspaces: DynamoWorkspaceRepository | undefined;
let apiKeys: DynamoApiKeyRepository | undefined;

/** The workspace repository (one per process). */
export function workspaceRepository(): DynamoWorkspaceRepository {
  workspaces ??= new DynamoWorkspaceRepository();
  return workspaces;
}

/** The API key repository (one per process). */
export function apiKeyRepository(): DynamoApiKeyRepository {
  apiKeys ??= new DynamoApiKeyRepository();
  return apiKeys;
}

let targets: DynamoTargetLookup | undefined;

/** The authorizer's one-round-trip lookup of credential and path targets (one per process; ADR 0099). */
export function targetLookup(): DynamoTargetLookup {
  targets ??= new DynamoTargetLookup();
  return targets;
}

let roles: DynamoRoleRepository | undefined;

/** The role and policy repository (one per process). */
export function roleRepository(): DynamoRoleRepository {
  roles ??= new DynamoRoleRepository();
  return roles;
}

let claimMappings: DynamoClaimMappingRepository | undefined;

/** The claim mapping repository (one per process). */
export function claimMappingRepository(): DynamoClaimMappingRepository {
  claimMappings ??= new DynamoClaimMappingRepository();
  return claimMappings;
}

let sessions: DynamoSessionRepository | undefined;

/** The session repository (one per process). */
export function sessionRepository(): DynamoSessionRepository {
  sessions ??= new DynamoSessionRepository();
  return sessions;
}

let services: DynamoServiceRepository | undefined;
let layers: DynamoLayerRepository | undefined;
let layerGroups: DynamoLayerGroupRepository | undefined;

/** The service repository (one per process). */
export function serviceRepository(): DynamoServiceRepository {
  services ??= new DynamoServiceRepository();
  return services;
}

/** The layer repository (one per process). */
export function layerRepository(): DynamoLayerRepository {
  layers ??= new DynamoLayerRepository();
  return layers;
}

/** The layer group repository (one per process). */
export function layerGroupRepository(): DynamoLayerGroupRepository {
  layerGroups ??= new DynamoLayerGroupRepository();
  return layerGroups;
}

let settings: DynamoSettingsRepository | undefined;
let tileMatrixSets: DynamoTileMatrixSetRepository | undefined;

/** The workspace settings repository (one per process). */
export function settingsRepository(): DynamoSettingsRepository {
  settings ??= new DynamoSettingsRepository();
  return settings;
}

/** The tile matrix set repository (one per process). */
export function tileMatrixSetRepository(): DynamoTileMatrixSetRepository {
  tileMatrixSets ??= new DynamoTileMatrixSetRepository();
  return tileMatrixSets;
}

let styles: DynamoStyleRepository | undefined;
let styleAssets: DynamoStyleAssetRepository | undefined;

/** The style repository (one per process). */
export function styleRepository(): DynamoStyleRepository {
  styles ??= new DynamoStyleRepository();
  return styles;
}

/** The style asset repository (one per process). */
export function styleAssetRepository(): DynamoStyleAssetRepository {
  styleAssets ??= new DynamoStyleAssetRepository();
  return styleAssets;
}

let mosaics: DynamoMosaicRepository | undefined;

/** The raster mosaic repository (one per process). */
export function mosaicRepository(): DynamoMosaicRepository {
  mosaics ??= new DynamoMosaicRepository();
  return mosaics;
}

let deletions: DynamoDeletionRepository | undefined;
/** Recursive deletion operations, their plans and the hide transactions. */
export function deletionRepository(): DynamoDeletionRepository {
  deletions ??= new DynamoDeletionRepository();
  return deletions;
}

let idempotency: DynamoIdempotencyStore | undefined;
/** The idempotency records of POSTs (ADR 0088). */
export function idempotencyStore(): DynamoIdempotencyStore {
  idempotency ??= new DynamoIdempotencyStore();
  return idempotency;
}

let audit: DynamoAuditTrail | undefined;
/** The audit trail (ADR 0094): the listings and the records of refused requests. */
export function auditTrail(): DynamoAuditTrail {
  audit ??= new DynamoAuditTrail({ days: config().AUDIT_RETENTION_DAYS });
  return audit;
}

let usageKeySlots: DynamoUsageKeySlotRepository | undefined;

/** The slots of the usage-key pool (one per process; ADR 0111). */
export function usageKeySlotRepository(): DynamoUsageKeySlotRepository {
  usageKeySlots ??= new DynamoUsageKeySlotRepository();
  return usageKeySlots;
}
