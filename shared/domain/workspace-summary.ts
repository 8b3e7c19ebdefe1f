/**
 * The workspace summary (ADR 0137): how many services, layers by state, styles, imports by
 * status, API keys and claim mappings a workspace has — read from counters the writes keep, not
 * from a walk of the workspace.
 */
import { apiKeyExpiry } from './expiry.ts';
import { IMPORT_STATUSES, type ImportStatus } from './import-model.ts';

/** A counted quantity (the names of the counters' attributes). */
export type SummaryField =
  | 'services'
  | 'layers_enabled'
  | 'layers_disabled'
  | 'styles'
  | 'api_keys_active'
  | 'api_keys_revoked'
  | 'claim_mappings'
  /** Keys whose record the table's TTL removes (ADR 0093), by the UTC day it is due (epoch days). */
  | `api_keys_active_d${number}`
  | `api_keys_revoked_d${number}`
  | `imports_${ImportStatus}`;

/** Every counted field, in the order the summary lists them. */
export const SUMMARY_FIELDS: readonly SummaryField[] = [
  'services',
  'layers_enabled',
  'layers_disabled',
  'styles',
  'api_keys_active',
  'api_keys_revoked',
  'claim_mappings',
  ...IMPORT_STATUSES.map((s) => `imports_${s}` as const),
];

const FIXED = new Set<string>(SUMMARY_FIELDS);
const DATED = /^api_keys_(active|revoked)_d(\d{1,7})$/;

/** True for the name of a counted field (a counter item's other attributes are bookkeeping). */
export function isSummaryField(name: string): name is SummaryField {
  return FIXED.has(name) || DATED.test(name);
}

/** Counts by field (absent: zero). */
export type SummaryCounts = Partial<Record<SummaryField, number>>;

/** What getWorkspaceSummary answers. */
export interface WorkspaceSummary {
  workspace_id: string;
  services: number;
  layers: { total: number; enabled: number; disabled: number };
  styles: number;
  imports: { total: number; by_status: Record<ImportStatus, number> };
  api_keys: { total: number; active: number; revoked: number };
  claim_mappings: number;
}

/** The kinds of entities the summary counts. */
export type CountedKind = 'service' | 'layer' | 'style' | 'api_key' | 'claim_mapping' | 'import';

/** The counts one entity adds, by its kind and state (a layer's `enabled`, a key's `revoked`, an import's `status`). */
export function countsOf(kind: CountedKind, item: Record<string, unknown>): SummaryCounts {
  switch (kind) {
    case 'service':
      return { services: 1 };
    case 'layer':
      return item.enabled === false ? { layers_disabled: 1 } : { layers_enabled: 1 };
    case 'style':
      return { styles: 1 };
    case 'api_key': {
      // A key whose record the table removes when its retention ends counts under that day, so the
      // summary stops counting it then — removals by TTL write nothing a counter could follow.
      const state = item.revoked === true ? 'revoked' : 'active';
      const expiry = apiKeyExpiry(item as { expires_at?: string });
      if (!expiry) return { [`api_keys_${state}`]: 1 };
      return { [`api_keys_${state}_d${Math.floor(expiry.record / DAY)}`]: 1 };
    }
    case 'claim_mapping':
      return { claim_mappings: 1 };
    case 'import':
      return IMPORT_STATUSES.includes(item.status as ImportStatus)
        ? { [`imports_${item.status as ImportStatus}`]: 1 }
        : {};
  }
}

/** `a + sign × b`, field by field, without the zeros. */
export function addCounts(a: SummaryCounts, b: SummaryCounts, sign = 1): SummaryCounts {
  const out: SummaryCounts = { ...a };
  for (const [field, n] of Object.entries(b) as [SummaryField, number][]) {
    const sum = (out[field] ?? 0) + sign * n;
    if (sum === 0) delete out[field];
    else out[field] = sum;
  }
  return out;
}

/** What replacing `before` by `after` changes (absent: created or deleted). */
export function countChange(
  kind: CountedKind,
  before: object | undefined,
  after: object | undefined,
): SummaryCounts {
  const of = (x: object | undefined) => (x ? countsOf(kind, x as Record<string, unknown>) : {});
  return addCounts(of(after), of(before), -1);
}

const DAY = 86_400;

/**
 * Counts as of `now`: a dated key count still counts before its day begins, and is folded into
 * its state's count; from that day on it counts no more (the record is due for removal).
 */
export function countsAt(counts: SummaryCounts, now: Date): SummaryCounts {
  const today = Math.floor(now.getTime() / 1000 / DAY);
  const out: SummaryCounts = {};
  for (const [field, value] of Object.entries(counts) as [SummaryField, number][]) {
    const dated = DATED.exec(field);
    if (!dated) out[field] = (out[field] ?? 0) + value;
    else if (Number(dated[2]) > today) {
      const state = `api_keys_${dated[1]}` as SummaryField;
      out[state] = (out[state] ?? 0) + value;
    }
  }
  return out;
}

/** The summary of a workspace from its stored counts, as of `now`. */
export function summaryOf(workspaceId: string, stored: SummaryCounts, now: Date): WorkspaceSummary {
  const counts = countsAt(stored, now);
  const n = (f: SummaryField) => Math.max(0, counts[f] ?? 0);
  const byStatus = Object.fromEntries(IMPORT_STATUSES.map((s) => [s, n(`imports_${s}`)])) as Record<
    ImportStatus,
    number
  >;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    workspace_id: workspaceId,
    services: n('services'),
    layers: {
      total: n('layers_enabled') + n('layers_disabled'),
      enabled: n('layers_enabled'),
      disabled: n('layers_disabled'),
    },
    styles: n('styles'),
    imports: { total: sum(Object.values(byStatus)), by_status: byStatus },
    api_keys: {
      total: n('api_keys_active') + n('api_keys_revoked'),
      active: n('api_keys_active'),
      revoked: n('api_keys_revoked'),
    },
    claim_mappings: n('claim_mappings'),
  };
}

/** What getWorkspaceSummary needs. */
export interface SummaryDeps {
  /** The workspace repository's counters (WorkspaceRepository.summaryCounts). */
  workspaces: { summaryCounts(workspaceId: string): Promise<SummaryCounts> };
  now?: () => Date;
}

/** getWorkspaceSummary: the workspace's counts, from its counters (one Query). */
export async function workspaceSummary(
  deps: SummaryDeps,
  command: { workspace: { id: string } },
): Promise<WorkspaceSummary> {
  const counts = await deps.workspaces.summaryCounts(command.workspace.id);
  return summaryOf(command.workspace.id, counts, (deps.now ?? (() => new Date()))());
}
