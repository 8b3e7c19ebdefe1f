import type { CatalogEventBus } from '#domain/catalog-events.ts';
import { catalogEventBus as configuredBus } from '#platform/event-bus.ts';

export { auditRecordOf, type ChangeStreamRecord } from '#store/change-stream.ts';

/** The catalog events' bus of this deployment (EventBridge; the local host's feed locally). */
export function catalogEventBus(): CatalogEventBus {
  return configuredBus();
}
