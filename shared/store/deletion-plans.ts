import type { DeletionPlan, PlanEntry, PlanSection } from '#domain/deletions.ts';
import { PLAN_LIST_LIMIT } from '#domain/deletions.ts';
import type { LayerGroup } from '#domain/layer-groups.ts';
import type { Service } from '#domain/services.ts';
import type { Workspace } from '#domain/workspaces.ts';
import type { StoreClient } from './client.ts';
import {
  batchGetItems,
  type Expression,
  forEachPrefixPage,
  keyCondition,
  queryInput,
  queryPage,
  queryPages,
} from './items.ts';
import { entities, keys, parseKey } from './keys.ts';
import { toGroup } from './layer-groups-repository.ts';
import {
  type CounterReading,
  emptyTallies,
  type PlanTallies,
  prefixRange,
  readPlanCounters,
  readWorkspacePlanCounters,
  tallyLayer,
  writeBase,
} from './plan-counters.ts';
import { attributes } from './table.ts';

/** A section that counts everything and keeps the first entries. */
class SectionBuilder {
  count = 0;
  readonly items: PlanEntry[] = [];
  add(entry: PlanEntry) {
    this.count++;
    if (this.items.length < PLAN_LIST_LIMIT) this.items.push(entry);
  }
  build(): PlanSection {
    return { count: this.count, items: this.items, truncated: this.count > this.items.length };
  }
}

function tally(map: Map<string, number>, key: string, by = 1) {
  map.set(key, (map.get(key) ?? 0) + by);
}

const layerProjection = {
  expression: '#id, public_id, service_id, default_style, styles, allowed_roles',
  names: { '#id': 'id' },
};

/**
 * Every item of a workspace under `prefix`, page by page, strongly consistent. A closed range, not
 * begins_with: DynamoDB Local would read the rest of the partition after the prefix (ADR 0101).
 */
async function forEachUnder(
  db: StoreClient,
  table: string,
  workspaceId: string,
  prefix: string,
  visit: (items: Record<string, unknown>[]) => void,
  projection?: Expression,
): Promise<void> {
  const partition = keys.workspacePartition(workspaceId);
  const range = prefixRange(prefix);
  await queryPages(
    db,
    queryInput(table, keyCondition(partition, range), {
      consistent: true,
      ...(projection ? { projection } : {}),
    }),
    (items) => {
      visit(items);
      return true;
    },
    { seek: { partition, range } },
  );
}

/** What a workspace plan reads of the entities it lists or counts. */
const workspaceItemProjection: Expression = {
  expression: `#id, ${attributes.sk}, entity, public_id, custom_role, role_id, #status`,
  names: { '#id': 'id', '#status': 'status' },
};

/**
 * The layer groups that must go with the given layers' services: every group listing one of
 * those layers, then every group listing one of those groups, to the top. Members are matched
 * through their public id markers, which name the layer's service, so no layer is read. With
 * `serviceIds` undefined every group of the workspace is returned.
 */
export async function dependentGroupClosure(
  db: StoreClient,
  table: string,
  workspaceId: string,
  serviceIds: ReadonlySet<string> | undefined,
): Promise<LayerGroup[]> {
  const groups: LayerGroup[] = [];
  await forEachUnder(db, table, workspaceId, keys.layerGroupPrefix, (items) => {
    for (const i of items) groups.push(toGroup(i));
  });
  if (!serviceIds) return groups;
  const members = [...new Set(groups.flatMap((g) => g.members.map((m) => m.resource)))];
  const markers = await batchGetItems(
    db,
    table,
    members.map((m) => keys.publicId(workspaceId, m)),
    { expression: `${attributes.sk}, kind, service_id` },
  );
  const seeds = new Set<string>();
  for (const m of markers) {
    if (m.kind === 'layer' && serviceIds.has(m.service_id as string)) {
      seeds.add(parseKey.publicId(m.SK as string));
    }
  }
  // Upward closure: a public id in the set pulls in every group that lists it.
  const closure = new Map<string, LayerGroup>();
  let frontier = seeds;
  while (frontier.size > 0) {
    const next = new Set<string>();
    for (const g of groups) {
      if (closure.has(g.id)) continue;
      if (g.members.some((m) => frontier.has(m.resource))) {
        closure.set(g.id, g);
        next.add(g.public_id);
      }
    }
    frontier = next;
  }
  return [...closure.values()];
}

