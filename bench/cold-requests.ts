import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { localSecretKey } from '../infra/local/files.ts';
import { mapboxStyleBody } from '../shared/api/examples.ts';
import { type Bundle, lambdaBaseEnv, runFresh } from './bundles.ts';
import { median } from './stats.ts';

/*
 * Section 2's cold requests (issue #15: "import time plus first request"): a fresh `node` imports a
 * bundle and answers one request with it, against the run's DynamoDB Local and embedded PostGIS,
 * as a Lambda's first invocation does (init, then the handler). The authorizer's context comes
 * from the authorizer bundle, run first in a process of its own (not timed), as API Gateway
 * would hand it over.
 */

/** Runs in the fresh process: argv[1] the bundle's URL, argv[2] the event as JSON, argv[3] the mode. */
const PROBE = `
const [url, eventJson, mode] = process.argv.slice(1);
const event = JSON.parse(eventJson);
const context = { awsRequestId: 'cold-' + process.pid, functionName: 'cold', callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 30000 };
const t0 = performance.now();
const mod = await import(url);
const t1 = performance.now();
const out = await mod.handler(event, context);
const t2 = performance.now();
if (mode === 'authorize') console.log('BENCH_AUTHORIZED ' + JSON.stringify(out));
else {
  console.log('BENCH_COLD ' + (t1 - t0).toFixed(2) + ' ' + (t2 - t1).toFixed(2) + ' ' + out.statusCode);
  if (out.statusCode >= 400) console.log('BENCH_BODY ' + String(out.body).slice(0, 400));
}
process.exit(0);
`;

/** What the stack's Lambdas get from their environment, pointed at the run's local stack. */
export interface ColdStack {
  dataDir: string;
  dynamoEndpoint: string;
  apiKey: string;
  postgis: { host: string; port: number };
  workspaceId: string;
  serviceId: string;
}

function lambdaEnv(stack: ColdStack): Record<string, string> {
  return {
    ...lambdaBaseEnv(),
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    DYNAMODB_ENDPOINT: stack.dynamoEndpoint,
    GEOPLANE_SECRET_KEY: localSecretKey(stack.dataDir),
    GEOPLANE_ALLOWED_DATABASE_HOSTS: `${stack.postgis.host}:${stack.postgis.port}`,
    POWERTOOLS_LOG_LEVEL: 'ERROR',
  };
}

async function probe(
  file: string,
  event: unknown,
  mode: 'authorize' | 'request',
  env: Record<string, string>,
) {
  const args = [pathToFileURL(file).href, JSON.stringify(event), mode];
  const { code, signal, out } = await runFresh(PROBE, args, env, 60_000);
  if (code !== 0) throw new Error(`${file} (${signal ?? code}): ${out.split('\n').slice(0, 4).join(' | ')}`);
  return out;
}

interface RouteRequest {
  method: string;
  resource: string;
  path: string;
  pathParameters: Record<string, string> | null;
  body?: unknown;
  /** Public routes: no authorizer. */
  public?: boolean;
}

/** The authorizer's answer for this request, from the authorizer bundle in a process of its own. */
async function authorize(
  authorizer: Bundle,
  request: RouteRequest,
  stack: ColdStack,
  env: Record<string, string>,
) {
  const headers = { 'X-API-Key': stack.apiKey };
  const out = await probe(
    authorizer.file,
    {
      type: 'REQUEST',
      methodArn: `arn:aws:execute-api:us-east-1:000000000000:local/v1/${request.method}${request.path}`,
      resource: request.resource,
      path: request.path,
      httpMethod: request.method,
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
      pathParameters: request.pathParameters,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      stageVariables: null,
      requestContext: {},
    },
    'authorize',
    env,
  );
  const m = /^BENCH_AUTHORIZED (.*)$/m.exec(out);
  if (!m?.[1]) throw new Error(`the authorizer answered nothing usable: ${out.slice(0, 300)}`);
  const result = JSON.parse(m[1]) as { principalId: string; context?: Record<string, unknown> };
  return { ...(result.context ?? {}), principalId: result.principalId };
}

/** A REST v1 proxy event as API Gateway (and the local host) builds it. */
function proxyEvent(request: RouteRequest, authorizer: Record<string, unknown> | null) {
  const headers: Record<string, string> = {
    Host: '127.0.0.1',
    'X-Forwarded-Proto': 'https',
    ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
  };
  return {
    resource: request.resource,
    path: request.path,
    httpMethod: request.method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: request.pathParameters,
    stageVariables: null,
    body: request.body === undefined ? null : JSON.stringify(request.body),
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer,
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      identity: { sourceIp: '127.0.0.1' },
      path: `/v1${request.path}`,
      stage: 'v1',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourcePath: request.resource,
    },
  };
}

export interface ColdRequest {
  bundle: string;
  what: string;
  /** The status every run must answer. */
  expect: number;
  importMs: number[];
  requestMs: number[];
  error?: string;
}

