/**
 * The single table's key schema, as data. CDK, the local bootstrap and the tests all create the
 * table from this definition.
 */
export const tableDefinition = {
  partitionKey: 'PK',
  sortKey: 'SK',
  timeToLiveAttribute: 'expires_at_epoch',
  /** The change stream the catalog events are read from (ADR 0094): new images are enough. */
  streamViewType: 'NEW_IMAGE',
  globalSecondaryIndexes: [
    {
      /** Named access patterns: list workspaces by name. */
      indexName: 'GSI1',
      partitionKey: 'GSI1PK',
      sortKey: 'GSI1SK',
    },
    {
      /**
       * Sparse: only deletions still pending or running carry `GSI2PK` (ADR 0113), so the sweep
       * reads the active ones, never the whole history (GSI1 already lists every deletion).
       */
      indexName: 'GSI2',
      partitionKey: 'GSI2PK',
      sortKey: 'GSI2SK',
    },
  ],
} as const;

/** The input of `CreateTable` for the definition above (on-demand billing). */
export function createTableInput(tableName: string) {
  const attrs = new Set<string>([tableDefinition.partitionKey, tableDefinition.sortKey]);
  for (const gsi of tableDefinition.globalSecondaryIndexes) {
    attrs.add(gsi.partitionKey);
    attrs.add(gsi.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamViewType },
    AttributeDefinitions: [...attrs].map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((gsi) => ({
      IndexName: gsi.indexName,
      KeySchema: [
        { AttributeName: gsi.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: gsi.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}

const [gsi1Definition, gsi2Definition] = tableDefinition.globalSecondaryIndexes;

/** The key attributes' names, for expressions (never spelled out elsewhere). */
export const attributes = {
  pk: tableDefinition.partitionKey,
  sk: tableDefinition.sortKey,
  gsi1pk: gsi1Definition.partitionKey,
  gsi1sk: gsi1Definition.sortKey,
  gsi2pk: gsi2Definition.partitionKey,
  gsi2sk: gsi2Definition.sortKey,
} as const;

/** Every key attribute of the table and its indexes (what a stored item carries beside the entity's fields). */
export const keyAttributes: readonly string[] = Object.values(attributes);

/** The index of the named listings. */
export const gsi1 = gsi1Definition.indexName;

/** The sparse index of active deletions (ADR 0113). */
export const gsi2 = gsi2Definition.indexName;

/** Conditions on an item's existence (its partition key is present exactly when the item exists). */
export const itemExists = `attribute_exists(${attributes.pk})`;
export const itemAbsent = `attribute_not_exists(${attributes.pk})`;
