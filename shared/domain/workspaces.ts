import { randomUUID } from 'node:crypto';
import type { DeletionPlan } from './deletion-model.ts';
import { DependencyConflictError, NotFoundError, VersionMismatchError } from './errors.ts';
import { NAME_PATTERN, UUID_PATTERN } from './identifiers.ts';
import { isConcurrentModification, lastWriterWinsOn } from './last-writer-wins.ts';
import type { Page, PageQuery } from './page.ts';
import type { UsageKeyProvisioner } from './usage-keys.ts';
import type { SummaryCounts } from './workspace-summary.ts';

/** A workspace: the tenant boundary of the catalog. */
export interface Workspace {
  id: string;
  name: string;
  description?: string;
  /** `deleting` while a deletion runs: hidden from every read and refusing new children. */
  status: 'active' | 'deleting';
  /** The recursive deletion that hid it. */
  deletion_id?: string;
  /** How many claim mappings the workspace has (kept by their transactions; lets reads skip the lookup). */
  claim_mapping_count?: number;
  /**
   * The usage key its requests are metered on (ADR 0111): the key of its slot of the pool, which
   * the authorizer names for every request in the workspace. Not a credential.
   */
  usage_slot?: number;
  usage_key?: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** Port: workspace persistence (implemented in `shared/store`). */
export interface WorkspaceRepository {
  create(workspace: Workspace): Promise<void>;
  findById(id: string): Promise<Workspace | undefined>;
  findByName(name: string): Promise<Workspace | undefined>;
  list(limit: number, cursor?: string): Promise<Page<Workspace>>;
  /** Replaces `previous` with `next` atomically (name marker moved when the name changes). */
  update(previous: Workspace, next: Workspace): Promise<void>;
  /**
   * Deletes an empty workspace (with its API keys, claim mappings and settings): undefined when
   * deleted; when catalog children exist or the rest doesn't fit one transaction, the plan of what
   * it holds, as a recursive deletion would count it (the workspace is left as it was).
   */
  deleteEmpty(workspace: Workspace): Promise<DeletionPlan | undefined>;
  /** The summary's counts of the workspace (ADR 0137): its counters, exact; recounted once if older than them. */
  summaryCounts(workspaceId: string): Promise<SummaryCounts>;
}

/** Kinds of a workspace's contents that block a plain delete (catalog objects), by plan key. */
const catalogKinds = ['services', 'styles', 'style_assets'] as const;

const kindNames: Readonly<Record<string, string>> = {
  services: 'service(s)',
  layers: 'layer(s)',
  layer_groups: 'layer group(s)',
  styles: 'style(s)',
  style_assets: 'style asset(s)',
  mosaic_granules: 'mosaic granule record(s)',
  api_keys: 'API key(s)',
  claim_mappings: 'claim mapping(s)',
  settings: 'settings document(s)',
};

/** The catalog objects of a workspace's plan, by kind (only kinds it holds). */
export function catalogItemsOf(plan: DeletionPlan): [string, number][] {
  const items = plan.workspace_items ?? {};
  const counts: [string, number][] = [
    ['services', items.services ?? 0],
    ['layers', plan.layers.count],
    ['layer_groups', plan.layer_groups.count],
    ...catalogKinds.filter((k) => k !== 'services').map((k): [string, number] => [k, items[k] ?? 0]),
    ['mosaic_granules', plan.mosaic_granules],
  ];
  return counts.filter(([, n]) => n > 0);
}

const listed = (counts: [string, number][]) => counts.map(([k, n]) => `${n} ${kindNames[k] ?? k}`).join(', ');

/**
 * Why a workspace could not be deleted at once, from the plan of what it holds (the one source of
 * every count in the answer, ADR 0087): its catalog items, or too many keys and mappings for one
 * transaction. The body carries the plan as deleteService's 409 does.
 */
export function workspaceNotEmpty(workspace: Workspace, plan: DeletionPlan): DependencyConflictError {
  const catalog = catalogItemsOf(plan);
  const total = catalog.reduce((sum, [, n]) => sum + n, 0);
  const others = Object.entries(plan.workspace_items ?? {}).filter(
    ([k, n]) => n > 0 && !(catalogKinds as readonly string[]).includes(k),
  );
  return new DependencyConflictError(
    'workspace_not_empty',
    total > 0
      ? `Workspace '${workspace.name}' still holds ${total} catalog item(s) (${listed(catalog)}); delete them first, or delete with recurse=true.`
      : `Workspace '${workspace.name}' holds too many API keys and claim mappings to delete at once (${listed(others)}); remove some first, or delete with recurse=true.`,
    { recurse_required: true, plan },
  );
}

/**
 * The record a `{workspace}` path parameter named, as an earlier lookup found it (the authorizer's
 * one round trip, ADR 0099): `workspace` undefined means it was looked up and does not exist.
 */
export interface KnownWorkspace {
  idOrName: string;
  workspace: Workspace | undefined;
}

/** What a `{workspace}` parameter may name: an id when UUID-shaped, a name when name-shaped (both for a UUID-shaped name). */
export function workspaceCandidates(idOrName: string): { id?: string; name?: string } {
  return {
    ...(UUID_PATTERN.test(idOrName) ? { id: idOrName.toLowerCase() } : {}),
    ...(NAME_PATTERN.test(idOrName) ? { name: idOrName } : {}),
  };
}

/** The rule of resolution over what was read: the record by id wins, whatever its status; else by name. */
export function pickWorkspace(
  byId: Workspace | undefined,
  byName: Workspace | undefined,
): Workspace | undefined {
  return byId ?? byName;
}

/** A found workspace if requests may see it: active, or hidden by a deletion for the operation that answers with it. */
export function visibleWorkspace(
  found: Workspace | undefined,
  includeDeleting = false,
): Workspace | undefined {
  if (found?.status === 'active') return found;
  return includeDeleting && found?.status === 'deleting' && found.deletion_id ? found : undefined;
}

/**
 * Resolves a path parameter that may be a workspace id or a name (id first). Hidden workspaces are
 * not found. A `known` lookup of the same parameter (the authorizer's, ADR 0099) saves the reads.
 */
export async function resolveWorkspace(
  repo: WorkspaceRepository,
  idOrName: string,
  includeDeleting = false,
  known?: KnownWorkspace,
): Promise<Workspace | undefined> {
  if (known && known.idOrName === idOrName) return visibleWorkspace(known.workspace, includeDeleting);
  const { id, name } = workspaceCandidates(idOrName);
  let found: Workspace | undefined;
  if (id) found = await repo.findById(id);
  if (!found && name) found = await repo.findByName(name);
  return visibleWorkspace(found, includeDeleting);
}

/** Like `resolveWorkspace`, but a missing workspace is a NotFoundError. */
export async function requireWorkspace(repo: WorkspaceRepository, idOrName: string): Promise<Workspace> {
  const ws = await resolveWorkspace(repo, idOrName);
  if (!ws) throw new NotFoundError('workspace_not_found', `Workspace '${idOrName}' does not exist.`);
  return ws;
}

/**
 * The version of a resource that never changes once created (claim mappings, role policies, mosaic
 * granules): its ETag is `"1"` for its whole life, so `If-Match` is honoured on it like on any other
 * (ADR 0087).
 */
export const IMMUTABLE_VERSION = 1;

function versionMismatch(tag: string | undefined): VersionMismatchError {
  return new VersionMismatchError(
    'version_mismatch',
    tag === undefined
      ? 'If-Match names a version, but the resource does not exist.'
      : `If-Match does not match the current version (${tag}); read the resource again.`,
  );
}

/**
 * Checks an `If-Match` header value against the current entity tag (the quoted value the GET's
 * `ETag` carries); `tag` undefined means there is no current representation, which no If-Match
 * matches, `*` included (RFC 9110 §13.1.1).
 */
export function checkTag(tag: string | undefined, ifMatch: string | undefined): void {
  if (ifMatch === undefined) return;
  if (tag === undefined) throw versionMismatch(undefined);
  if (ifMatch.trim() === '*') return;
  const accepted = ifMatch.split(',').map((v) => v.trim().replace(/^W\//, ''));
  if (!accepted.includes(tag)) throw versionMismatch(tag);
}

/** Checks an `If-Match` header value against the current version. */
export function checkVersion(current: { version: number }, ifMatch: string | undefined): void {
  checkTag(`"${current.version}"`, ifMatch);
}

/**
 * Runs a write conditioned on the version the caller checked: with If-Match (a version, not `*`)
 * a lost race (`concurrent_modification`) is the 412 it is — the version the caller named is gone.
 */
export async function underIfMatch<T>(ifMatch: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (ifMatch !== undefined && ifMatch.trim() !== '*' && isConcurrentModification(error)) {
      throw new VersionMismatchError(
        'version_mismatch',
        'If-Match no longer matches: the resource was changed by another request; read it again.',
      );
    }
    throw error;
  }
}

/** A page of the workspaces (listWorkspaces). */
export function listWorkspaces(
  { workspaces }: { workspaces: WorkspaceRepository },
  { limit, cursor }: PageQuery,
): Promise<Page<Workspace>> {
  return workspaces.list(limit, cursor);
}

/** Creates a workspace; the name's uniqueness is enforced by the repository's transaction. */
export async function createWorkspace(
  { workspaces: repo, usageKeys }: { workspaces: WorkspaceRepository; usageKeys?: UsageKeyProvisioner },
  { body: input, now = new Date() }: { body: { name: string; description?: string | null }; now?: Date },
): Promise<Workspace> {
  const ts = now.toISOString();
  const id = randomUUID();
  // The slot of the usage-key pool (its key made when it is the slot's first workspace). A slot
  // assigned to a workspace that then can't be stored (duplicate name) is only a step of the round robin.
  const usageKey = await usageKeys?.assign();
  const workspace: Workspace = {
    id,
    ...(usageKey ? { usage_slot: usageKey.slot, usage_key: usageKey.value } : {}),
    name: input.name,
    ...(input.description ? { description: input.description } : {}),
    status: 'active',
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  await repo.create(workspace);
  return workspace;
}

/**
 * Updates a workspace (spec 4.8): a `name` renames; `description` omitted or null is kept, `""`
 * clears it.
 */
export async function updateWorkspace(
  { workspaces: repo }: { workspaces: WorkspaceRepository },
  {
    workspace: current,
    body: input,
    ifMatch,
    now = new Date(),
  }: {
    /** The workspace as the middleware resolved it. */
    workspace: Workspace;
    body: { name?: string; description?: string | null };
    ifMatch?: string;
    now?: Date;
  },
): Promise<Workspace> {
  return lastWriterWinsOn(
    current,
    () => reread(repo, current.id),
    async (previous) => {
      checkVersion(previous, ifMatch);
      const next: Workspace = {
        ...previous,
        name: input.name ?? previous.name,
        version: previous.version + 1,
        updated_at: now.toISOString(),
      };
      if (input.description === '') delete next.description;
      else if (typeof input.description === 'string') next.description = input.description;
      await repo.update(previous, next);
      return next;
    },
  );
}

/** The workspace as it is now, after a lost race (404 once it is gone or being deleted). */
async function reread(repo: WorkspaceRepository, id: string): Promise<Workspace> {
  const found = await repo.findById(id);
  if (found?.status !== 'active')
    throw new NotFoundError('workspace_not_found', 'The workspace no longer exists.');
  return found;
}

/** Deletes an empty workspace (without If-Match a concurrent update doesn't stop it). */
export async function deleteWorkspace(
  repo: WorkspaceRepository,
  current: Workspace,
  ifMatch: string | undefined,
): Promise<void> {
  await lastWriterWinsOn(
    current,
    () => reread(repo, current.id),
    async (previous) => {
      checkVersion(previous, ifMatch);
      const refused = await repo.deleteEmpty(previous);
      if (refused) throw workspaceNotEmpty(previous, refused);
      return previous;
    },
  );
}
