import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { handler } from './floor-handler.ts';
import { listFloorOf, readListFloor } from './list-floors.ts';

/**
 * THE FLOOR of the latency benchmark: a bare Node HTTPS server with the local host's certificate
 * and server options, doing one DynamoDB GetItem (document client) per request. Started by
 * `bench/run.ts` as its own process, like the local host.
 *
 * `GET /floor/<workspace id>` reads that workspace's item; `?gets=2` does two GetItems one after
 * the other (a reference for "authorizer lookup + one read"). `GET /floor-list?limit=N` is a
 * reference for listWorkspaces: the same GSI1 Query the workspace repository sends, nothing else.
 * `GET /floor-layers?pk=…&prefix=…&limit=N[&after=<SK>[&seek=1]]` is the layer repository's list
 * Query (a reference for listLayers); with `after` it starts after that sort key through
 * ExclusiveStartKey, as the repository does with a cursor, or with `seek=1` through the key
 * condition instead (`SK BETWEEN after AND prefix\uffff`), which locates what DynamoDB Local
 * charges for ExclusiveStartKey (ADR 0021).
 * `GET /floor-batch?ids=<id>,<other id>` reads both workspace items in one BatchGetItem and answers
 * the first: the reference for a read folded into the authorizer's one round trip (ADR 0099).
 * `GET /floor-auth-list?list=workspaces|services|layers&key=<key hash>&ws=…&svc=…&limit=N` is the
 * floor of a list's architecture (ADR 0140): the authorizer's read for that API key on the list's
 * path (a GetItem without a workspace, else its one BatchGetItem), THEN the list's own Query, both
 * built by bench/list-floors.ts; 401 when the credential item is missing or revoked.
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

/** One BatchGetItem of the workspace items of `ids` (consistent, as the authorizer reads); the first one's item. */
async function batchGet(ids: string[]): Promise<{ statusCode: number; body: string }> {
  const table = process.env.TABLE_NAME ?? 'geoplane';
  const out = await db.send(
    new BatchGetCommand({
      RequestItems: {
        [table]: { Keys: ids.map((id) => ({ PK: `WS#${id}`, SK: 'WORKSPACE' })), ConsistentRead: true },
      },
    }),
  );
  const item = (out.Responses?.[table] ?? []).find((i) => i.PK === `WS#${ids[0]}`);
  return item
    ? { statusCode: 200, body: JSON.stringify(item) }
    : { statusCode: 404, body: '{"message":"not found"}' };
}

/** The authorizer's read, then the list's Query (bench/list-floors.ts): the floor of a list. */
async function authorizedList(q: URLSearchParams): Promise<{ statusCode: number; body: string }> {
  const f = listFloorOf(q);
  const out = await readListFloor(db, process.env.TABLE_NAME ?? 'geoplane', f);
  return out.authorized
    ? { statusCode: 200, body: JSON.stringify({ [f.list]: out.items }) }
    : { statusCode: 401, body: '{"message":"Unauthorized"}' };
}

/** The Query of `DynamoLayerRepository.list`, or the same page by a key-condition seek. */
async function layersQuery(q: URLSearchParams): Promise<{ statusCode: number; body: string }> {
  const pk = q.get('pk') ?? '';
  const prefix = q.get('prefix') ?? '';
  const limit = Number(q.get('limit') ?? 100);
  const after = q.get('after') ?? undefined;
  const table = process.env.TABLE_NAME ?? 'geoplane';
  if (after && q.get('seek') === '1') {
    const out = await db.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :p AND SK BETWEEN :a AND :z',
        ExpressionAttributeValues: { ':p': pk, ':a': after, ':z': `${prefix}\uffff` },
        Limit: limit + 1,
      }),
    );
    const items = (out.Items ?? []).filter((i) => i.SK !== after).slice(0, limit);
    return { statusCode: 200, body: JSON.stringify({ layers: items }) };
  }
  const out = await db.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: { ':p': pk, ':s': prefix },
      Limit: limit,
      ExclusiveStartKey: after ? { PK: pk, SK: after } : undefined,
    }),
  );
  return { statusCode: 200, body: JSON.stringify({ layers: out.Items ?? [] }) };
}

const server = createServer({ ...tls, keepAlive: true }, async (req, res) => {
  req.resume();
  try {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    if (
      url.pathname === '/floor-list' ||
      url.pathname === '/floor-layers' ||
      url.pathname === '/floor-batch' ||
      url.pathname === '/floor-auth-list'
    ) {
      const result =
        url.pathname === '/floor-list'
          ? await listQuery(Number(url.searchParams.get('limit') ?? 50))
          : url.pathname === '/floor-batch'
            ? await batchGet((url.searchParams.get('ids') ?? '').split(','))
            : url.pathname === '/floor-auth-list'
              ? await authorizedList(url.searchParams)
              : await layersQuery(url.searchParams);
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
