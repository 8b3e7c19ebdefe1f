import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { tableDefinition } from '#store/table.ts';

/**
 * The single table, created from the key schema in `shared/store/table.ts` (the same definition the
 * local bootstrap and the tests use). Retained on stack deletion: it is the catalog.
 */
export class CatalogTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      // The catalog events are read from the stream (ADR 0094).
      stream: StreamViewType[tableDefinition.streamViewType],
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const gsi of tableDefinition.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: { name: gsi.partitionKey, type: AttributeType.STRING },
        sortKey: { name: gsi.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
  }

  /** ARNs of the named indexes (no `index/*` wildcard: every index is a named access pattern). */
  get indexArns(): string[] {
    return tableDefinition.globalSecondaryIndexes.map(
      (gsi) => `${this.table.tableArn}/index/${gsi.indexName}`,
    );
  }
}
