/**
 * The phase profile of section 1's lists (ADR 0140), run by bench/list-phases.ts as its own
 * process against the run's DynamoDB Local and data dir; benchmark code only, nothing here runs in
 * the product. It loads the local host's gateway emulation (`infra/local/gateway.ts`: route
 * match, the REQUEST authorizer with its policy, the Lambda proxy event, the handler) in this
 * process, under the host's own configuration and its local data-access check, and times each
 * list request's timeline: the authorizer's and the handler's invocations from the gateway's
 * `withDataAccess` scope (its AsyncLocalStorage `run`, wrapped here), the DynamoDB requests from a
 * timing middleware on the shared document client. Beside each, the list's floor
 * (bench/list-floors.ts) through a plain document client. It also checks that the host sends
 * exactly the floor's two requests. Prints `BENCH_PHASES <json>`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localSecretKey } from '#infra/local/files.ts';
import { authorizerRead, type ListFloor, listQuery, readListFloor } from './list-floors.ts';
import { median } from './stats.ts';

export interface PhaseInput {
  dataDir: string;
  endpoint: string;
  table: string;
  apiKey: string;
  warmup: number;
  requests: number;
  cases: { id: string; path: string; floor: ListFloor }[];
}

/** Medians (ms) of one list's phases, in process. */
export interface PhaseCaseResult {
  id: string;
  n: number;
  /** The host's path: handleRequest from call to answer, and its timeline. */
  total: number;
  /** The gateway emulation before the authorizer, between it and the handler, after the handler. */
  gatewayBefore: number;
  gatewayBetween: number;
  gatewayAfter: number;
  /** The authorizer's invocation without its read, and its read. */
  authorizerWork: number;
  read: number;
  /** The handler's invocation before its Query, the Query, after it (presenting, the JSON body). */
  handlerBefore: number;
  query: number;
  handlerAfter: number;
  /** The DynamoDB commands one request sent, in order. */
  commands: string[];
  /** Whether the host's read and Query are the floor's (key sets, consistency, Query input). */
  sameAsFloor: boolean;
  mismatch?: string;
  /** The floor through a plain document client: read, Query, both. */
  floorRead: number;
  floorQuery: number;
  floorTotal: number;
}

interface Call {
  name: string;
  start: number;
  end: number;
  input: Record<string, unknown>;
}

const input = JSON.parse(process.env.BENCH_PHASES ?? '{}') as PhaseInput;
// The host's configuration (infra/local/server.ts), set before any module reads it.
Object.assign(process.env, {
  TABLE_NAME: input.table,
  DYNAMODB_ENDPOINT: input.endpoint,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_SERVICE_NAME: 'geoplane-local',
  POWERTOOLS_METRICS_DISABLED: 'true',
  OIDC_TRUST_ROLE_CLAIMS: 'true',
  GEOPLANE_SECRET_KEY: localSecretKey(input.dataDir),
  GLOBAL_USAGE_KEY: 'geoplane-local-global-usage-key',
});
const { documentClient } = await import('#store/client.ts');
const { installDataAccessCheck } = await import('#infra/local/data-access.ts');
const { handleRequest } = await import('#infra/local/gateway.ts');

const calls: Call[] = [];
/** The gateway's `withDataAccess` scopes (`{ name, allowed }`) of the current request: start and end. */
const scopes: { name: string; start: number; end: number }[] = [];
type Run = (
  this: AsyncLocalStorage<unknown>,
  store: unknown,
  fn: (...a: unknown[]) => unknown,
  ...args: unknown[]
) => unknown;
const run = AsyncLocalStorage.prototype.run as unknown as Run;
const timedRun: Run = function (store, fn, ...args) {
  const scope = store as { name?: unknown; allowed?: unknown } | undefined;
  if (typeof scope?.name !== 'string' || !(scope.allowed instanceof Set))
    return run.call(this, store, fn, ...args);
  const entry = { name: scope.name, start: performance.now(), end: Number.NaN };
  scopes.push(entry);
  const out = run.call(this, store, fn, ...args);
  const done = () => {
    entry.end = performance.now();
  };
  if (out instanceof Promise) out.then(done, done);
  else done();
  return out;
};
AsyncLocalStorage.prototype.run = timedRun as unknown as typeof AsyncLocalStorage.prototype.run;
const client = documentClient();
installDataAccessCheck(client);
client.middlewareStack.add(
  (next, context) => async (args) => {
    const start = performance.now();
    try {
      return await next(args);
    } finally {
      calls.push({
        name: context.commandName ?? '?',
        start,
        end: performance.now(),
        input: args.input as Record<string, unknown>,
      });
    }
  },
  { step: 'initialize', priority: 'high', name: 'benchPhaseTimer' },
);
const plain = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1', endpoint: input.endpoint }),
);

