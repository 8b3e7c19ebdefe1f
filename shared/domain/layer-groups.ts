import { randomUUID } from 'node:crypto';
import { InvalidInputError, NotFoundError, RuleViolationError } from './errors.ts';
import { UUID_PATTERN } from './identifiers.ts';
import { lastWriterWinsOn } from './last-writer-wins.ts';
import type { LayerRepository } from './layers.ts';
import type { Page, WorkspacePageQuery } from './page.ts';
import { checkVersion } from './workspaces.ts';

/** One member of a group: a layer or another group, by public id. */
export interface GroupMember {
  resource: string;
  style?: string;
  opacity?: number;
}

/** A layer group: it shares the workspace's public id namespace with layers. */
export interface LayerGroup {
  id: string;
  workspace_id: string;
  public_id: string;
  title: string;
  members: GroupMember[];
  version: number;
  created_at: string;
  updated_at: string;
}

/** A group read during cycle detection; its version is re-checked in the write transaction. */
export interface VisitedGroup {
  id: string;
  version: number;
}

/** Port: layer group persistence. */
export interface LayerGroupRepository {
  /** Stores the group, claims its public id and counts one membership on every member (which must exist). */
  create(group: LayerGroup): Promise<void>;
  find(workspaceId: string, id: string): Promise<LayerGroup | undefined>;
  list(workspaceId: string, limit: number, cursor?: string): Promise<Page<LayerGroup>>;
  /** Replaces the group; `visited` groups must be unchanged so a concurrent edit can't close a cycle. */
  update(previous: LayerGroup, next: LayerGroup, visited: VisitedGroup[]): Promise<void>;
  /** Deletes the group unless another group contains it. */
  delete(group: LayerGroup): Promise<void>;
}

/** Members per group (each costs one item of the write transaction). */
export const MAX_MEMBERS = 40;
const MAX_VISITED = 40;
/** Members whose public id markers (then groups) are read at once while walking them. */
const WALK_READS = 16;

export interface LayerGroupInput {
  public_id: string;
  title?: string;
  members: GroupMember[];
}

function checkMembers(publicId: string, members: GroupMember[]): void {
  const seen = new Set<string>();
  for (const m of members) {
    if (m.resource === publicId)
      throw new InvalidInputError('group_cycle', `A group can't contain itself ('${publicId}').`);
    if (seen.has(m.resource))
      throw new InvalidInputError('duplicate_member', `'${m.resource}' is listed twice.`);
    seen.add(m.resource);
  }
}

