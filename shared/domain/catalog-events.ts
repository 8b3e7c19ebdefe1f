import type { AuditChange, AuditPrincipal, AuditRecord } from './audit.ts';

/*
 * Catalog-change events (ADR 0094): one per entity a committed change touched, read from the
 * change's audit record on the table's stream — never written beside the change — so an event
 * exists exactly when its change committed. JSON Schemas: docs/events/.
 */

/** Every event's `source`. */
export const EVENT_SOURCE = 'geoplane';

/** The `detail` of a catalog event. */
export interface CatalogEventDetail {
  /** Unique per event and stable across redeliveries (`<audit record id>:<index>`): consumers dedupe on it. */
  event_id: string;
  /** The audit record the event was read from. */
  audit_id: string;
  at: string;
  /** The entity's type: `workspace`, `layer`, `api_key`, … */
  type: string;
  id: string;
  parent_id?: string;
  workspace_id?: string;
  action: AuditChange['action'];
  /** The entity's version after the change (absent for deletions and unversioned entities). */
  version?: number;
  status?: string;
  principal: AuditPrincipal;
  operation: string;
  request_id: string;
}

/** An event as it goes on the bus. */
export interface CatalogEvent {
  source: typeof EVENT_SOURCE;
  /** `<Entity> <Action>`, e.g. `Layer Created`, `API Key Deleted`, `Import Status Changed`. */
  detailType: string;
  detail: CatalogEventDetail;
}

/** The entity part of each `detail-type`, by type. */
export const EVENT_ENTITIES: Readonly<Record<string, string>> = {
  workspace: 'Workspace',
  service: 'Service',
  layer: 'Layer',
  layer_group: 'Layer Group',
  style: 'Style',
  style_asset: 'Style Asset',
  settings: 'Settings',
  tile_matrix_set: 'Tile Matrix Set',
  api_key: 'API Key',
  role: 'Role',
  role_policy: 'Role Policy',
  claim_mapping: 'Claim Mapping',
  mosaic: 'Mosaic',
  mosaic_harvest_job: 'Mosaic Harvest Job',
  tile_cache: 'Tile Cache',
  tile_cache_job: 'Tile Cache Job',
  cache: 'Cache',
  deletion: 'Deletion',
  import: 'Import',
  integrity_repair: 'Integrity Repair',
  browser_session: 'Browser Session',
};

/** Entities whose updates are status changes (their other writes are progress, never events). */
const STATUS_ENTITIES = new Set(['deletion', 'import', 'mosaic_harvest_job', 'tile_cache_job']);

/** The action part of a `detail-type`. */
export function eventAction(type: string, action: AuditChange['action']): string {
  if (action === 'updated' && STATUS_ENTITIES.has(type)) return 'Status Changed';
  return { created: 'Created', updated: 'Updated', deleted: 'Deleted' }[action];
}

/** The events of one audit record: one per change of a committed change, none for a refused request. */
export function catalogEventsOf(record: AuditRecord): CatalogEvent[] {
  if (record.outcome !== 'succeeded') return [];
  return record.changes.map((change, index) => ({
    source: EVENT_SOURCE,
    detailType: `${EVENT_ENTITIES[change.type] ?? change.type} ${eventAction(change.type, change.action)}`,
    detail: {
      event_id: `${record.id}:${index}`,
      audit_id: record.id,
      at: record.at,
      type: change.type,
      id: change.id,
      ...(change.parent_id ? { parent_id: change.parent_id } : {}),
      ...((change.workspace_id ?? record.workspace_id)
        ? { workspace_id: change.workspace_id ?? record.workspace_id }
        : {}),
      action: change.action,
      ...(change.version !== undefined ? { version: change.version } : {}),
      ...(change.status !== undefined ? { status: change.status } : {}),
      principal: record.principal,
      operation: record.operation,
      request_id: record.request_id,
    },
  }));
}

/** Port: where catalog events go (EventBridge on AWS, the local host's feed). */
export interface CatalogEventBus {
  /** Publishes the events in order; throws when any could not be delivered (the caller retries). */
  publish(events: CatalogEvent[]): Promise<void>;
}

/** Publishes the events of the records of a stream batch, in order. */
export async function publishCatalogEvents(bus: CatalogEventBus, records: AuditRecord[]): Promise<number> {
  const events = records.flatMap(catalogEventsOf);
  if (events.length > 0) await bus.publish(events);
  return events.length;
}
