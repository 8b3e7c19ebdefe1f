import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { config, eventBusName } from '#config/env.ts';
import type { CatalogEvent, CatalogEventBus } from '#domain/catalog-events.ts';
import { logger } from '#log/logger.ts';
import { awsClient } from '#telemetry/aws-clients.ts';

/** PutEvents takes at most 10 entries per call. */
const ENTRIES_PER_CALL = 10;
/** Rounds of re-sending the entries EventBridge failed (throttling, internal errors) before giving up. */
const ROUNDS = 4;

let client: EventBridgeClient | undefined;
function eventBridge(): EventBridgeClient {
  client ??= awsClient(new EventBridgeClient({ region: config().AWS_REGION, maxAttempts: 3 }));
  return client;
}

function entryOf(event: CatalogEvent, bus: string): PutEventsRequestEntry {
  return {
    EventBusName: bus,
    Source: event.source,
    DetailType: event.detailType,
    Detail: JSON.stringify(event.detail),
    Time: new Date(event.detail.at),
  };
}

/** The catalog events on EventBridge (ADR 0094): ten per call, in order, failed entries sent again. */
class EventBridgeBus implements CatalogEventBus {
  constructor(private readonly bus: string) {}

  async publish(events: CatalogEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += ENTRIES_PER_CALL) {
      let pending = events.slice(i, i + ENTRIES_PER_CALL).map((e) => entryOf(e, this.bus));
      for (let round = 0; pending.length > 0; round++) {
        if (round === ROUNDS) {
          throw new Error(`EventBridge refused ${pending.length} catalog event(s) after ${ROUNDS} rounds`);
        }
        const out = await eventBridge().send(new PutEventsCommand({ Entries: pending }));
        if (!out.FailedEntryCount) break;
        const failed = pending.filter((_, index) => out.Entries?.[index]?.ErrorCode);
        logger.warn('catalog events refused by EventBridge; sending again', {
          count: failed.length,
          error_code: out.Entries?.find((e) => e.ErrorCode)?.ErrorCode,
        });
        pending = failed;
      }
    }
  }
}

let bus: CatalogEventBus | undefined;

/** Where this deployment's catalog events go: its EventBridge bus (`EVENT_BUS_NAME`), or an installed one. */
export function catalogEventBus(): CatalogEventBus {
  bus ??= new EventBridgeBus(eventBusName());
  return bus;
}

/** The local host's own bus (its event feed) in place of EventBridge. */
export function installCatalogEventBus(local: CatalogEventBus): void {
  bus = local;
}
