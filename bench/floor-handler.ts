import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

/**
 * THE FLOOR of the bundle benchmark: the smallest useful Lambda of this stack, one DynamoDB
 * GetItem through the document client and nothing else. Every real handler is compared with it.
 */
const db = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: process.env.AWS_REGION ?? 'us-east-1',
    ...(process.env.DYNAMODB_ENDPOINT ? { endpoint: process.env.DYNAMODB_ENDPOINT } : {}),
  }),
);

interface FloorEvent {
  pathParameters?: { id?: string } | null;
}

export async function handler(event: FloorEvent): Promise<{ statusCode: number; body: string }> {
  const id = event.pathParameters?.id ?? '';
  const out = await db.send(
    new GetCommand({
      TableName: process.env.TABLE_NAME ?? 'geoplane',
      Key: { PK: `WS#${id}`, SK: 'WORKSPACE' },
      ConsistentRead: true,
    }),
  );
  return out.Item
    ? { statusCode: 200, body: JSON.stringify(out.Item) }
    : { statusCode: 404, body: '{"message":"not found"}' };
}