/** The cases: the floor, a typical read, and each route whose first use loads a sidecar or data file. */
function cases(
  stack: ColdStack,
): { bundle: string; what: string; expect: number; request: () => RouteRequest }[] {
  const ws = stack.workspaceId;
  const service = stack.serviceId;
  return [
    {
      bundle: 'floor/floor-handler',
      what: 'one GetItem of the workspace',
      expect: 200,
      request: () => ({
        method: 'GET',
        resource: '/floor/{id}',
        path: `/floor/${ws}`,
        pathParameters: { id: ws },
      }),
    },
    {
      bundle: 'workspaces/get-workspace',
      what: 'getWorkspace by id (API key)',
      expect: 200,
      request: () => ({
        method: 'GET',
        resource: '/api/v1/workspaces/{workspace}',
        path: `/api/v1/workspaces/${ws}`,
        pathParameters: { workspace: ws },
      }),
    },
    {
      bundle: 'meta/get-open-api',
      what: 'getOpenAPI (reads the document)',
      expect: 200,
      request: () => ({
        method: 'GET',
        resource: '/api/v1/openapi.json',
        path: '/api/v1/openapi.json',
        pathParameters: null,
        public: true,
      }),
    },
    {
      bundle: 'styles/create-style',
      what: 'createStyle, a MapLibre style (the validator sidecar)',
      expect: 201,
      request: () => ({
        method: 'POST',
        resource: '/api/v1/workspaces/{workspace}/styles',
        path: `/api/v1/workspaces/${ws}/styles`,
        pathParameters: { workspace: ws },
        // The API's example style without its icon layer (whose asset this workspace lacks).
        body: {
          name: `cold-${randomUUID().slice(0, 8)}`,
          format: 'mapbox',
          body: { ...mapboxStyleBody, layers: mapboxStyleBody.layers.filter((l) => l.type === 'line') },
        },
      }),
    },
    {
      bundle: 'layers/create-layer',
      what: 'createLayer, enabled (pg and libpg-query sidecars; checked against PostGIS)',
      expect: 201,
      request: () => ({
        method: 'POST',
        resource: '/api/v1/workspaces/{workspace}/services/{service}/layers',
        path: `/api/v1/workspaces/${ws}/services/${service}/layers`,
        pathParameters: { workspace: ws, service },
        body: { source_layer: 'places', public_id: `cold-${randomUUID().slice(0, 8)}`, enabled: true },
      }),
    },
  ];
}

/**
 * Each case `runs` times, round-robin, each run a fresh process: import time and the first
 * request's time (the authorizer's context made beforehand, untimed).
 */
export async function measureColdRequests(
  bundles: readonly Bundle[],
  stack: ColdStack,
  runs: number,
  progress: (message: string) => void,
): Promise<ColdRequest[]> {
  const env = lambdaEnv(stack);
  const byName = new Map(bundles.map((b) => [b.name, b]));
  const authorizer = byName.get('authorizer/index');
  const list = cases(stack);
  const results: ColdRequest[] = list.map((c) => ({
    bundle: c.bundle,
    what: c.what,
    expect: c.expect,
    importMs: [],
    requestMs: [],
  }));
  for (let run = 0; run < runs; run++) {
    progress(`cold requests: run ${run + 1}/${runs}`);
    for (const [i, c] of list.entries()) {
      const result = results[i] as ColdRequest;
      const bundle = byName.get(c.bundle);
      if (result.error) continue;
      try {
        if (!bundle || bundle.buildError || !authorizer) throw new Error('not built');
        const request = c.request();
        const context =
          request.public || c.bundle.startsWith('floor/')
            ? null
            : await authorize(authorizer, request, stack, env);
        const out = await probe(bundle.file, proxyEvent(request, context), 'request', env);
        const m = /^BENCH_COLD (\S+) (\S+) (\d+)$/m.exec(out);
        if (!m) throw new Error(`no timing: ${out.slice(0, 300)}`);
        if (Number(m[3]) !== c.expect)
          throw new Error(`answered ${m[3]}, expected ${c.expect}: ${out.slice(0, 300)}`);
        result.importMs.push(Number(m[1]));
        result.requestMs.push(Number(m[2]));
      } catch (error) {
        result.error = (error as Error).message;
      }
    }
  }
  return results;
}

/** The section's table: import, first request and both, against the floor's. */
export function coldRequestSection(results: readonly ColdRequest[]): string {
  const floor = results.find((r) => r.bundle === 'floor/floor-handler');
  const floorTotal = floor && !floor.error ? median(floor.importMs) + median(floor.requestMs) : undefined;
  const rows = results.map((r) => {
    if (r.error) return [`\`${r.bundle}\``, r.what, 'ERROR', '', '', '', r.error.slice(0, 120)];
    const imp = median(r.importMs);
    const req = median(r.requestMs);
    return [
      `\`${r.bundle}\``,
      r.what,
      imp.toFixed(1),
      req.toFixed(1),
      (imp + req).toFixed(1),
      floorTotal ? `${((imp + req) / floorTotal).toFixed(2)}×` : 'n/a',
      String(r.importMs.length),
    ];
  });
  const head = [
    'bundle',
    'first request',
    'import ms',
    'first request ms',
    'cold total ms',
    '× floor',
    'runs',
  ];
  return [
    "Cold requests: a fresh `node` imports the bundle and answers one request with it, against this run's " +
      'DynamoDB Local and embedded PostGIS (what a Lambda does on its first invocation: the init, then the ' +
      'handler; its first connection to DynamoDB and PostGIS is in the request). The authorizer context of ' +
      'a route comes from the authorizer bundle, run before in a process of its own and not timed (API ' +
      'Gateway runs the authorizer as a Lambda of its own). Medians; every run must answer the expected ' +
      'status. getWorkspace reads nothing in its handler (the authorizer read the workspace, ADR 0099), ' +
      "so its first request makes no connection; the floor's makes one. `harvestMosaicGranules` (the " +
      'GeoTIFF reader) is not here: it needs a mosaic root of files.',
    '',
    `| ${head.join(' | ')} |`,
    `| ${head.map((_, i) => (i < 2 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
