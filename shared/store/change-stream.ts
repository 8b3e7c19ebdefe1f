import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AuditRecord } from '#domain/audit.ts';
import { readAuditRecord } from './audit-records.ts';
import { entities } from './keys.ts';

/** What the reader needs of one DynamoDB stream record (Lambda's event and DynamoDB Streams' API alike). */
export interface ChangeStreamRecord {
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, AttributeValue> | Record<string, unknown> };
}

/**
 * The audit record a stream record carries, if it is the insertion of one (ADR 0094): every
 * committed change of the catalog writes exactly one, in its own transaction; every other
 * record of the stream (the change's items, bookkeeping, expiries) is no event of its own.
 */
export function auditRecordOf(record: ChangeStreamRecord): AuditRecord | undefined {
  if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage) return undefined;
  const image = record.dynamodb.NewImage as Record<string, AttributeValue>;
  // Only audit records are read: any other item of the table (whatever it holds) is no event.
  if (image.entity?.S !== entities.auditRecord) return undefined;
  return readAuditRecord(unmarshall(image));
}

/** The stream filter of the same rule, for the event source mapping (only these records invoke the reader). */
export const auditInsertFilter = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { entity: { S: [entities.auditRecord] }, outcome: { S: ['succeeded'] } } },
};
