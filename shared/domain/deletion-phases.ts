/**
 * The deletion workflow as phase specs on the chunked-workflow engine (ADR 0070, ADR 0080): the
 * phase order of each scope, what one chunk of each phase reads and which references it releases,
 * and the rounds that remove the dependent layer groups. The store implements the port below.
 */
import {
  type ChunkedWorkflow,
  type ChunkPort,
  type ChunkSpec,
  chunkedPhase,
  finalPhase,
  type OperationLedger,
  type PhaseSpec,
  roundsPhase,
} from './chunked-workflow.ts';
import type { DeletionOperation, DeletionPhase } from './deletion-model.ts';
import type { LayerGroup } from './layer-groups.ts';
import { customRoles, usedStyles } from './layers.ts';
import { customTileMatrixSets, type OGCTilesSettings } from './settings.ts';
import type { WorkflowLog } from './workflow-log.ts';
import { TransientError } from './workflows.ts';
import { type CountedKind, countsOf, type SummaryField } from './workspace-summary.ts';

export const servicePhases: readonly DeletionPhase[] = [
  'layer_groups',
  'layers',
  'mosaic',
  'mosaic_jobs',
  'target',
  'done',
];
export const workspacePhases: readonly DeletionPhase[] = [
  'layers',
  'api_keys',
  'claim_mappings',
  'settings',
  'workspace_items',
  'target',
  'done',
];

/** Layers per checkpoint of a service deletion (ADR 0070). */
export const LAYER_CHUNK = 1000;

/** An operation as the workflow reads it (with its checkpoint). */
export type DeletionRun = DeletionOperation & { checkpoint_from?: string; checkpoint_to?: string };

/** An item as the store returns it (its attributes). */
export type StoredItem = Record<string, unknown>;

/** A reference a removed item held: its count drops by one per item (a tile matrix set's: once). */
export type Reference =
  | { key: string; size: 1; kind: 'style'; style: string }
  | { key: string; size: 1; kind: 'role'; roleId: string }
  /** The workspace summary's count of the removed item's kind and state (ADR 0137). */
  | { key: string; size: 1; kind: 'summary'; field: SummaryField }
  /** The set's `ref_count` and the workspace's reference item: two write items. */
  | { key: string; size: 2; kind: 'tile_matrix_set'; id: string };

/** The kinds of items a chunked phase removes. */
export type DeletionCollection =
  | 'service_layers'
  | 'workspace_layers'
  | 'mosaic_granules'
  | 'mosaic_harvest_jobs'
  | 'api_keys'
  | 'claim_mappings'
  | 'settings'
  | 'workspace_items';

/** Port: the deletion workflow's store. */
export interface DeletionWorkflowStore extends OperationLedger<DeletionRun> {
  /** Reads, commits and removes the items of one collection of the operation's target. */
  collection(op: DeletionRun, which: DeletionCollection): ChunkPort<DeletionRun, StoredItem, Reference>;
  /** The plan kind an item counts as (`services`, `api_keys`, …), undefined for markers and side items. */
  catalogKind(item: StoredItem): string | undefined;
  /** The workspace item itself (it goes in the target phase). */
  isWorkspaceItem(item: StoredItem): boolean;
  /** The groups that must go with the service (the closure of groups listing its layers). */
  dependentGroups(op: DeletionRun): Promise<LayerGroup[]>;
  /** Deletes one group with its releases and one step of progress; false when it changed meanwhile. */
  removeGroup(op: DeletionRun, group: LayerGroup): Promise<boolean>;
  /** Deletes the target and completes the operation in one transaction. */
  removeTarget(op: DeletionRun): Promise<void>;
}

const style = (s: string): Reference => ({ key: `style:${s}`, size: 1, kind: 'style', style: s });
const role = (r: string): Reference => ({ key: `role:${r}`, size: 1, kind: 'role', roleId: r });
const roles = (item: StoredItem) => customRoles((item.allowed_roles as string[] | undefined) ?? []).map(role);

/** The summary counts an item of `kind` held (one reference per counted field). */
const summaryCounts = (kind: CountedKind, item: StoredItem): Reference[] =>
  Object.keys(countsOf(kind, item)).map((field) => ({
    key: `summary:${field}`,
    size: 1,
    kind: 'summary',
    field: field as SummaryField,
  }));

