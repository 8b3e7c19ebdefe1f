/**
 * The catalog integrity check and its repair (ADR 0138): what the catalog's own rules say must
 * hold between its items, and — where putting it right narrows nothing anyone may do — how.
 * The store finds the damage (it knows the items); this module decides what is reported, what is
 * repaired and in which order, so a dry run and a repair are the same walk.
 */
import { RuleViolationError } from './errors.ts';
import type { Service } from './services.ts';
import { type TileStore, workspaceTilePrefix } from './tile-cache.ts';
import { requireWorkspace, type WorkspaceRepository } from './workspaces.ts';

/** The five kinds of damage the issue names. */
export type FindingKind =
  | 'dangling_reference'
  | 'orphaned_marker'
  | 'counter_mismatch'
  | 'missing_source_table'
  | 'orphaned_import_schema';

/** Each check, by what it compares (a stable code). */
export type CheckCode =
  /** A workspace's name marker is missing or names another workspace. */
  | 'workspace_name_marker'
  /** A service name marker names no service of that name. */
  | 'service_name_marker'
  /** A public id marker names no layer or group. */
  | 'public_id_marker'
  /** A claim mapping's uniqueness marker names no mapping. */
  | 'claim_mapping_marker'
  /** A layer of a service that doesn't exist. */
  | 'layer_service'
  /** A layer drawn with a style that doesn't exist. */
  | 'layer_style'
  /** A layer whose `allowed_roles` names a custom role that doesn't exist (or is retired). */
  | 'layer_role'
  /** A claim mapping to a custom role that doesn't exist (or is retired). */
  | 'claim_mapping_role'
  /** A layer group listing a member that doesn't exist. */
  | 'group_member'
  /** The workspace summary's counters (ADR 0137) against its items. */
  | 'summary_counters'
  /** A service's deletion-plan layer count (ADR 0101) against its layers. */
  | 'service_layer_count'
  /** A style's count of the layers drawn with it. */
  | 'style_layer_refs'
  /** The workspace's count of its claim mappings. */
  | 'claim_mapping_count'
  /** A custom role's count of the mappings and layers naming it. */
  | 'role_refs'
  /** A workspace's tile cache usage (entries, bytes; ADR 0139) against the tiles its store holds. */
  | 'tile_cache_usage'
  /** An enabled layer whose source table is gone from its database. */
  | 'layer_source'
  /** An import schema in the import database without its import job. */
  | 'import_schema';

/** The kind of each check. */
export const KIND_OF: Readonly<Record<CheckCode, FindingKind>> = {
  workspace_name_marker: 'dangling_reference',
  service_name_marker: 'orphaned_marker',
  public_id_marker: 'orphaned_marker',
  claim_mapping_marker: 'orphaned_marker',
  layer_service: 'dangling_reference',
  layer_style: 'dangling_reference',
  layer_role: 'dangling_reference',
  claim_mapping_role: 'dangling_reference',
  group_member: 'dangling_reference',
  summary_counters: 'counter_mismatch',
  service_layer_count: 'counter_mismatch',
  style_layer_refs: 'counter_mismatch',
  claim_mapping_count: 'counter_mismatch',
  role_refs: 'counter_mismatch',
  tile_cache_usage: 'counter_mismatch',
  layer_source: 'missing_source_table',
  import_schema: 'orphaned_import_schema',
};

/**
 * Checks whose damage is only reported: each repair would change who may read or sign in as what
 * (a role taken out of `allowed_roles` can widen a layer's readers; a mapping deleted changes a
 * sign-in), or which layers a group draws — an operator's decision, not a repair's.
 */
export const REPORT_ONLY: ReadonlySet<CheckCode> = new Set([
  'layer_role',
  'claim_mapping_role',
  'group_member',
]);

/** One piece of damage as the API answers it. */
export interface Finding {
  /** Stable for the same damage across checks (a digest of check, workspace and entity). */
  id: string;
  kind: FindingKind;
  check: CheckCode;
  workspace_id?: string;
  /** The item the damage is on: its type as the API names it and its id. */
  entity: { type: string; id: string; parent_id?: string };
  /** What is wrong, in words (names and numbers, never a secret). */
  detail: string;
  /** What the repair does, or why it leaves it alone. */
  repair: string;
  repairable: boolean;
}