/**
 * A service's layer tallies from its counters' `reading` (ADR 0101), or — for a service whose
 * counters have no base yet (older than them) — a walk over its layers, which then writes the
 * base when `recordBase` (deleteService's plans: a read-only route never writes), so the next plan
 * reads the counters. Exact either way.
 */
async function serviceTallies(
  db: StoreClient,
  table: string,
  workspaceId: string,
  serviceId: string,
  reading: CounterReading,
  recordBase: boolean,
): Promise<PlanTallies> {
  if (reading.exact) return reading.tallies;
  const truth = emptyTallies();
  await forEachPrefixPage(
    db,
    table,
    keys.workspacePartition(workspaceId),
    keys.layerPrefix(serviceId),
    (items) => {
      for (const l of items) tallyLayer(truth, l);
    },
    layerProjection,
  );
  if (recordBase) await writeBase(db, table, workspaceId, serviceId, reading, truth);
  return truth;
}

/** What a service without any counter item reads as: nothing counted, nothing written since. */
const NO_COUNTERS: CounterReading = { exact: false, counted: emptyTallies(), writes: new Map() };

/**
 * The first `PLAN_LIST_LIMIT` layers under `prefix` (a service's, or the workspace's), in key
 * order (one Query); with their service when `withService`.
 */
async function firstLayers(
  db: StoreClient,
  table: string,
  workspaceId: string,
  prefix: string,
  withService = false,
): Promise<PlanEntry[]> {
  const items = await queryPage(
    db,
    queryInput(table, keyCondition(keys.workspacePartition(workspaceId), prefixRange(prefix)), {
      consistent: true,
      limit: PLAN_LIST_LIMIT,
      projection: {
        expression: withService ? '#id, public_id, service_id' : '#id, public_id',
        names: { '#id': 'id' },
      },
    }),
  );
  return items.map((l) => ({
    id: l.id as string,
    public_id: l.public_id as string,
    ...(withService ? { service_id: l.service_id as string } : {}),
  }));
}

