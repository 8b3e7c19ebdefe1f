/**
 * A route's bundle run as a Lambda's first invocation (section 2's cold requests): a fresh `node`
 * imports it and answers one event, with the stack's environment, a Step Functions stand-in for the
 * workflows it starts, and the API Gateway events (the authorizer's, the proxy's) it gets.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Operation } from '#api/operation.ts';
import { localIssuer, localSecretKey } from '#infra/local/files.ts';
import { LOCAL_ISSUER_PATH } from '#infra/local/oidc-provider.ts';
import { LOCAL_UPLOAD_PATH } from '#infra/local/uploads.ts';
import { lambdaBaseEnv, runFresh } from './bundles.ts';
import type { RouteRequest } from './cold-request-kit.ts';

/** Runs in the fresh process: argv[1] the bundle's URL, argv[2] the event as JSON, argv[3] the mode. */
const PROBE = `
const [url, eventJson, mode] = process.argv.slice(1);
const event = JSON.parse(eventJson);
const context = { awsRequestId: 'cold-' + process.pid, functionName: 'cold', callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 30000 };
// The request's round trips, recorded beside it (diagnostics channels cost nothing measurable): each
// HTTP call (DynamoDB, Step Functions: the X-Amz-Target) with its start and end, and each TCP
// connection opened, with its port. Printed after the timing.
const dc = await import('node:diagnostics_channel');
const calls = [];
const sockets = [];
const opened = new Map();
dc.subscribe('http.client.request.start', ({ request }) => opened.set(request, performance.now()));
dc.subscribe('http.client.response.finish', ({ request }) => {
  const start = opened.get(request) ?? 0;
  const target = String(request.getHeader('x-amz-target') ?? request.method + ' ' + request.path);
  calls.push({ target, start, end: performance.now() });
});
// Every TCP connection (pg makes its own Socket, which no channel reports): the port it reached.
const { Socket } = await import('node:net');
const connect = Socket.prototype.connect;
Socket.prototype.connect = function (...args) {
  this.once('connect', () => sockets.push(this.remotePort));
  return connect.apply(this, args);
};
const t0 = performance.now();
const mod = await import(url);
const t1 = performance.now();
const out = await mod.handler(event, context);
const t2 = performance.now();
if (mode === 'authorize') {
  const allowed = out?.policyDocument?.Statement?.some?.((s) => s.Effect === 'Allow');
  console.log('BENCH_AUTHORIZED ' + JSON.stringify(out));
  console.log('BENCH_COLD ' + (t1 - t0).toFixed(2) + ' ' + (t2 - t1).toFixed(2) + ' ' + (allowed ? 200 : 403));
} else {
  console.log('BENCH_COLD ' + (t1 - t0).toFixed(2) + ' ' + (t2 - t1).toFixed(2) + ' ' + out.statusCode);
  const body = out.isBase64Encoded ? '' : String(out.body ?? '');
  console.log('BENCH_BODY ' + JSON.stringify(body.slice(0, 20000)));
}
console.log('BENCH_TRIPS ' + JSON.stringify({ calls, sockets }));
process.exit(0);
`;

/** The run's local stack, as the cold requests reach it. */
export interface ColdStack {
  dataDir: string;
  dynamoEndpoint: string;
  /** The local host's API root (`https://127.0.0.1:<port>/api/v1`): what the requests need is made through it. */
  hostUrl: string;
  /** The bootstrap super_admin key. */
  apiKey: string;
  /** The embedded PostGIS as its demo role (bootstrap.json). */
  postgis: { host: string; port: number; database: string; user: string; password: string };
  /** The demo workspace and its demo-postgis service (found through the API when not given). */
  workspaceId?: string;
  serviceId?: string;
}

const STATE_MACHINE = 'arn:aws:states:us-east-1:000000000000:stateMachine:cold';

/** What the stack's Lambdas get from their environment, pointed at the run's local stack (as the local host sets it). */
export async function lambdaEnv(stack: ColdStack, sfnEndpoint: string): Promise<Record<string, string>> {
  const origin = new URL(stack.hostUrl).origin;
  const issuer = await localIssuer(stack.dataDir, `${origin}${LOCAL_ISSUER_PATH}`);
  const marker = JSON.parse(readFileSync(join(stack.dataDir, 'postgis.json'), 'utf8')) as {
    importer_password: string;
  };
  return {
    ...lambdaBaseEnv(),
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: stack.dynamoEndpoint,
    GEOPLANE_SECRET_KEY: localSecretKey(stack.dataDir),
    GEOPLANE_ALLOWED_DATABASE_HOSTS: `${stack.postgis.host}:${stack.postgis.port}`,
    POWERTOOLS_LOG_LEVEL: 'ERROR',
    OIDC_ISSUER: issuer.issuer,
    OIDC_AUDIENCE: issuer.audience,
    OIDC_JWKS: JSON.stringify(issuer.jwks),
    OIDC_CLIENT_ID: issuer.audience,
    OIDC_REDIRECT_URI: `${origin}/console/callback`,
    OIDC_TRUST_ROLE_CLAIMS: 'true',
    GLOBAL_USAGE_KEY: 'geoplane-local-global-usage-key',
    GEOPLANE_MOSAIC_ROOT: join(stack.dataDir, 'mosaics'),
    GEOPLANE_IMPORT_ROOT: join(stack.dataDir, 'import-sources'),
    GEOPLANE_TILE_CACHE_DIR: join(stack.dataDir, 'tile-cache'),
    GEOPLANE_IMPORT_UPLOAD_DIR: join(stack.dataDir, 'imports'),
    GEOPLANE_IMPORT_UPLOAD_URL: `${origin}${LOCAL_UPLOAD_PATH}`,
    IMPORT_DATABASE: JSON.stringify({
      host: stack.postgis.host,
      port: stack.postgis.port,
      database: stack.postgis.database,
      sslmode: 'disable',
      user: 'geoplane_importer',
      password: marker.importer_password,
    }),
    // The workflows: Step Functions (the stand-in below), as deployed.
    AWS_ENDPOINT_URL_SFN: sfnEndpoint,
    DELETION_STATE_MACHINE_ARN: `${STATE_MACHINE}-deletion`,
    IMPORT_STATE_MACHINE_ARN: `${STATE_MACHINE}-import`,
    HARVEST_STATE_MACHINE_ARN: `${STATE_MACHINE}-harvest`,
    TILE_CACHE_STATE_MACHINE_ARN: `${STATE_MACHINE}-tile-cache`,
  };
}