/** A finding with the store's fix, when it has one (never answered). */
export interface FoundDamage extends Finding {
  /** Applies the repair under the condition that the damage is still as found; false when it changed meanwhile. */
  fix?: () => Promise<boolean>;
}

/** What a check could not look at, and why (an unreachable database, a disabled service…). */
export interface Unchecked {
  /** The check that could not run (absent: none of a workspace's ran). */
  check?: CheckCode;
  workspace_id?: string;
  entity?: { type: string; id: string };
  reason: string;
}

/** What getCatalogIntegrity answers. */
export interface IntegrityReport {
  checked_at: string;
  /** The workspace checked, or absent for the whole catalog. */
  workspace_id?: string;
  /** False when the time budget ran out before every workspace was read (see `unchecked`). */
  complete: boolean;
  counts: { workspaces: number; items: number; layers_probed: number; import_schemas: number };
  findings: Finding[];
  unchecked: Unchecked[];
}

/** One repair's outcome. */
export interface RepairOutcome {
  finding_id: string;
  check: CheckCode;
  outcome: 'repaired' | 'would_repair' | 'changed_meanwhile' | 'not_repairable' | 'failed';
  detail?: string;
}

/** What repairCatalogIntegrity answers. */
export interface RepairReport {
  dry_run: boolean;
  /** The check the repairs were made from. */
  report: IntegrityReport;
  repairs: RepairOutcome[];
}

/** Port: the source tables of a service's layers (its database, read-only). */
export interface SourceTables {
  /**
   * Of `sourceLayers`, the ones no relation of the service's schemas answers to. Throws
   * UnavailableError when the database can't be reached, a RuleViolationError when it refuses.
   */
  missing(service: Service, sourceLayers: string[]): Promise<string[]>;
}

/** Port: the import database's schemas (ADR 0085). */
export interface ImportSchemas {
  /** Every import schema (`import_<hex>`, `import_staging_<hex>`) with the import id it belongs to. */
  list(): Promise<{ schema: string; importId: string }[]>;
  /** Drops an import's schemas and its reader login (idempotent). */
  drop(importId: string): Promise<void>;
}

/** A workspace's tile cache usage: tiles stored and their bytes (every generation and layer). */
export interface TileUsage {
  entries: number;
  bytes: number;
}

/** Tiles listed per page when the usage is counted. */
const TILE_LISTING_PAGE = 1000;

/**
 * What the tile store holds under a workspace — the truth its `TILECACHE` usage should say (ADR
 * 0139) — or undefined when the listing did not finish by `deadline` (epoch ms).
 */
export async function storedTileUsage(
  store: Pick<TileStore, 'list'>,
  workspaceId: string,
  deadline: number,
  now: () => number = Date.now,
): Promise<TileUsage | undefined> {
  const usage: TileUsage = { entries: 0, bytes: 0 };
  let after: string | undefined;
  do {
    if (now() > deadline) return undefined;
    const page = await store.list(workspaceTilePrefix(workspaceId), after, TILE_LISTING_PAGE);
    for (const t of page.tiles) {
      usage.entries++;
      usage.bytes += t.bytes;
    }
    after = page.next;
  } while (after !== undefined);
  return usage;
}

/** What the check reads the catalog through (the store, the data sources, the import database). */
export interface IntegrityInspector {
  /**
   * Walks the catalog (one workspace, or all of them) until `deadline` (epoch ms) and finds the
   * damage, each repairable one with its fix.
   */
  inspect(scope: { workspaceId?: string; check?: CheckCode; deadline: number }): Promise<{
    complete: boolean;
    counts: IntegrityReport['counts'];
    damage: FoundDamage[];
    unchecked: Unchecked[];
  }>;
}

/** How long a check may walk (a request's budget, under API Gateway's 29 s). */
export const CHECK_BUDGET_MS = 20_000;

/** Findings in a stable order: by kind, check, workspace, entity. */
function ordered<T extends Finding>(findings: T[]): T[] {
  return [...findings].sort(
    (a, b) =>
      a.kind.localeCompare(b.kind) ||
      a.check.localeCompare(b.check) ||
      (a.workspace_id ?? '').localeCompare(b.workspace_id ?? '') ||
      a.entity.id.localeCompare(b.entity.id),
  );
}

function present(d: FoundDamage): Finding {
  const { fix: _fix, ...finding } = d;
  return finding;
}

