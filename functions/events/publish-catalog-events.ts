import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { publishCatalogEvents } from '#domain/catalog-events.ts';
import { errorFields, logger } from '#log/logger.ts';
import { auditRecordOf, catalogEventBus } from '#wiring/events.ts';

/**
 * The table's stream → EventBridge (ADR 0094): each audit record of a committed change becomes
 * its events, in stream order. A record that can't be published stops the batch there (it and
 * the rest are retried; bisected, then sent to the dead-letter queue by the event source mapping).
 */
export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const bus = catalogEventBus();
  for (const record of event.Records) {
    const audit = auditRecordOf(record);
    if (!audit) continue;
    try {
      await publishCatalogEvents(bus, [audit]);
    } catch (error) {
      logger.warn('catalog events not published; the stream retries from this record', {
        audit_id: audit.id,
        ...errorFields(error),
      });
      const failed = record.dynamodb?.SequenceNumber;
      return { batchItemFailures: failed ? [{ itemIdentifier: failed }] : [] };
    }
  }
  return { batchItemFailures: [] };
}
