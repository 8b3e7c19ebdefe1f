import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { handler } from './floor-handler.ts';

/**
 * THE FLOOR of the latency benchmark: a bare Node HTTPS server with the local host's certificate
 * and server options, doing one DynamoDB GetItem (document client) per request. Started by
 * `bench/run.ts` as its own process, like the local host.
 *
 * `GET /floor/<workspace id>` reads that workspace's item; `?gets=2` does two GetItems one after
 * the other (a reference for "authorizer lookup + one read"). `GET /floor-list?limit=N` is a
 * reference for listWorkspaces: the same GSI1 Query the workspace repository sends, nothing else.
 */
const dataDir = process.env.BENCH_TLS_DIR;
if (!dataDir) throw new Error('BENCH_TLS_DIR is not set');
const tls = {
  key: readFileSync(join(dataDir, 'tls-key.pem'), 'utf8'),
  cert: readFileSync(join(dataDir, 'tls-cert.pem'), 'utf8'),
};

const db = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: process.env.AWS_REGION ?? 'us-east-1',
    endpoint: process.env.DYNAMODB_ENDPOINT,
  }),
);

/** The Query of `DynamoWorkspaceRepository.list` (the bench checks that it returns a full page). */
async function listQuery(limit: number): Promise<{ statusCode: number; body: string }> {
  const out = await db.send(
    new QueryCommand({
      TableName: process.env.TABLE_NAME ?? 'geoplane',
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :p',
      FilterExpression: '#s = :active',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':p': 'WORKSPACES', ':active': 'active' },
      Limit: limit,
    }),
  );
  return { statusCode: 200, body: JSON.stringify({ workspaces: out.Items ?? [] }) };
}

const server = createServer({ ...tls, keepAlive: true }, async (req, res) => {
  req.resume();
  try {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    if (url.pathname === '/floor-list') {
      const result = await listQuery(Number(url.searchParams.get('limit') ?? 50));
      res.writeHead(result.statusCode, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(result.body),
      });
      res.end(result.body);
      return;
    }
    const id = decodeURIComponent(url.pathname.replace(/^\/floor\//, ''));
    const gets = url.searchParams.get('gets') === '2' ? 2 : 1;
    let result = await handler({ pathParameters: { id } });
    if (gets === 2 && result.statusCode === 200) result = await handler({ pathParameters: { id } });
    res.writeHead(result.statusCode, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(result.body),
    });
    res.end(result.body);
  } catch (error) {
    console.error(error);
    const body = JSON.stringify({ message: String(error) });
    res.writeHead(503, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }
});

server.listen(0, '127.0.0.1', () => {
  console.log(`ready ${(server.address() as AddressInfo).port}`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