/** Creates a group; every member must exist (400 naming the first that doesn't). */
export async function createLayerGroup(
  { groups: repo }: Pick<LayerGroupDeps, 'groups'>,
  { workspaceId, body: input, now = new Date() }: { workspaceId: string; body: LayerGroupInput; now?: Date },
): Promise<LayerGroup> {
  checkMembers(input.public_id, input.members);
  const ts = now.toISOString();
  const group: LayerGroup = {
    id: randomUUID(),
    workspace_id: workspaceId,
    public_id: input.public_id,
    title: input.title ?? input.public_id,
    members: input.members,
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
  await repo.create(group);
  return group;
}

/** Reads a group by id or public id. */
export async function requireLayerGroup(
  repo: LayerGroupRepository,
  layers: LayerRepository,
  workspaceId: string,
  idOrPublicId: string,
): Promise<LayerGroup> {
  let group = UUID_PATTERN.test(idOrPublicId)
    ? await repo.find(workspaceId, idOrPublicId.toLowerCase())
    : undefined;
  if (!group) {
    const marker = await layers.findPublicId(workspaceId, idOrPublicId);
    if (marker?.kind === 'group') group = await repo.find(workspaceId, marker.target_id);
  }
  if (!group)
    throw new NotFoundError('layer_group_not_found', `Layer group '${idOrPublicId}' does not exist.`);
  return group;
}

/**
 * Walks the groups reachable from `members`; refuses (422) when `publicId` is among them, which
 * would close a cycle. Returns the groups read, for the transaction's version checks.
 *
 * Breadth first, as before, but a few members at a time (ADR 0154): their public id markers are
 * read together, then the groups those name; then the few are judged in order, as the walk one
 * member at a time judged them, so the same refusal comes first and at most one slice more is read.
 */
async function reachableGroups(
  repo: LayerGroupRepository,
  layers: LayerRepository,
  workspaceId: string,
  publicId: string,
  members: GroupMember[],
): Promise<VisitedGroup[]> {
  const visited = new Map<string, VisitedGroup>();
  let level = members.map((m) => m.resource);
  while (level.length > 0) {
    const next: string[] = [];
    for (let from = 0; from < level.length; from += WALK_READS) {
      const slice = level.slice(from, from + WALK_READS);
      const cycleAt = slice.indexOf(publicId);
      const asked = [...new Set(cycleAt < 0 ? slice : slice.slice(0, cycleAt))];
      const found = await Promise.all(asked.map((r) => layers.findPublicId(workspaceId, r)));
      const markers = new Map(asked.map((r, i) => [r, found[i]]));
      const ids = [
        ...new Set(
          found.flatMap((m) => (m?.kind === 'group' && !visited.has(m.target_id) ? [m.target_id] : [])),
        ),
      ];
      const read = await Promise.all(ids.map((id) => repo.find(workspaceId, id)));
      const groups = new Map(ids.map((id, i) => [id, read[i]]));
      for (const resource of slice) {
        if (resource === publicId) {
          throw new RuleViolationError('group_cycle', `This change would make '${publicId}' contain itself.`);
        }
        const marker = markers.get(resource);
        if (marker?.kind !== 'group' || visited.has(marker.target_id)) continue;
        const group = groups.get(marker.target_id);
        if (!group) continue;
        visited.set(group.id, { id: group.id, version: group.version });
        if (visited.size > MAX_VISITED) {
          throw new RuleViolationError(
            'group_too_deep',
            `Groups may nest at most ${MAX_VISITED} groups deep.`,
          );
        }
        next.push(...group.members.map((m) => m.resource));
      }
    }
    level = next;
  }
  return [...visited.values()];
}

/** The ports of the layer group use cases: the groups, and the layers (public ids, members). */
export interface LayerGroupDeps {
  groups: LayerGroupRepository;
  layers: LayerRepository;
}

/** The group a change names: its workspace and its id or public id (the `{group}` of the path). */
export interface LayerGroupCommand {
  workspaceId: string;
  group: string;
  ifMatch?: string;
}

/** A page of the workspace's groups (listLayerGroups). */
export function listLayerGroups({ groups }: Pick<LayerGroupDeps, 'groups'>, query: WorkspacePageQuery) {
  return groups.list(query.workspaceId, query.limit, query.cursor);
}

/** Reads a group by its id or public id (getLayerGroup): 404 for a missing one. */
export function getLayerGroup(
  { groups, layers }: LayerGroupDeps,
  { workspaceId, group }: Omit<LayerGroupCommand, 'ifMatch'>,
): Promise<LayerGroup> {
  return requireLayerGroup(groups, layers, workspaceId, group);
}

/** Replaces a group's title and members (PUT): 404 for a missing group; cycles are refused. */
export async function updateLayerGroup(
  { groups: repo, layers }: LayerGroupDeps,
  {
    workspaceId,
    group,
    body: input,
    ifMatch,
    now = new Date(),
  }: LayerGroupCommand & { body: LayerGroupInput; now?: Date },
): Promise<LayerGroup> {
  const current = await requireLayerGroup(repo, layers, workspaceId, group);
  checkMembers(input.public_id, input.members);
  // Without If-Match a lost race (this group or a nested one changed) is walked and written again.
  return lastWriterWinsOn(
    current,
    () => rereadGroup(repo, current),
    async (previous) => {
      checkVersion(previous, ifMatch);
      const visited = await reachableGroups(
        repo,
        layers,
        previous.workspace_id,
        previous.public_id,
        input.members,
      );
      const next: LayerGroup = {
        ...previous,
        public_id: input.public_id,
        title: input.title ?? input.public_id,
        members: input.members,
        version: previous.version + 1,
        updated_at: now.toISOString(),
      };
      await repo.update(previous, next, visited);
      return next;
    },
  );
}

async function rereadGroup(repo: LayerGroupRepository, group: LayerGroup): Promise<LayerGroup> {
  const found = await repo.find(group.workspace_id, group.id);
  if (!found)
    throw new NotFoundError('layer_group_not_found', `Layer group '${group.public_id}' does not exist.`);
  return found;
}

/**
 * Deletes a group: 404 for a missing one, 409 while another group contains it; without If-Match a
 * concurrent update doesn't stop it.
 */
export async function deleteLayerGroup(
  { groups: repo, layers }: LayerGroupDeps,
  { workspaceId, group, ifMatch }: LayerGroupCommand,
): Promise<void> {
  const current = await requireLayerGroup(repo, layers, workspaceId, group);
  await lastWriterWinsOn(
    current,
    () => rereadGroup(repo, current),
    async (previous) => {
      checkVersion(previous, ifMatch);
      await repo.delete(previous);
    },
  );
}
