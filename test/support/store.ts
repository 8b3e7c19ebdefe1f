import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import type { Layer } from '#domain/layers.ts';
import type { Service } from '#domain/services.ts';

/**
 * A document client on the run's DynamoDB Local (or the one at `endpoint`), for tests that look
 * behind the API (what an item holds, what is left after a deletion) or inject a fault.
 */
export function hostDynamo(endpoint = inject('host').dynamoEndpoint): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
}

/** Points the product's own store modules (imported after this) at the run's DynamoDB Local. */
export function useHostStore(): void {
  const host = inject('host');
  Object.assign(process.env, {
    TABLE_NAME: host.tableName,
    DYNAMODB_ENDPOINT: host.dynamoEndpoint,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_REGION: 'us-east-1',
  });
}

/**
 * A PostGIS service record as the store keeps it (disabled, so nothing connects), for tests that
 * write it through the repository rather than the API.
 */
export function serviceRecord(workspaceId: string, name: string): Service {
  const ts = new Date().toISOString();
  return {
    id: randomUUID(),
    workspace_id: workspaceId,
    name,
    type: 'postgis',
    connection: { host: 'db.example', port: 5432, database: 'gis', user: 'reader' },
    password_enc: 'sealed-password',
    enabled: false,
    status: 'active',
    version: 1,
    created_at: ts,
    updated_at: ts,
  };
}

/**
 * A draft table layer of `service` as the store keeps it (private, not enabled), for tests that
 * write it through the repository or straight to the table; `fields` change any of it.
 */
export function layerRecord(
  service: Pick<Service, 'id' | 'workspace_id'>,
  publicId: string,
  fields: Partial<Layer> = {},
): Layer {
  const ts = new Date().toISOString();
  return {
    id: randomUUID(),
    workspace_id: service.workspace_id,
    service_id: service.id,
    source_layer: `public.${publicId.replace(/[^a-z0-9_]/gi, '_')}`,
    public_id: publicId,
    title: publicId,
    crs_default: 4326,
    enabled: false,
    public: false,
    allowed_roles: [],
    dimensions: [],
    is_sql_view: false,
    version: 1,
    created_at: ts,
    updated_at: ts,
    ...fields,
  };
}

/**
 * A table of the test's own on the run's DynamoDB Local, created from the product's definition,
 * with the product's store modules (imported after this) pointed at it. `drop()` deletes it.
 */
export async function ownTable(table: string) {
  useHostStore();
  process.env.TABLE_NAME = table;
  const raw = new DynamoDBClient({
    endpoint: process.env.DYNAMODB_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const db = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
  const { createTableInput } = await import('#store/table.ts');
  await raw.send(new CreateTableCommand(createTableInput(table)));
  return {
    raw,
    db,
    async drop() {
      await raw.send(new DeleteTableCommand({ TableName: table }));
      raw.destroy();
    },
  };
}

/**
 * Writes a deletion operation as its repository stores it: its item and its DELETIONS listing
 * entry, and (`active`, the default) the GSI2 entry the sweep reads (ADR 0113); without it, the
 * operation as a version before that index wrote it.
 */
export async function plantDeletion(
  db: DynamoDBDocumentClient,
  table: string,
  op: { id: string; created_at: string },
  { active = true } = {},
): Promise<void> {
  const { keys, entities } = await import('#store/keys.ts');
  await db.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...keys.deletion(op.id),
        ...keys.deletionListing(op.created_at, op.id),
        ...(active ? keys.deletionActive(op.created_at, op.id) : {}),
        entity: entities.deletion,
        ...op,
      },
    }),
  );
}
