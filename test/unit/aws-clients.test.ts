import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { awsClient, sidecarClient } from '#telemetry/aws-clients.ts';

/** A DynamoDB endpoint on loopback answering every request with one Query page. */
let server: Server;
let endpoint: string;
const page = {
  Items: [{ PK: { S: 'WS#1' }, SK: { S: 'LAYER#a' }, title: { S: 'Roads' } }],
  Count: 1,
  ScannedCount: 1,
};

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(page));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  await once(server, 'close');
});

function client(logger: { debug(): void; info(): void; warn(): void; error(): void }) {
  return new DynamoDBClient({
    region: 'us-east-1',
    endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    logger,
  });
}

const query = () =>
  new QueryCommand({
    TableName: 'geoplane',
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': { S: 'WS#1' } },
  });

describe('awsClient (ADR 0148)', () => {
  it("builds no masked copy of a command's input and output for the SDK's logger, and answers as before", async () => {
    const plain = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const built = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };

    const asIs = await client(plain).send(query());
    const ours = await awsClient(client(built)).send(query());

    // The SDK as it comes hands its logger the command's input and the whole output.
    expect(plain.info).toHaveBeenCalledTimes(1);
    expect(plain.info.mock.calls[0]?.[0]).toMatchObject({
      commandName: 'QueryCommand',
      output: { Count: 1 },
    });
    expect(built.info).not.toHaveBeenCalled();
    expect(ours.Items).toEqual(page.Items);
    expect(ours.Items).toEqual(asIs.Items);
  });

  it('is how the store builds its document client', async () => {
    vi.stubEnv('TABLE_NAME', 'geoplane');
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.resetModules();
    const { documentClient } = await import('#store/client.ts');
    const names = documentClient().middlewareStack.identify().join('\n');

    expect(names).toContain('retryMiddleware');
    expect(names).not.toContain('loggerMiddleware');
    expect(
      client({ debug() {}, info() {}, warn() {}, error() {} })
        .middlewareStack.identify()
        .join('\n'),
    ).toContain('loggerMiddleware');
    vi.unstubAllEnvs();
  });
});

/**
 * `new …Client(` in the product's code (shared/ and functions/) not passed straight to awsClient,
 * nor made by a `sidecarClient(…)` call's build function (which passes it to awsClient).
 */
function clientsBuiltBare(): string[] {
  const root = join(import.meta.dirname, '..', '..');
  const files = ['shared', 'functions'].flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => join(e.parentPath, e.name)),
  );
  const bare: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const found of text.matchAll(/new\s+(?:\w+\.)?(\w+Client)\s*\(/g)) {
      const before = text.slice(0, found.index);
      const wrapped =
        /awsClient\(\s*$/.test(before) || (/=>\s*$/.test(before) && /sidecarClient\([^;]*$/.test(before));
      if (!wrapped) bare.push(`${relative(root, file)}: ${found[1]}`);
    }
  }
  return bare;
}

describe('every AWS SDK client the product builds', () => {
  it('goes through awsClient', () => {
    expect(clientsBuiltBare()).toEqual([]);
  });
});

describe('sidecarClient (ADR 0153)', () => {
  it('loads the sidecar and builds the client once, as awsClient builds it, for every later call', async () => {
    const sdk = { DynamoDBClient };
    const load = vi.fn(async () => sdk);
    const get = sidecarClient(load, (s) => new s.DynamoDBClient({ region: 'us-east-1', endpoint }));
    expect(load).not.toHaveBeenCalled();
    const [first, second] = await Promise.all([get(), get()]);
    const third = await get();
    expect(load).toHaveBeenCalledTimes(1);
    expect(first.client).toBe(second.client);
    expect(third.client).toBe(first.client);
    expect(first.sdk).toBe(sdk);
    // awsClient's doing: the SDK's logger middleware is gone.
    expect(first.client.middlewareStack.identify().some((m) => m.startsWith('loggerMiddleware'))).toBe(false);
  });

  it('tries a failed load again on the next call', async () => {
    const load = vi
      .fn<() => Promise<{ DynamoDBClient: typeof DynamoDBClient }>>()
      .mockRejectedValueOnce(new Error('no sidecar'))
      .mockResolvedValue({ DynamoDBClient });
    const get = sidecarClient(load, (s) => new s.DynamoDBClient({ region: 'us-east-1', endpoint }));
    await expect(get()).rejects.toThrow('no sidecar');
    const { client } = await get();
    expect(client).toBeInstanceOf(DynamoDBClient);
    expect(load).toHaveBeenCalledTimes(2);
  });
});
