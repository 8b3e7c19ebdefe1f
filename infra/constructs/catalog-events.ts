import { Duration, Validations } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { auditInsertFilter } from '#store/change-stream.ts';
import { ApiFunction } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';

/** Entry point of the stream reader, relative to the repository root. */
export const catalogEventsEntry = 'functions/events/publish-catalog-events.ts';

export interface CatalogEventsProps {
  table: CatalogTable;
  bundles: FunctionBundles;
  environment: Record<string, string>;
  logRetention: RetentionDays;
}

/**
 * Catalog-change events (ADR 0094): the table's stream → a reader function → an EventBridge bus of
 * GeoPlane's own. Only the insertions of audit records of committed changes invoke the reader (an
 * event source filter), one shard at a time in order; a record that keeps failing is bisected out
 * and its batch's description lands in the dead-letter queue (alarmed).
 */
export class CatalogEvents extends Construct {
  readonly bus: EventBus;
  readonly deadLetterQueue: Queue;
  readonly function: ApiFunction;

  constructor(scope: Construct, id: string, props: CatalogEventsProps) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', {
      description: 'GeoPlane catalog-change events (source geoplane; detail-type "<Entity> <Action>")',
    });
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is the dead-letter destination of the stream reader's event source mapping (its " +
        'failed batches land here and are alarmed); SQS does not know it as a redrive queue.',
    });
    this.function = new ApiFunction(this, 'Publisher', {
      entry: catalogEventsEntry,
      bundles: props.bundles,
      description: 'catalog events: reads the table stream, puts the events on EventBridge',
      table: props.table,
      // It reads only the stream (granted by the event source), never the table.
      data: [],
      environment: { ...props.environment, EVENT_BUS_NAME: this.bus.eventBusName },
      logRetention: props.logRetention,
      timeout: Duration.seconds(60),
      memorySize: 256,
    });
    this.bus.grantPutEventsTo(this.function.role);
    this.function.function.addEventSource(
      new DynamoEventSource(props.table.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        retryAttempts: 10,
        maxRecordAge: Duration.days(1),
        parallelizationFactor: 1,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.deadLetterQueue),
        filters: [FilterCriteria.filter(auditInsertFilter)],
      }),
    );
  }
}