/** JSON with sorted keys, to compare inputs whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** Why the host's two requests are not the floor's, or undefined when they are. */
function mismatchOf(f: ListFloor, sent: Call[]): string | undefined {
  const read = authorizerRead(f);
  // The client's middleware sees the low-level command names (the document client's GetCommand is GetItemCommand).
  const want = read.op === 'GetItem' ? 'GetItemCommand' : 'BatchGetItemCommand';
  if (sent.length !== 2 || sent[0]?.name !== want || sent[1]?.name !== 'QueryCommand')
    return `sent ${sent.map((c) => c.name).join(', ')}; the floor sends ${want}, QueryCommand`;
  const [r, q] = sent as [Call, Call];
  const keySet = (ks: unknown) =>
    ((ks as { PK: string; SK: string }[] | undefined) ?? []).map((k) => `${k.PK}|${k.SK}`).sort();
  if (read.op === 'GetItem') {
    if (canonical(r.input.Key) !== canonical(read.keys[0]) || r.input.ConsistentRead !== true)
      return `GetItem ${canonical(r.input)}`;
  } else {
    const items = (r.input.RequestItems as Record<string, { Keys?: unknown; ConsistentRead?: boolean }>)[
      input.table
    ];
    if (canonical(keySet(items?.Keys)) !== canonical(keySet(read.keys)) || items?.ConsistentRead !== true)
      return `BatchGetItem ${canonical(r.input)}`;
  }
  if (canonical(q.input) !== canonical(listQuery(f, input.table))) return `Query ${canonical(q.input)}`;
  return undefined;
}

const headers = { host: '127.0.0.1', 'x-api-key': input.apiKey, connection: 'keep-alive' };
type Sample = Omit<PhaseCaseResult, 'id' | 'n' | 'commands' | 'sameAsFloor' | 'mismatch'>;

async function onePair(c: PhaseInput['cases'][number]): Promise<{ sample: Sample; sent: Call[] }> {
  calls.length = 0;
  scopes.length = 0;
  const t0 = performance.now();
  const out = await handleRequest(
    { method: 'GET', url: c.path, headers, body: Buffer.alloc(0), sourceIp: '127.0.0.1' },
    { maxGatewayBodyBytes: 6 * 1024 * 1024 },
  );
  const t1 = performance.now();
  if (out.statusCode !== 200) throw new Error(`${c.id}: ${c.path} answered ${out.statusCode}: ${out.body}`);
  const sent = [...calls];
  const [r, q] = sent;
  const a = scopes.find((x) => x.name === 'authorizer');
  const h = scopes.find((x) => x.name !== 'authorizer');
  const f0 = performance.now();
  let fr = Number.NaN;
  const timed = {
    send: async (command: Parameters<typeof plain.send>[0]) => {
      const s = performance.now();
      const result = await plain.send(command);
      if (Number.isNaN(fr)) fr = performance.now() - s;
      return result;
    },
  } as Pick<DynamoDBDocumentClient, 'send'>;
  const floor = await readListFloor(timed, input.table, c.floor);
  const f1 = performance.now();
  if (!floor.authorized) throw new Error(`${c.id}: the floor's credential read found no usable key`);
  return {
    sample: {
      total: t1 - t0,
      gatewayBefore: a ? a.start - t0 : Number.NaN,
      gatewayBetween: a && h ? h.start - a.end : Number.NaN,
      gatewayAfter: h ? t1 - h.end : Number.NaN,
      authorizerWork: a && r ? a.end - a.start - (r.end - r.start) : Number.NaN,
      read: r ? r.end - r.start : Number.NaN,
      handlerBefore: h && q ? q.start - h.start : Number.NaN,
      query: q ? q.end - q.start : Number.NaN,
      handlerAfter: h && q ? h.end - q.end : Number.NaN,
      floorRead: fr,
      floorQuery: f1 - f0 - fr,
      floorTotal: f1 - f0,
    },
    sent,
  };
}

const samples = new Map<string, Sample[]>(input.cases.map((c) => [c.id, []]));
const first = new Map<string, Call[]>();
for (let i = 0; i < input.warmup + input.requests; i++) {
  for (let k = 0; k < input.cases.length; k++) {
    const c = input.cases[(k + i) % input.cases.length] as PhaseInput['cases'][number];
    const { sample, sent } = await onePair(c);
    if (!first.has(c.id)) first.set(c.id, sent);
    if (i >= input.warmup) samples.get(c.id)?.push(sample);
  }
}
const results: PhaseCaseResult[] = input.cases.map((c) => {
  const s = samples.get(c.id) ?? [];
  const m = (key: keyof Sample) => median(s.map((x) => x[key]));
  const sent = first.get(c.id) ?? [];
  const mismatch = mismatchOf(c.floor, sent);
  return {
    id: c.id,
    n: s.length,
    total: m('total'),
    gatewayBefore: m('gatewayBefore'),
    gatewayBetween: m('gatewayBetween'),
    gatewayAfter: m('gatewayAfter'),
    authorizerWork: m('authorizerWork'),
    read: m('read'),
    handlerBefore: m('handlerBefore'),
    query: m('query'),
    handlerAfter: m('handlerAfter'),
    commands: sent.map((x) => x.name),
    sameAsFloor: mismatch === undefined,
    ...(mismatch ? { mismatch } : {}),
    floorRead: m('floorRead'),
    floorQuery: m('floorQuery'),
    floorTotal: m('floorTotal'),
  };
});
process.stdout.write(`\nBENCH_PHASES ${JSON.stringify(results)}\n`);
process.exit(0);