/** A service's layer releases its styles' layer references, its custom roles and its summary count. */
export function serviceLayerReleases(layer: StoredItem): Reference[] {
  return [...usedStyles(layer as never).map(style), ...roles(layer), ...summaryCounts('layer', layer)];
}

/** A workspace's layers release their custom roles (the styles go with the workspace). */
export const workspaceLayerReleases = roles;

/** A claim mapping to a custom role releases that role. */
export function claimMappingReleases(mapping: StoredItem): Reference[] {
  return mapping.custom_role ? [role(mapping.role_id as string)] : [];
}

/** Tiles settings release the tile matrix sets they name, as saving other settings would. */
export function settingsReleases(settings: StoredItem): Reference[] {
  if (settings.kind !== 'ogc-tiles') return [];
  return customTileMatrixSets(settings.document as OGCTilesSettings).map((id) => ({
    key: `tms:${id}`,
    size: 2,
    kind: 'tile_matrix_set',
    id,
  }));
}

/** The groups of a closure that no other group of it lists (they can go first). */
export function outermostGroups(closure: LayerGroup[]): LayerGroup[] {
  const listed = new Set(closure.flatMap((g) => g.members.map((m) => m.resource)));
  return closure.filter((g) => !listed.has(g.public_id));
}

/** Kinds the workspace sweep doesn't count: their own phases did. */
const countedInTheirPhase = ['api_keys', 'claim_mappings', 'settings'];

type Chunks = ChunkSpec<StoredItem, Reference> & { collection: DeletionCollection };

/** What one chunk of each chunked phase reads and releases. */
function chunks(op: DeletionRun, store: DeletionWorkflowStore): Chunks | undefined {
  const all = () => true;
  switch (op.phase) {
    case 'layers':
      return op.scope === 'service'
        ? { collection: 'service_layers', chunk: LAYER_CHUNK, counted: all, releases: serviceLayerReleases }
        : { collection: 'workspace_layers', chunk: 500, counted: all, releases: workspaceLayerReleases };
    case 'mosaic':
      return { collection: 'mosaic_granules', chunk: 500, counted: all };
    case 'mosaic_jobs':
      // Side items, as in a workspace's sweep: not in the plan, so not counted (ADR 0136).
      return { collection: 'mosaic_harvest_jobs', chunk: 500, counted: () => false };
    case 'api_keys':
      return { collection: 'api_keys', chunk: 200, counted: all };
    case 'claim_mappings':
      return { collection: 'claim_mappings', chunk: 200, counted: all, releases: claimMappingReleases };
    case 'settings':
      return { collection: 'settings', chunk: 10, counted: all, releases: settingsReleases };
    case 'workspace_items':
      return {
        collection: 'workspace_items',
        chunk: 1000,
        counted: (i) => {
          const kind = store.catalogKind(i);
          return kind !== undefined && !countedInTheirPhase.includes(kind);
        },
        skip: (i) => store.isWorkspaceItem(i),
      };
    default:
      return undefined;
  }
}

/** Removes the dependent groups, outermost first, round by round (the closure is read again each round). */
function groupRounds(store: DeletionWorkflowStore): PhaseSpec<DeletionRun> {
  return roundsPhase(async (op) => {
    const closure = await store.dependentGroups(op);
    if (closure.length === 0) return 'finished';
    let removed = 0;
    for (const g of outermostGroups(closure)) if (await store.removeGroup(op, g)) removed++;
    if (removed === 0) throw new TransientError('The dependent layer groups changed meanwhile; retrying.');
    return 'more';
  });
}

/** The deletion workflow on the engine. */
export function deletionWorkflow(
  store: DeletionWorkflowStore,
  log?: WorkflowLog,
): ChunkedWorkflow<DeletionRun> {
  return {
    label: 'Deletion',
    kind: 'deletion',
    log,
    ledger: store,
    done: 'done',
    next(op) {
      const phases = op.scope === 'service' ? servicePhases : workspacePhases;
      return phases[phases.indexOf(op.phase) + 1] ?? 'done';
    },
    phase(op) {
      if (op.phase === 'layer_groups') return groupRounds(store);
      if (op.phase === 'target') return finalPhase((o) => store.removeTarget(o));
      const spec = chunks(op, store);
      if (!spec) throw new Error(`Deletion ${op.id} has no phase '${op.phase}'.`);
      return chunkedPhase(spec, (o) => store.collection(o, spec.collection));
    },
  };
}