/** Custom-role or style references as the plan lists them: by name. */
function byName(tallies: Map<string, number>): [string, number][] {
  return [...tallies].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * The plan of a service's recursive deletion: its counts from the counters, its first layers from
 * one Query (ADR 0101), the dependent groups and (for a raster mosaic) its granule records as
 * before; the reads run side by side. No writes, but with `recordBase` the counters' base of an
 * older service.
 */
export async function planService(
  db: StoreClient,
  table: string,
  service: Service,
  recordBase = false,
): Promise<DeletionPlan> {
  const partition = keys.workspacePartition(service.workspace_id);
  let granules = 0;
  const [tallies, first, groups] = await Promise.all([
    readPlanCounters(db, table, service.workspace_id, service.id).then((reading) =>
      serviceTallies(db, table, service.workspace_id, service.id, reading, recordBase),
    ),
    firstLayers(db, table, service.workspace_id, keys.layerPrefix(service.id)),
    dependentGroupClosure(db, table, service.workspace_id, new Set([service.id])),
    // Only a raster mosaic holds granules (and a service's type never changes): no read for the rest.
    service.type === 'raster_mosaic'
      ? forEachPrefixPage(
          db,
          table,
          partition,
          keys.mosaicGranulePrefix(service.id),
          (items) => {
            granules += items.length;
          },
          { expression: attributes.sk },
        )
      : undefined,
  ]);
  const groupSection = new SectionBuilder();
  for (const g of groups) groupSection.add({ id: g.id, public_id: g.public_id });
  // The list and the count are two reads: a layer written between them may show in one only.
  const count = Math.max(tallies.layers, first.length);
  return {
    target: { scope: 'service', id: service.id, name: service.name, type: service.type },
    layers: { count, items: first, truncated: count > first.length },
    layer_groups: groupSection.build(),
    mosaic_granules: granules,
    style_references: byName(tallies.styles).map(([style, references]) => ({ style, references })),
    role_references: byName(tallies.roles).map(([role_id, references]) => ({ role_id, references })),
    total: count + groupSection.count + granules + 1,
  };
}

/** Entities a workspace deletion counts as catalog objects (the rest are markers and side items). */
export const countedWorkspaceEntities: Readonly<Record<string, string>> = {
  [entities.service]: 'services',
  [entities.layerGroup]: 'layer_groups',
  [entities.style]: 'styles',
  [entities.styleAsset]: 'style_assets',
  [entities.apiKey]: 'api_keys',
  [entities.claimMapping]: 'claim_mappings',
  [entities.settings]: 'settings',
  [entities.mosaicGranule]: 'mosaic_granules',
};

/** The key prefixes of the entities a workspace plan lists or counts, beside its layers. */
const WORKSPACE_PLAN_PREFIXES: readonly string[] = [
  keys.servicePrefix,
  keys.layerGroupPrefix,
  keys.stylePrefix,
  keys.styleAssetPrefix,
  keys.apiKeyPrefix,
  keys.claimMappingPrefix,
  keys.settingsPrefix,
  keys.mosaicGranulePrefixAll,
];

/** How many services without counters a workspace plan walks at once. */
const WALKS_AT_ONCE = 8;

/**
 * The plan of a workspace's recursive deletion. Its layers are counted by their services'
 * counters (one Query for them all; a walk only for a service older than its counters) and its
 * first layers are one Query, as in a service's plan (ADR 0101); the rest — services, groups,
 * styles, assets, keys, claim mappings, settings and granules — is read by their key ranges, side
 * by side. No layer and no public id marker is read, so the plan costs the same at 10 or 100,000
 * layers.
 */
export async function planWorkspace(
  db: StoreClient,
  table: string,
  workspace: Workspace,
): Promise<DeletionPlan> {
  const groups = new SectionBuilder();
  const roles = new Map<string, number>();
  const counts = new Map<string, number>();
  const services: { id: string; deleting: boolean }[] = [];
  const visit = (items: Record<string, unknown>[]) => {
    for (const i of items) {
      const entity = i.entity as string;
      if (entity === entities.service)
        services.push({ id: i.id as string, deleting: i.status === 'deleting' });
      else if (entity === entities.layerGroup)
        groups.add({ id: i.id as string, public_id: i.public_id as string });
      else if (entity === entities.claimMapping && i.custom_role) tally(roles, i.role_id as string);
      const kind = countedWorkspaceEntities[entity];
      if (kind && kind !== 'layer_groups') tally(counts, kind);
    }
  };
  const [first, counters] = await Promise.all([
    firstLayers(db, table, workspace.id, keys.layerPrefixAll, true),
    readWorkspacePlanCounters(db, table, workspace.id),
    ...WORKSPACE_PLAN_PREFIXES.map((prefix) =>
      forEachUnder(db, table, workspace.id, prefix, visit, workspaceItemProjection),
    ),
  ]);
  // A service being deleted loses its layers chunk by chunk while its counters stay until its
  // last step: its layers are walked (what is left of them), as are an older service's.
  const readingOf = (s: { id: string; deleting: boolean }) =>
    s.deleting ? NO_COUNTERS : (counters.get(s.id) ?? NO_COUNTERS);
  let layerCount = 0;
  for (let i = 0; i < services.length; i += WALKS_AT_ONCE) {
    const tallies = await Promise.all(
      services
        .slice(i, i + WALKS_AT_ONCE)
        .map((s) => serviceTallies(db, table, workspace.id, s.id, readingOf(s), false)),
    );
    for (const t of tallies) {
      layerCount += t.layers;
      for (const [role, n] of t.roles) tally(roles, role, n);
    }
  }
  // The list and the count are two reads: a layer written between them may show in one only.
  const count = Math.max(layerCount, first.length);
  const others = [...counts.values()].reduce((a, b) => a + b, 0);
  return {
    target: { scope: 'workspace', id: workspace.id, name: workspace.name },
    layers: { count, items: first, truncated: count > first.length },
    layer_groups: groups.build(),
    mosaic_granules: counts.get('mosaic_granules') ?? 0,
    style_references: [],
    role_references: byName(roles).map(([role_id, references]) => ({ role_id, references })),
    workspace_items: Object.fromEntries([...counts].filter(([k]) => k !== 'mosaic_granules')),
    total: count + groups.count + others + 1,
  };
}
