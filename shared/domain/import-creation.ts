/**
 * createImport (ADR 0083): the job a new import starts as — its upload ticket, or its URI admitted
 * and its run started at once — after the checks a request can fail before anything is stored:
 * the file's declared size, the service name, the requested layer names and targets.
 */

import { InvalidInputError, StateConflictError } from './errors.ts';
import { NAME_PATTERN } from './identifiers.ts';
import {
  type ImportJob,
  type ImportSourceInput,
  type ImportUploadTicket,
  type RequestedLayerName,
  timeOrderedId,
} from './import-model.ts';
import { lookUpTargets, type TargetLookups } from './import-targets.ts';
import {
  type ImportLimits,
  type ImportRepository,
  type ImportStarter,
  type ImportUploads,
  type ImportUriPolicy,
  startRun,
} from './imports.ts';
import type { ServiceRepository } from './services.ts';
import type { Workspace } from './workspaces.ts';

/** Body of createImport. */
export interface CreateImportInput {
  name?: string;
  source: ImportSourceInput;
  service_name?: string;
  /** The public ids to publish the file's layers as (ADR 0126); `source_layer` omitted: the first. */
  layers?: RequestedLayerName[];
  auto_publish?: boolean;
}

/** Base name of a file or URI without extension. */
function baseName(pathOrUri: string): string {
  const last = pathOrUri.split(/[/\\]/).pop() ?? pathOrUri;
  return last.replace(/\.[^.]*$/, '') || 'import';
}

/** The default service name: `import-<name>-<8 hex of the id>`, valid and ≤ 64 characters. */
function defaultServiceName(name: string, id: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, 40);
  return `import-${slug ? `${slug}-` : ''}${id.replaceAll('-', '').slice(-8)}`;
}

/** createImport: 201 with the upload ticket (uploads) or already queued (URIs). */
export async function createImport(
  deps: {
    repo: ImportRepository;
    services: ServiceRepository;
    uploads: ImportUploads;
    uris: ImportUriPolicy;
    starter: ImportStarter;
    limits: ImportLimits;
    targets: TargetLookups;
  },
  {
    workspace,
    body: input,
    principalId: createdBy,
    now = new Date(),
  }: { workspace: Workspace; body: CreateImportInput; principalId: string; now?: Date },
): Promise<{ job: ImportJob; upload?: ImportUploadTicket }> {
  const id = timeOrderedId(now.getTime());
  const { source } = input;
  if (
    source.kind === 'upload' &&
    source.size_bytes !== undefined &&
    source.size_bytes > deps.limits.maxBytes
  ) {
    throw new InvalidInputError(
      'file_too_large',
      `The file is ${source.size_bytes} bytes; imports take at most ${deps.limits.maxBytes} bytes.`,
    );
  }
  const location =
    source.kind === 'upload'
      ? // Ids only: the client's file name is the job's metadata, never part of a key or a path (ADR 0106).
        `uploads/${workspace.id}/${id}`
      : await deps.uris.admit(source.uri);
  const name = input.name ?? baseName(source.kind === 'upload' ? source.filename : source.uri);
  const serviceName = input.service_name ?? defaultServiceName(name, id);
  if (!NAME_PATTERN.test(serviceName)) {
    throw new InvalidInputError(
      'invalid_service_name',
      `service_name '${serviceName}' is not a valid service name.`,
    );
  }
  const requested = input.layers ?? [];
  const seen = new Set<string>();
  for (const [i, entry] of requested.entries()) {
    if ((entry.public_id === undefined) === (entry.target === undefined)) {
      throw new InvalidInputError(
        'invalid_layer_names',
        `layers[${i}]: give either public_id (a new layer) or target (an existing layer to replace or append to).`,
      );
    }
    const key = `\0${entry.source_layer ?? ''}`;
    const named = entry.public_id ?? `\0target:${entry.target?.layer}`;
    if (seen.has(key) || seen.has(named)) {
      throw new InvalidInputError(
        'invalid_layer_names',
        `layers[${i}]: ${seen.has(key) ? `source layer '${entry.source_layer ?? '(the first)'}'` : entry.public_id ? `public_id '${entry.public_id}'` : `target '${entry.target?.layer}'`} is named twice.`,
      );
    }
    seen.add(key);
    seen.add(named);
  }
  // The targets are checked now (each exists, an import published it), together; their columns
  // once the file is read.
  for (const lookup of await lookUpTargets(deps.targets, workspace.id, requested))
    if (lookup && 'error' in lookup) throw lookup.error;
  if (await deps.services.findByName(workspace.id, serviceName)) {
    throw new StateConflictError(
      'service_name_taken',
      `A service named '${serviceName}' exists in this workspace; choose another service_name.`,
    );
  }
  const ts = now.toISOString();
  const expiresAt = new Date(now.getTime() + deps.limits.uploadTtlSeconds * 1000);
  const job: ImportJob = {
    id,
    workspace_id: workspace.id,
    name,
    source_kind: source.kind,
    ...(source.kind === 'upload' ? { source_filename: source.filename } : { source_uri: source.uri }),
    source_location: location,
    status: source.kind === 'upload' ? 'awaiting_upload' : 'queued',
    phase: source.kind === 'upload' ? 'upload' : 'acquire',
    service_name: serviceName,
    ...(requested.length ? { requested_layers: requested } : {}),
    auto_publish: input.auto_publish ?? false,
    max_bytes: deps.limits.maxBytes,
    ...(source.kind === 'upload' ? { upload_expires_at: expiresAt.toISOString() } : { started_at: ts }),
    processed_bytes: 0,
    processed_features: 0,
    processed_layers: 0,
    total_layers: 0,
    retry_count: 0,
    run: source.kind === 'upload' ? 0 : 1,
    version: 1,
    created_by: createdBy,
    created_at: ts,
    updated_at: ts,
  };
  const upload =
    source.kind === 'upload'
      ? {
          ...(await deps.uploads.ticket(location, deps.limits.maxBytes, expiresAt)),
          max_bytes: deps.limits.maxBytes,
        }
      : undefined;
  await deps.repo.create(job);
  if (job.status === 'queued') await startRun(deps.starter, job);
  return { job, ...(upload ? { upload } : {}) };
}
