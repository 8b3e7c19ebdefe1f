import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#config/env.ts';
import { awsClient } from '#telemetry/aws-clients.ts';

let client: DynamoDBDocumentClient | undefined;

/** The shared document client, built once per process (Lambda cold start). */
export function documentClient(): DynamoDBDocumentClient {
  if (!client) {
    const cfg = config();
    // Each call an X-Ray subsegment where tracing is on (ADR 0092).
    const base = awsClient(
      new DynamoDBClient({
        region: cfg.AWS_REGION,
        ...(cfg.DYNAMODB_ENDPOINT ? { endpoint: cfg.DYNAMODB_ENDPOINT } : {}),
        maxAttempts: 3,
        // Fail fast: a request stuck on a dead endpoint must become a 503, not a Lambda timeout.
        requestHandler: { connectionTimeout: 1000, requestTimeout: 3000 },
      }),
    );
    client = DynamoDBDocumentClient.from(base, {
      marshallOptions: { removeUndefinedValues: true },
    });
  }
  return client;
}

/** The table name from configuration. */
export function tableName(): string {
  return config().TABLE_NAME;
}

/** What the store needs of a document client (tests hand in a fake). */
export type StoreClient = Pick<DynamoDBDocumentClient, 'send'>;
