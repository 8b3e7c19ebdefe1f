import { importConfig } from '#config/env.ts';
import { postgisGateway } from '#datasources/gateway.ts';
import { PostgisImportEngine } from '#datasources/imports/engine.ts';
import { secretBox } from '#datasources/secret-box.ts';
import type { ImportStepDeps } from '#domain/import-steps.ts';
import { importLimits, importUploads } from './imports.ts';
import * as store from './repositories.ts';
import { workflowLog } from './workflows.ts';

/*
 * The import engine's ports (ADR 0083): the workflow's step, with the format readers and the
 * loader. Kept apart from `imports.ts` so the import routes bundle none of it (the preview's port
 * is `import-previews.ts`, ADR 0153).
 */

let engine: PostgisImportEngine | undefined;
/** Everything the import workflow's step works with. */
export function importStepDeps(): ImportStepDeps {
  engine ??= new PostgisImportEngine();
  return {
    repo: store.importRepository(),
    engine,
    services: store.serviceRepository(),
    layers: store.layerRepository(),
    gateway: postgisGateway,
    // Built on first use: the failure recorder never encrypts (its function has no KMS key).
    box: {
      encrypt: (...args) => secretBox().encrypt(...args),
      decrypt: (...args) => secretBox().decrypt(...args),
    },
    deletions: store.deletionRepository(),
    workspaces: store.workspaceRepository(),
    // Resolved on use: the step's other work needs no upload store.
    uploads: { remove: (key) => importUploads().remove(key) },
    limits: importLimits(),
    generationRetentionHours: importConfig().generationRetentionHours,
    log: workflowLog(),
  };
}
