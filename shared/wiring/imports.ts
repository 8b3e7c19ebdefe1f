import { importConfig } from '../config/env.ts';
import { postgisGateway } from '../datasources/gateway.ts';
import { PostgisImportEngine } from '../datasources/imports/engine.ts';
import { ConfiguredUriPolicy } from '../datasources/imports/sources.ts';
import { secretBox } from '../datasources/secret-box.ts';
import type { ImportStepDeps } from '../domain/import-steps.ts';
import type {
  ImportLimits,
  ImportPreviews,
  ImportRepository,
  ImportStarter,
  ImportUploads,
  ImportUriPolicy,
} from '../domain/imports.ts';
import { importUploads as uploadStore } from '../platform/import-uploads.ts';
import { DynamoImportRepository } from '../store/imports-repository.ts';
import * as store from '../store/repositories.ts';
import { workflowStarter } from '../workflows/starter.ts';

/*
 * The ports of the import lifecycle (ADR 0083), built once per process on first use.
 */

let repo: ImportRepository | undefined;
let engine: PostgisImportEngine | undefined;

/** The import job repository. */
export function importRepository(): ImportRepository {
  repo ??= new DynamoImportRepository();
  return repo;
}

/** The upload store: S3 presigned POSTs when deployed, the local host's form POST locally. */
export function importUploads(): ImportUploads {
  return uploadStore();
}

/** Which URIs imports may read. */
export function importUriPolicy(): ImportUriPolicy {
  return new ConfiguredUriPolicy();
}

/** Starts the import workflow (Step Functions, or the local runner). */
export function importStarter(): ImportStarter {
  return workflowStarter();
}

/** The stage's import limits. */
export function importLimits(): ImportLimits {
  const cfg = importConfig();
  return { maxBytes: cfg.maxBytes, uploadTtlSeconds: cfg.uploadTtlSeconds };
}

function importEngine(): PostgisImportEngine {
  engine ??= new PostgisImportEngine();
  return engine;
}

/** Staged features for the preview. */
export function importPreviews(): ImportPreviews {
  return importEngine();
}

/** Everything the import workflow's step works with. */
export function importStepDeps(): ImportStepDeps {
  return {
    repo: importRepository(),
    engine: importEngine(),
    services: store.serviceRepository(),
    layers: store.layerRepository(),
    gateway: postgisGateway,
    // Built on first use: the failure recorder never encrypts (its function has no KMS key).
    box: {
      encrypt: (...args) => secretBox().encrypt(...args),
      decrypt: (...args) => secretBox().decrypt(...args),
    },
    deletions: store.deletionRepository(),
    deletionStarter: workflowStarter(),
    workspaces: store.workspaceRepository(),
  };
}
