import { importConfig } from '#config/env.ts';
import type { ImportLimits, ImportStarter, ImportUploads } from '#domain/imports.ts';
import { importUploads as uploadStore } from '#platform/import-uploads.ts';
import { workflowStarter } from './workflows.ts';

/*
 * The ports of the import lifecycle's requests (ADR 0083), built once per process on first use.
 * Light on purpose: the routes' bundles carry no format reader and no database driver — the
 * engine is wired in `import-engine.ts`, the preview in `import-previews.ts`, and the URI policy
 * (createImport's, with the network checks of an https:// source) in `import-uris.ts` (ADR 0153).
 */

/** The upload store: S3 presigned POSTs when deployed, the local host's form POST locally. */
export function importUploads(): ImportUploads {
  return uploadStore();
}

/** Starts the import workflow (Step Functions, or the local runner). */
export function importStarter(): ImportStarter {
  return workflowStarter();
}

/** The stage's import limits (the upload's; one import's and a workspace's imports', ADR 0110). */
export function importLimits(): ImportLimits {
  const cfg = importConfig();
  return {
    maxBytes: cfg.maxBytes,
    uploadTtlSeconds: cfg.uploadTtlSeconds,
    maxLayers: cfg.maxLayers,
    maxRows: cfg.maxRows,
    workspaceMaxRows: cfg.workspaceMaxRows,
    workspaceMaxBytes: cfg.workspaceMaxBytes,
  };
}