/** What the check and the repair need. */
export interface IntegrityDeps {
  inspector: IntegrityInspector;
  workspaces: WorkspaceRepository;
  now?: () => Date;
}

/** The workspace a check is narrowed to (`?workspace=`, its id or name), or the whole catalog. */
async function scopeOf(
  deps: IntegrityDeps,
  command: { workspace?: string; check?: CheckCode },
): Promise<{ workspaceId?: string; check?: CheckCode }> {
  return {
    ...(command.workspace
      ? { workspaceId: (await requireWorkspace(deps.workspaces, command.workspace)).id }
      : {}),
    ...(command.check ? { check: command.check } : {}),
  };
}

/** getCatalogIntegrity: the damage found, nothing changed. */
export async function checkCatalog(
  deps: IntegrityDeps,
  command: { workspace?: string; check?: CheckCode },
): Promise<IntegrityReport> {
  return (await walk(deps, await scopeOf(deps, command))).report;
}

async function walk(
  deps: IntegrityDeps,
  command: { workspaceId?: string; check?: CheckCode },
): Promise<{ report: IntegrityReport; damage: FoundDamage[] }> {
  const now = (deps.now ?? (() => new Date()))();
  const found = await deps.inspector.inspect({
    ...(command.workspaceId ? { workspaceId: command.workspaceId } : {}),
    ...(command.check ? { check: command.check } : {}),
    deadline: now.getTime() + CHECK_BUDGET_MS,
  });
  // `check` narrows what is reported (and so repaired); the walk reads the same items.
  const damage = ordered(found.damage.filter((d) => !command.check || d.check === command.check));
  return {
    damage,
    report: {
      checked_at: now.toISOString(),
      ...(command.workspaceId ? { workspace_id: command.workspaceId } : {}),
      complete: found.complete,
      counts: found.counts,
      findings: damage.map(present),
      unchecked: found.unchecked.filter((u) => !command.check || !u.check || u.check === command.check),
    },
  };
}

/**
 * repairCatalogIntegrity: checks, then (with `confirm`) repairs every repairable finding, each
 * under the condition that it is still as found; without `confirm` a dry run that says what would
 * be repaired. References and markers go first; their repairs move counts (a layer of a missing
 * service removed), so when any was made the catalog is checked again and the counters are
 * repaired from that second walk — never from numbers the first repairs made stale.
 */
export async function repairCatalog(
  deps: IntegrityDeps,
  command: { workspace?: string; check?: CheckCode; confirm: boolean },
): Promise<RepairReport> {
  const scope = await scopeOf(deps, command);
  const first = await walk(deps, scope);
  const { report } = first;
  if (command.confirm && !report.complete) {
    // A repair from a partial walk could miss references it needs (a role's count sums every workspace).
    throw new RuleViolationError(
      'integrity_check_incomplete',
      'The check did not finish within its time budget; repair one workspace at a time (?workspace=).',
    );
  }
  const isCounter = (d: FoundDamage) => d.kind === 'counter_mismatch';
  const repairs: RepairOutcome[] = [];
  const attempt = async (d: FoundDamage) => {
    if (!d.repairable || !d.fix) {
      repairs.push({ finding_id: d.id, check: d.check, outcome: 'not_repairable', detail: d.repair });
      return false;
    }
    if (!command.confirm) {
      repairs.push({ finding_id: d.id, check: d.check, outcome: 'would_repair', detail: d.repair });
      return false;
    }
    try {
      const done = await d.fix();
      repairs.push({
        finding_id: d.id,
        check: d.check,
        outcome: done ? 'repaired' : 'changed_meanwhile',
        ...(done ? {} : { detail: 'The item changed after the check; check again.' }),
      });
      return done;
    } catch (error) {
      repairs.push({
        finding_id: d.id,
        check: d.check,
        outcome: 'failed',
        detail: error instanceof RuleViolationError ? error.message : 'The repair failed; check again.',
      });
      return false;
    }
  };
  let repaired = false;
  for (const d of first.damage.filter((x) => !isCounter(x))) repaired = (await attempt(d)) || repaired;
  const counters = repaired ? (await walk(deps, scope)).damage : first.damage;
  for (const d of counters.filter(isCounter)) await attempt(d);
  return { dry_run: !command.confirm, report, repairs };
}