/**
 * A Step Functions stand-in on 127.0.0.1: StartExecution is accepted (nothing runs), an execution
 * is described as running, lists are empty. Only what a route's first request asks of it.
 */
export async function startStepFunctionsStandIn(): Promise<{ endpoint: string; server: Server }> {
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const action = String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop();
      const input = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      const now = Date.now() / 1000;
      const arn = `${String(input.stateMachineArn ?? STATE_MACHINE).replace(':stateMachine:', ':execution:')}:${input.name ?? 'x'}`;
      const body =
        action === 'StartExecution'
          ? { executionArn: arn, startDate: now }
          : action === 'DescribeExecution'
            ? { executionArn: input.executionArn, status: 'RUNNING', startDate: now }
            : { executions: [] };
      res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let profiled = 0;

/**
 * With BENCH_COLD_CPU_PROF=<dir>, every fresh process writes a V8 CPU profile there, named after its
 * bundle (`get-style.<n>.cpuprofile`), to see where a cold request's time goes; its timings are then
 * the profiler's, not a Lambda's.
 */
function profiling(file: string): string[] {
  const dir = process.env.BENCH_COLD_CPU_PROF;
  if (!dir) return [];
  const name = `${basename(file, '.mjs')}.${++profiled}.cpuprofile`;
  return ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}`];
}

export async function probe(
  file: string,
  event: unknown,
  mode: 'authorize' | 'request',
  env: Record<string, string>,
): Promise<string> {
  const args = [pathToFileURL(file).href, JSON.stringify(event), mode];
  const { code, signal, out } = await runFresh(PROBE, args, env, 60_000, profiling(file));
  if (code !== 0) {
    const said = out
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && l.length < 400)
      .slice(0, 4)
      .join(' | ');
    throw new Error(`the process failed (${signal ?? code}): ${said}`);
  }
  return out;
}

/** The route's path with its parameters filled in. */
function pathOf(op: Operation, params: Record<string, string> | null): string {
  return op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = params?.[name];
    if (value === undefined) throw new Error(`no value for {${name}}`);
    return encodeURIComponent(value);
  });
}

/** The authorizer's REQUEST event for a request (as API Gateway builds it). */
export function authorizerEvent(op: Operation, request: RouteRequest, headers: Record<string, string>) {
  const path = pathOf(op, request.pathParameters);
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:us-east-1:000000000000:local/v1/${op.method}${path}`,
    resource: op.path,
    path,
    httpMethod: op.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    pathParameters: request.pathParameters,
    queryStringParameters: request.query ?? null,
    multiValueQueryStringParameters: request.query
      ? Object.fromEntries(Object.entries(request.query).map(([k, v]) => [k, [v]]))
      : null,
    stageVariables: null,
    requestContext: {},
  };
}

/** A REST v1 proxy event as API Gateway (and the local host) builds it. */
export function proxyEvent(
  op: Operation,
  request: RouteRequest,
  auth: Record<string, string>,
  authorizer: Record<string, unknown> | null,
) {
  const path = pathOf(op, request.pathParameters);
  const headers: Record<string, string> = {
    Host: '127.0.0.1',
    'X-Forwarded-Proto': 'https',
    ...auth,
    ...(request.bytes
      ? { 'Content-Type': request.bytes.contentType }
      : request.body === undefined
        ? {}
        : { 'Content-Type': 'application/json' }),
  };
  return {
    resource: op.path,
    path,
    httpMethod: op.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: request.query ?? null,
    multiValueQueryStringParameters: request.query
      ? Object.fromEntries(Object.entries(request.query).map(([k, v]) => [k, [v]]))
      : null,
    pathParameters: request.pathParameters,
    stageVariables: null,
    body: request.bytes
      ? request.bytes.data.toString('base64')
      : request.body === undefined
        ? null
        : JSON.stringify(request.body),
    isBase64Encoded: Boolean(request.bytes),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer,
      protocol: 'HTTP/1.1',
      httpMethod: op.method,
      identity: { sourceIp: '127.0.0.1' },
      path: `/v1${path}`,
      stage: 'v1',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourcePath: op.path,
    },
  };
}
