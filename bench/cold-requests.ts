import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeArrayBuffer } from 'geotiff';
import { localIssuer, localSecretKey } from '../infra/local/files.ts';
import { LOCAL_ISSUER_PATH } from '../infra/local/oidc-provider.ts';
import { LOCAL_UPLOAD_PATH } from '../infra/local/uploads.ts';
import { mapboxStyleBody } from '../shared/api/examples.ts';
import type { Operation } from '../shared/api/operation.ts';
import { routes } from '../shared/api/routes.ts';
import { type Bundle, lambdaBaseEnv, runFresh } from './bundles.ts';
import { median } from './stats.ts';

/*
 * Section 2's cold requests (issue #27, target 2: "cold requests, every route"): for every route of
 * the route table and for the authorizer, a fresh `node` imports the route's bundle and answers one
 * request with it, against the run's DynamoDB Local and embedded PostGIS, as a Lambda's first
 * invocation does (init, then the handler). A route's authorizer context comes from the authorizer
 * bundle, run first in a process of its own (not timed), as API Gateway would hand it over. What a
 * request needs (a layer to read, a key to revoke, a session to end, an import in the right state)
 * is made beforehand through the local host's API, one throwaway item per run where the request
 * deletes or changes its state. The workflows a request starts go to a Step Functions stand-in on
 * 127.0.0.1 that accepts the StartExecution (the execution never runs).
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
if (mode === 'authorize') {
  const allowed = out?.policyDocument?.Statement?.some?.((s) => s.Effect === 'Allow');
  console.log('BENCH_AUTHORIZED ' + JSON.stringify(out));
  console.log('BENCH_COLD ' + (t1 - t0).toFixed(2) + ' ' + (t2 - t1).toFixed(2) + ' ' + (allowed ? 200 : 403));
} else {
  console.log('BENCH_COLD ' + (t1 - t0).toFixed(2) + ' ' + (t2 - t1).toFixed(2) + ' ' + out.statusCode);
  const body = out.isBase64Encoded ? '' : String(out.body ?? '');
  console.log('BENCH_BODY ' + JSON.stringify(body.slice(0, 20000)));
}
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
async function lambdaEnv(stack: ColdStack, sfnEndpoint: string): Promise<Record<string, string>> {
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
async function startStepFunctionsStandIn(): Promise<{ endpoint: string; server: Server }> {
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

async function probe(
  file: string,
  event: unknown,
  mode: 'authorize' | 'request',
  env: Record<string, string>,
): Promise<string> {
  const args = [pathToFileURL(file).href, JSON.stringify(event), mode];
  const { code, signal, out } = await runFresh(PROBE, args, env, 60_000);
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

// ---- the local host's API: what the requests need, made beforehand ------------------------------

interface Reply {
  status: number;
  body: any;
  text: string;
  cookies: string[];
  location?: string;
}

/** A client of the local host's API as the bootstrap super_admin (or `headers`). */
function hostClient(stack: ColdStack) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: readFileSync(join(stack.dataDir, 'tls-cert.pem')),
  });
  const send = (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = { 'X-API-Key': stack.apiKey },
    url = `${stack.hostUrl}${path}`,
  ): Promise<Reply> => {
    const raw = Buffer.isBuffer(body)
      ? body
      : body === undefined
        ? undefined
        : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        url,
        {
          method,
          agent,
          headers: {
            ...headers,
            ...(raw
              ? {
                  'Content-Type': headers['Content-Type'] ?? 'application/json',
                  'Content-Length': String(raw.length),
                }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            const setCookie = res.headers['set-cookie'];
            resolve({
              status: res.statusCode ?? 0,
              body: parsed,
              text,
              cookies: setCookie ?? [],
              location: res.headers.location,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(raw);
    });
  };
  /** The request must answer `status` (any 2xx unless told); its body. */
  const must = async (
    method: string,
    path: string,
    body?: unknown,
    status?: number,
    headers?: Record<string, string>,
  ) => {
    const reply = await send(method, path, body, headers);
    const ok = status === undefined ? reply.status >= 200 && reply.status < 300 : reply.status === status;
    if (!ok) throw new Error(`${method} ${path} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    return reply;
  };
  return { agent, send, must };
}

/** The 70-byte PNG of the style asset example. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/** A single-band EPSG:4326 GeoTIFF of 4×2 pixels of 0.5° whose upper-left corner is (x, y). */
function tiff(x: number, y: number): Buffer {
  return Buffer.from(
    writeArrayBuffer(new Array(8).fill(1), {
      width: 4,
      height: 2,
      ModelPixelScale: [0.5, 0.5, 0],
      ModelTiepoint: [0, 0, 0, x, y, 0],
      GeographicTypeGeoKey: 4326,
      GTModelTypeGeoKey: 2,
      GTRasterTypeGeoKey: 1,
    } as never),
  );
}

/** A GeoJSON FeatureCollection of `n` points (an import's file). */
function points(n: number): Buffer {
  const features = Array.from({ length: n }, (_, i) => ({
    type: 'Feature',
    properties: { name: `P${i}`, rank: i },
    geometry: { type: 'Point', coordinates: [6 + i / 100, 46 + i / 100] },
  }));
  return Buffer.from(JSON.stringify({ type: 'FeatureCollection', features }));
}

const short = () => randomUUID().slice(0, 8);

/** What every run's requests use: made once, before the first run. */
interface Fixed {
  ws: string;
  wsName: string;
  service: string;
  /** A second PostGIS service of the workspace (updateService changes it). */
  spare: string;
  spareName: string;
  layer: string;
  layerPublicId: string;
  group: string;
  style: string;
  asset: string;
  apiKey: string;
  role: string;
  mapping: string;
  mosaic: string;
  granule: string;
  deletion: string;
  /** An import in ready_to_publish (preview, get, history). */
  /** An import awaiting its plan (get, history). */
  waiting: string;
  /** An import loaded, ready to publish (preview); an Error when the host could not load one. */
  staged: string | Error;
  importPlan: unknown;
  sessionToken: string;
  /** The embedded PostGIS as a service's connection (its demo role, no TLS). */
  connection: Record<string, unknown>;
}

/** Throwaway items of one run: each is used up (deleted, revoked, ended, moved on) by its request. */
interface PerRun {
  workspace: string;
  service: string;
  layer: string;
  group: string;
  style: string;
  asset: string;
  apiKey: string;
  apiKeyRevoked: string;
  role: string;
  policy: string;
  mapping: string;
  globalMapping: string;
  tileMatrixSet: string;
  granule: string;
  harvestFile: string;
  /** A mosaic and a workspace of this run's own: a cancelled job stays "cancelling" (its workflow never runs), one per mosaic or workspace may be unfinished. */
  jobMosaic: string;
  jobWorkspace: string;
  /** Browser sessions: their headers (cookie and CSRF) and ids. */
  logout: Record<string, string>;
  refresh: Record<string, string>;
  revoke: string;
  imports: {
    created: string;
    uploaded: string;
    awaitingPlan: string;
    ready: string | Error;
    published: string | Error;
    failed: string | Error;
  };
}

function sessionHeaders(cookies: string[]): Record<string, string> {
  const jar = Object.fromEntries(cookies.map((c) => c.split(';')[0]?.split('=') as [string, string]));
  return {
    Cookie: `__Host-session=${jar['__Host-session']}; csrf_token=${jar.csrf_token}`,
    'X-CSRF-Token': jar.csrf_token as string,
  };
}

/** Makes, through the host's API, what every route's request needs for `runs` runs. */
async function prepare(
  stack: ColdStack,
  api: ReturnType<typeof hostClient>,
  runs: number,
  progress: (message: string) => void,
): Promise<{ fixed: Fixed; perRun: PerRun[]; loadImports: () => Promise<void> }> {
  const { must } = api;
  const ws = stack.workspaceId ?? ((await must('GET', '/workspaces/demo')).body.id as string);
  const wsName = (await must('GET', `/workspaces/${ws}`)).body.name as string;
  const W = `/workspaces/${ws}`;
  const serviceId =
    stack.serviceId ??
    ((await must('GET', `${W}/services`)).body.services as { id: string; name: string }[]).find(
      (x) => x.name === 'demo-postgis',
    )?.id;
  if (!serviceId) throw new Error('the demo workspace has no demo-postgis service');
  const tag = short();
  const connection = { ...stack.postgis, sslmode: 'disable' };
  progress('cold requests: making what the requests need through the host');
  const spare = (
    await must('POST', `${W}/services`, {
      name: `cold-spare-${tag}`,
      type: 'postgis',
      connection,
      enabled: false,
    })
  ).body.id as string;
  const layerPublicId = `cold-layer-${tag}`;
  const layer = (
    await must('POST', `${W}/services/${serviceId}/layers`, {
      source_layer: 'places',
      public_id: layerPublicId,
      // A draft: made without reading PostGIS (its first read after the host's start can be slow).
      enabled: false,
    })
  ).body.id as string;
  const group = (
    await must('POST', `${W}/layer-groups`, {
      public_id: `cold-group-${tag}`,
      title: 'Cold group',
      members: [{ resource: layerPublicId }],
    })
  ).body.public_id as string;
  const styleBody = (name: string) => ({
    name,
    format: 'mapbox',
    body: { ...mapboxStyleBody, layers: mapboxStyleBody.layers.filter((l) => l.type === 'line') },
  });
  const style = (await must('POST', `${W}/styles`, styleBody(`cold-style-${tag}`))).body.name as string;
  const asset = `cold-asset-${tag}`;
  await must('PUT', `${W}/style-assets/${asset}`, PNG, undefined, {
    'X-API-Key': stack.apiKey,
    'Content-Type': 'image/png',
  });
  const apiKey = (await must('POST', `${W}/apikeys`, { name: `cold-key-${tag}`, role_id: 'viewer' })).body
    .id as string;
  const role = `cold-role-${tag}`;
  await must('POST', '/roles', { id: role, name: 'Cold role' });
  const mapping = (
    await must('POST', `${W}/claim-mappings`, {
      claim_name: 'groups',
      claim_value: `cold-${tag}`,
      role_id: 'viewer',
    })
  ).body.id as string;

  // The raster mosaic: a root of GeoTIFFs under the host's mosaic directory, one granule in it.
  const root = join(stack.dataDir, 'mosaics', `cold-${tag}`);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'first.tif'), tiff(6, 47));
  for (let r = 0; r < runs; r++) {
    writeFileSync(join(root, `granule-${r}.tif`), tiff(6 + r, 46));
    writeFileSync(join(root, `harvest-${r}.tif`), tiff(6 + r, 45));
  }
  const mosaic = (
    await must('POST', `${W}/services`, {
      name: `cold-mosaic-${tag}`,
      type: 'raster_mosaic',
      connection: { root_uri: root },
    })
  ).body.id as string;
  const M = `${W}/services/${mosaic}/mosaic`;
  const granule = (await must('POST', `${M}/harvest`, { uris: ['first.tif'] })).body.added[0].id as string;

  // A finished deletion operation: a workspace with a service, deleted recursively.
  const doomed = (await must('POST', '/workspaces', { name: `cold-doomed-${tag}` })).body.id as string;
  await must('POST', `/workspaces/${doomed}/services`, {
    name: 'doomed',
    type: 'postgis',
    connection,
    enabled: false,
  });
  const deletion = (await must('DELETE', `/workspaces/${doomed}?recurse=true`, undefined, 202)).body
    .id as string;

  // Imports, each driven by the host's own workflow runner into the state its request needs.
  const I = `${W}/imports`;
  const until = async (id: string, statuses: string[]) => {
    const end = Date.now() + 60_000;
    for (;;) {
      const got = (await must('GET', `${I}/${id}`)).body;
      if (statuses.includes(got.status)) return got;
      if (Date.now() > end) throw new Error(`import ${id} stayed ${got.status} (waiting for ${statuses})`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const file = points(20);
  const created = async () => {
    // Its layer's public id is the cold layer's: discovery stops it at awaiting_plan (the clash).
    const made = await must('POST', I, {
      name: `cold-${short()}`,
      source: { kind: 'upload', filename: 'points.geojson', size_bytes: file.length },
      layers: [{ public_id: layerPublicId }],
    });
    return made.body as { id: string; upload: { url: string; fields: Record<string, string> } };
  };
  const uploaded = async () => {
    const made = await created();
    const boundary = `----cold${short()}`;
    const parts = Object.entries(made.upload.fields).map(
      ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
    );
    const form = Buffer.concat([
      Buffer.from(parts.join('')),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="points.geojson"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      file,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const sent = await api.send(
      'POST',
      '',
      form,
      { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      made.upload.url,
    );
    if (sent.status !== 204)
      throw new Error(`the upload answered ${sent.status}: ${sent.text.slice(0, 200)}`);
    return made.id;
  };
  const awaitingPlan = async () => {
    const id = await uploaded();
    await must('POST', `${I}/${id}/start`, undefined, 202);
    const got = await until(id, ['awaiting_plan', 'ready_to_publish', 'failed']);
    if (got.status !== 'awaiting_plan') throw new Error(`import ${id} is ${got.status}, not awaiting_plan`);
    return { id, plan: got.plan };
  };
  /** The plan of an import awaiting one, with a free public id. */
  const freePlan = (plan: { layers: Record<string, unknown>[] }, srid?: number) => ({
    layers: plan.layers.map((l) => ({
      ...l,
      public_id: `cold-import-${short()}`,
      ...(srid ? { source_srid: srid } : {}),
    })),
  });
  // The states after a load: the host's own workflow runner loads the file into its PostGIS. When
  // it can't, the requests that need such an import fail with the reason (no second attempt).
  let loadFailure: Error | undefined;
  const loaded = async (make: () => Promise<string>): Promise<string | Error> => {
    if (loadFailure) return loadFailure;
    try {
      return await make();
    } catch (error) {
      loadFailure = new Error(`not prepared: the host did not load an import (${(error as Error).message})`);
      return loadFailure;
    }
  };
  const planned = async (srid?: number) => {
    const { id, plan } = await awaitingPlan();
    await must('PUT', `${I}/${id}/plan`, freePlan(plan, srid));
    return id;
  };
  const settle = async (id: string, status: string) => {
    try {
      await until(id, [status]);
    } catch (error) {
      // Stopped, so a load that keeps retrying does not hold the PostGIS while the requests run.
      await api.send('DELETE', `${I}/${id}`);
      throw error;
    }
    return id;
  };
  const ready = () => loaded(async () => settle(await planned(), 'ready_to_publish'));
  const published = () =>
    loaded(async () => {
      const id = await settle(await planned(), 'ready_to_publish');
      await must('POST', `${I}/${id}/publish`, undefined, 202);
      return settle(id, 'published');
    });
  const failed = () => loaded(async () => settle(await planned(998999), 'failed'));
  const waiting = await awaitingPlan();
  const importPlan = freePlan(waiting.plan);
  const notYet = new Error('not prepared yet');

  const issuer = await localIssuer(stack.dataDir);
  const sessionToken = await issuer.sign({ groups: [`cold-${tag}`] }, `cold-user-${tag}`, 3600);
  const login = async () => {
    const reply = await api.send('POST', '/auth/login', { token: sessionToken }, {});
    if (reply.status !== 201) throw new Error(`login answered ${reply.status}: ${reply.text.slice(0, 200)}`);
    return reply;
  };

  const perRun: PerRun[] = [];
  for (let r = 0; r < runs; r++) {
    progress(`cold requests: throwaway items of run ${r + 1}/${runs}`);
    const t = `${tag}-${r}`;
    const workspace = (await must('POST', '/workspaces', { name: `cold-gone-${t}` })).body.id as string;
    const service = (
      await must('POST', `${W}/services`, {
        name: `cold-gone-${t}`,
        type: 'postgis',
        connection,
        enabled: false,
      })
    ).body.id as string;
    const goneLayer = (
      await must('POST', `${W}/services/${serviceId}/layers`, {
        source_layer: 'places',
        public_id: `cold-gone-layer-${t}`,
        enabled: false,
      })
    ).body.id as string;
    const goneGroup = (
      await must('POST', `${W}/layer-groups`, {
        public_id: `cold-gone-group-${t}`,
        title: 'gone',
        members: [{ resource: layerPublicId }],
      })
    ).body.public_id as string;
    const goneStyle = (await must('POST', `${W}/styles`, styleBody(`cold-gone-${t}`))).body.name as string;
    const goneAsset = `cold-gone-${t}`;
    await must('PUT', `${W}/style-assets/${goneAsset}`, PNG, undefined, {
      'X-API-Key': stack.apiKey,
      'Content-Type': 'image/png',
    });
    const key = async () =>
      (await must('POST', `${W}/apikeys`, { name: `cold-gone-${short()}`, role_id: 'viewer' })).body
        .id as string;
    const goneKey = await key();
    const revokedKey = await key();
    await must('DELETE', `${W}/apikeys/${revokedKey}`, undefined, 204);
    const goneRole = `cold-gone-${t}`;
    await must('POST', '/roles', { id: goneRole, name: 'gone' });
    const policy = (
      await must('POST', `/roles/${role}/policies`, {
        workspace: '*',
        service: 'management',
        // A policy's id follows from what it grants: another operation each run.
        operation: routes.filter((op) => op.permission === 'read')[r % 20]?.operationId,
        action: 'read',
      })
    ).location
      ?.split('/')
      .at(-1) as string;
    const goneMapping = (
      await must('POST', `${W}/claim-mappings`, {
        claim_name: 'groups',
        claim_value: `gone-${t}`,
        role_id: 'viewer',
      })
    ).body.id as string;
    const goneGlobal = (
      await must('POST', '/claim-mappings', {
        claim_name: 'groups',
        claim_value: `cold-gone-${t}`,
        role_id: 'super_admin',
      })
    ).body.id as string;
    const tms = `ColdGone${t.replace(/-/g, '')}`;
    await must('PUT', `/tile-matrix-sets/${tms}`, tileMatrixSet(tms));
    const goneGranule = (await must('POST', `${M}/harvest`, { uris: [`granule-${r}.tif`] })).body.added[0]
      .id as string;
    const logout = sessionHeaders((await login()).cookies);
    const refresh = sessionHeaders((await login()).cookies);
    const revoke = (await login()).body.session_id as string;
    const imports = {
      created: (await created()).id,
      uploaded: await uploaded(),
      awaitingPlan: (await awaitingPlan()).id,
      ready: notYet as string | Error,
      published: notYet as string | Error,
      failed: notYet as string | Error,
    };
    perRun.push({
      workspace,
      service,
      layer: goneLayer,
      group: goneGroup,
      style: goneStyle,
      asset: goneAsset,
      apiKey: goneKey,
      apiKeyRevoked: revokedKey,
      role: goneRole,
      policy,
      mapping: goneMapping,
      globalMapping: goneGlobal,
      tileMatrixSet: tms,
      granule: goneGranule,
      harvestFile: `harvest-${r}.tif`,
      jobMosaic: (
        await must('POST', `${W}/services`, {
          name: `cold-jobs-${t}`,
          type: 'raster_mosaic',
          connection: { root_uri: root },
        })
      ).body.id as string,
      jobWorkspace: (await must('POST', '/workspaces', { name: `cold-jobs-${t}` })).body.id as string,
      logout,
      refresh,
      revoke,
      imports,
    });
  }
  const result = {
    fixed: {
      ws,
      wsName,
      service: serviceId,
      spare,
      spareName: `cold-spare-${tag}`,
      layer,
      layerPublicId,
      group,
      style,
      asset,
      apiKey,
      role,
      mapping,
      mosaic,
      granule,
      deletion,
      waiting: waiting.id,
      staged: notYet as string | Error,
      importPlan,
      sessionToken,
      connection,
    },
    perRun,
  };
  /** The imports the host must load (ready to publish, published, failed): made last, see LOADED. */
  const loadImports = async () => {
    progress('cold requests: imports the host loads (ready to publish, published, failed)');
    result.fixed.staged = await ready();
    for (const run of perRun) {
      run.imports.ready = await ready();
      run.imports.published = await published();
      run.imports.failed = await failed();
    }
  };
  return { ...result, loadImports };
}

/**
 * The requests that need an import the host has loaded: measured after all the others, once the
 * host has loaded those imports, so that a load that fails (and the embedded PostGIS with it) can't
 * take the other routes' requests down.
 */
const LOADED: ReadonlySet<string> = new Set([
  'previewImport',
  'publishImport',
  'rollbackImport',
  'retryImport',
]);

/** The tile matrix set example's shape under another id. */
function tileMatrixSet(id: string) {
  const example = routes.find((r) => r.operationId === 'putTileMatrixSet')?.examples?.request as Record<
    string,
    unknown
  >;
  return { ...example, id };
}

// ---- the requests -------------------------------------------------------------------------------

interface RouteRequest {
  method: string;
  path: string;
  pathParameters: Record<string, string> | null;
  query?: Record<string, string>;
  body?: unknown;
  /** Raw bytes (base64 in the event) with their content type. */
  bytes?: { data: Buffer; contentType: string };
  /** The caller's headers instead of the super_admin key (`{}`: none, a public route). */
  as?: Record<string, string>;
}

/** What one run's requests made that later requests of the same run use (a queued job's id). */
type Made = Map<string, string>;

interface Case {
  operation: Operation;
  request: (run: number, made: Made) => RouteRequest;
  /** Keeps what a later request of the run needs from this one's answer. */
  keep?: (body: any, made: Made) => void;
}

const byId = new Map(routes.map((op) => [op.operationId, op]));

/** The request of every route: the operation's example where it fits, with this run's ids. */
function requests(f: Fixed, perRun: PerRun[]): Record<string, Omit<Case, 'operation'>> {
  const W = { workspace: f.ws };
  const S = { ...W, service: f.service };
  const M = { ...W, service: f.mosaic };
  const example = (id: string) => byId.get(id)?.examples?.request as Record<string, unknown>;
  const get =
    (params: Record<string, string> | null = null, query?: Record<string, string>) =>
    () => ({
      method: 'GET',
      path: '',
      pathParameters: params,
      ...(query ? { query } : {}),
    });
  const run = (r: number) => perRun[r] as PerRun;
  const made = (m: Made, key: string) => {
    const v = m.get(key);
    if (!v) throw new Error(`needs the ${key} an earlier request of this run makes (it failed)`);
    return v;
  };
  const prepared = (item: string | Error) => {
    if (item instanceof Error) throw item;
    return item;
  };
  const publicGet = () => ({ method: 'GET', path: '', pathParameters: null, as: {} });
  return {
    // meta and auth
    getHealth: { request: publicGet },
    getOpenAPI: { request: publicGet },
    getReadiness: { request: publicGet },
    getConsoleConfig: { request: publicGet },
    getAuthMe: { request: get() },
    listBrowserSessions: { request: get() },
    login: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: null,
        body: { token: f.sessionToken },
        as: {},
      }),
    },
    refreshSession: {
      request: (r) => ({ method: 'POST', path: '', pathParameters: null, as: run(r).refresh }),
    },
    logout: { request: (r) => ({ method: 'POST', path: '', pathParameters: null, as: run(r).logout }) },
    revokeBrowserSession: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { session: run(r).revoke } }),
    },
    // workspaces
    createWorkspace: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: null,
        body: { name: `cold-new-${short()}` },
      }),
    },
    getWorkspace: { request: get(W) },
    getWorkspaceDeletionPlan: { request: get(W) },
    getWorkspaceSummary: { request: get(W) },
    listWorkspaces: { request: get(null, { limit: '50' }) },
    updateWorkspace: {
      request: () => ({
        method: 'PUT',
        path: '',
        pathParameters: W,
        body: { description: `cold ${short()}` },
      }),
    },
    deleteWorkspace: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { workspace: run(r).workspace } }),
    },
    // API keys
    createAPIKey: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: W,
        body: { name: `cold-${short()}`, role_id: 'viewer' },
      }),
    },
    getAPIKey: { request: get({ ...W, keyId: f.apiKey }) },
    listAPIKeys: { request: get(W) },
    revokeAPIKey: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...W, keyId: run(r).apiKey } }),
    },
    deleteAPIKey: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...W, keyId: run(r).apiKeyRevoked } }),
    },
    // roles
    createRole: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: null,
        body: { id: `cold-new-${short()}`, name: 'Cold' },
      }),
    },
    getRole: { request: get({ roleId: f.role }) },
    getRoleDeletionPlan: { request: get({ roleId: f.role }) },
    listRolePolicies: { request: get({ roleId: f.role }) },
    listRoles: { request: get() },
    listWorkspaceRoles: { request: get(W) },
    addRolePolicy: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: { roleId: f.role },
        body: { workspace: '*', service: 'management', operation: 'createLayer', action: 'write' },
      }),
    },
    removeRolePolicy: {
      request: (r) => ({
        method: 'DELETE',
        path: '',
        pathParameters: { roleId: f.role, policyId: run(r).policy },
      }),
    },
    deleteRole: { request: (r) => ({ method: 'DELETE', path: '', pathParameters: { roleId: run(r).role } }) },
    // claim mappings
    createClaimMapping: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: W,
        body: { claim_name: 'groups', claim_value: `cold-new-${short()}`, role_id: 'viewer' },
      }),
    },
    createGlobalClaimMapping: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: null,
        body: { claim_name: 'groups', claim_value: `cold-new-${short()}`, role_id: 'super_admin' },
      }),
    },
    getClaimMapping: { request: get({ ...W, mappingId: f.mapping }) },
    listClaimMappings: { request: get(W) },
    listGlobalClaimMappings: { request: get() },
    deleteClaimMapping: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...W, mappingId: run(r).mapping } }),
    },
    deleteGlobalClaimMapping: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { mappingId: run(r).globalMapping } }),
    },
    // services
    createService: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: W,
        body: { name: `cold-new-${short()}`, type: 'postgis', connection: f.connection, enabled: true },
      }),
    },
    getService: { request: get(S) },
    getServiceDeletionPlan: { request: get(S) },
    listServices: { request: get(W) },
    discoverLayers: { request: () => ({ method: 'POST', path: '', pathParameters: S }) },
    testExistingServiceConnection: { request: () => ({ method: 'POST', path: '', pathParameters: S }) },
    testNewServiceConnection: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: W,
        body: { type: 'postgis', connection: f.connection },
      }),
    },
    updateService: {
      request: () => ({
        method: 'PUT',
        path: '',
        pathParameters: { ...W, service: f.spare },
        body: { name: f.spareName, type: 'postgis', connection: f.connection, enabled: false },
      }),
    },
    validateSQLView: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: S,
        body: { sql: 'SELECT * FROM places' },
      }),
    },
    deleteService: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...W, service: run(r).service } }),
    },
    // deletions
    getDeletionOperation: { request: get({ id: f.deletion }) },
    listDeletionOperations: { request: get() },
    retryDeletionOperation: {
      request: () => ({ method: 'POST', path: '', pathParameters: { id: f.deletion } }),
    },
    // layers
    createLayer: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: S,
        body: { source_layer: 'places', public_id: `cold-${short()}`, enabled: true },
      }),
    },
    getLayer: { request: get({ ...S, layer: f.layer }) },
    listLayers: { request: get(S) },
    listWorkspaceLayers: { request: get(W) },
    updateLayer: {
      request: () => ({
        method: 'PUT',
        path: '',
        pathParameters: { ...S, layer: f.layer },
        body: { title: `Cold ${short()}` },
      }),
    },
    deleteLayer: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...S, layer: run(r).layer } }),
    },
    // layer groups
    createLayerGroup: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: W,
        body: { public_id: `cold-${short()}`, title: 'Cold', members: [{ resource: f.layerPublicId }] },
      }),
    },
    getLayerGroup: { request: get({ ...W, group: f.group }) },
    listLayerGroups: { request: get(W) },
    updateLayerGroup: {
      request: () => ({
        method: 'PUT',
        path: '',
        pathParameters: { ...W, group: f.group },
        body: { public_id: f.group, title: `Cold ${short()}`, members: [{ resource: f.layerPublicId }] },
      }),
    },
    deleteLayerGroup: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...W, group: run(r).group } }),
    },
    // the raster mosaic
    getMosaic: { request: get(M) },
    getMosaicGranule: { request: get({ ...M, granule: f.granule }) },
    listMosaicGranules: { request: get(M) },
    harvestMosaicGranules: {
      request: (r) => ({ method: 'POST', path: '', pathParameters: M, body: { uris: [run(r).harvestFile] } }),
    },
    deleteMosaicGranule: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...M, granule: run(r).granule } }),
    },
    createMosaicHarvestJob: {
      request: (r) => ({
        method: 'POST',
        path: '',
        pathParameters: { ...W, service: run(r).jobMosaic },
        body: { pattern: 'first.tif' },
      }),
      keep: (body, m) => m.set('harvestJob', body.id),
    },
    getMosaicHarvestJob: {
      request: (r, m) => ({
        method: 'GET',
        path: '',
        pathParameters: { ...W, service: run(r).jobMosaic, job: made(m, 'harvestJob') },
      }),
    },
    listMosaicHarvestJobs: { request: get(M) },
    cancelMosaicHarvestJob: {
      request: (r, m) => ({
        method: 'DELETE',
        path: '',
        pathParameters: { ...W, service: run(r).jobMosaic, job: made(m, 'harvestJob') },
      }),
    },
    // settings: the examples
    ...Object.fromEntries(
      ['OGCAPI', 'OGCTilesAPI', 'WCS', 'WFS', 'WMS', 'WMTS'].flatMap((kind) => [
        [`get${kind}Settings`, { request: get(W) }],
        [
          `update${kind}Settings`,
          {
            request: () => ({
              method: 'PUT',
              path: '',
              pathParameters: W,
              body: settingsBody(example(`update${kind}Settings`), f),
            }),
          },
        ],
      ]),
    ),
    // tile matrix sets
    getTileMatrixSet: { request: get({ tileMatrixSet: 'WebMercatorQuad' }) },
    listTileMatrixSets: { request: get() },
    listWorkspaceTileMatrixSets: { request: get(W) },
    putTileMatrixSet: {
      request: () => {
        const id = `ColdNew${short()}`;
        return { method: 'PUT', path: '', pathParameters: { tileMatrixSet: id }, body: tileMatrixSet(id) };
      },
    },
    deleteTileMatrixSet: {
      request: (r) => ({
        method: 'DELETE',
        path: '',
        pathParameters: { tileMatrixSet: run(r).tileMatrixSet },
      }),
    },
    // styles and assets
    createStyle: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: W,
        // The API's example style without its icon layer (whose asset this workspace lacks).
        body: {
          name: `cold-${short()}`,
          format: 'mapbox',
          body: { ...mapboxStyleBody, layers: mapboxStyleBody.layers.filter((l) => l.type === 'line') },
        },
      }),
    },
    getStyle: { request: get({ ...W, style: f.style }) },
    listStyles: { request: get(W) },
    updateStyle: {
      request: () => ({
        method: 'PUT',
        path: '',
        pathParameters: { ...W, style: f.style },
        body: {
          name: f.style,
          format: 'mapbox',
          title: `Cold ${short()}`,
          body: { ...mapboxStyleBody, layers: mapboxStyleBody.layers.filter((l) => l.type === 'line') },
        },
      }),
    },
    deleteStyle: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...W, style: run(r).style } }),
    },
    getStyleAsset: { request: get({ ...W, asset: f.asset }) },
    listStyleAssets: { request: get(W) },
    putStyleAsset: {
      request: () => ({
        method: 'PUT',
        path: '',
        pathParameters: { ...W, asset: `cold-${short()}` },
        bytes: { data: PNG, contentType: 'image/png' },
      }),
    },
    deleteStyleAsset: {
      request: (r) => ({ method: 'DELETE', path: '', pathParameters: { ...W, asset: run(r).asset } }),
    },
    // imports
    createImport: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: W,
        body: {
          name: `cold-${short()}`,
          source: { kind: 'upload', filename: 'points.geojson', size_bytes: 1000 },
        },
      }),
    },
    getImport: { request: get({ ...W, import: f.waiting }) },
    getImportHistory: { request: get({ ...W, import: f.waiting }) },
    listImports: { request: get(W) },
    previewImport: {
      request: () => ({
        method: 'GET',
        path: '',
        pathParameters: { ...W, import: prepared(f.staged) },
        query: { limit: '1' },
      }),
    },
    startImport: {
      request: (r) => ({
        method: 'POST',
        path: '',
        pathParameters: { ...W, import: run(r).imports.uploaded },
      }),
    },
    setImportPlan: {
      request: (r) => ({
        method: 'PUT',
        path: '',
        pathParameters: { ...W, import: run(r).imports.awaitingPlan },
        body: f.importPlan,
      }),
    },
    publishImport: {
      request: (r) => ({
        method: 'POST',
        path: '',
        pathParameters: { ...W, import: prepared(run(r).imports.ready) },
      }),
    },
    rollbackImport: {
      request: (r) => ({
        method: 'POST',
        path: '',
        pathParameters: { ...W, import: prepared(run(r).imports.published) },
      }),
    },
    retryImport: {
      request: (r) => ({
        method: 'POST',
        path: '',
        pathParameters: { ...W, import: prepared(run(r).imports.failed) },
      }),
    },
    cancelImport: {
      request: (r) => ({
        method: 'DELETE',
        path: '',
        pathParameters: { ...W, import: run(r).imports.created },
      }),
    },
    // audit and integrity
    listAuditEvents: { request: get(null, { limit: '50' }) },
    listWorkspaceAudit: { request: get(W) },
    getCatalogIntegrity: { request: get(null, { workspace: f.ws }) },
    repairCatalogIntegrity: {
      request: () => ({
        method: 'POST',
        path: '',
        pathParameters: null,
        query: { workspace: f.ws, confirm: 'true' },
      }),
    },
    // the tile cache
    createTileCacheJob: {
      request: (r) => ({
        method: 'POST',
        path: '',
        pathParameters: { workspace: run(r).jobWorkspace },
        body: { type: 'truncate' },
      }),
      keep: (body, m) => m.set('tileCacheJob', body.id),
    },
    getTileCacheJob: {
      request: (r, m) => ({
        method: 'GET',
        path: '',
        pathParameters: { workspace: run(r).jobWorkspace, job: made(m, 'tileCacheJob') },
      }),
    },
    getTileCacheJobProgress: {
      request: (r, m) => ({
        method: 'GET',
        path: '',
        pathParameters: { workspace: run(r).jobWorkspace, job: made(m, 'tileCacheJob') },
      }),
    },
    listTileCacheJobs: { request: get(W) },
    cancelTileCacheJob: {
      request: (r, m) => ({
        method: 'DELETE',
        path: '',
        pathParameters: { workspace: run(r).jobWorkspace, job: made(m, 'tileCacheJob') },
      }),
    },
    getPersistentTileCacheStats: { request: get(W) },
    getCacheStats: { request: get() },
    clearAllCaches: { request: () => ({ method: 'POST', path: '', pathParameters: null }) },
    clearCacheByType: {
      request: () => ({ method: 'POST', path: '', pathParameters: { cacheType: 'descriptions' } }),
    },
    clearWorkspaceCache: { request: () => ({ method: 'POST', path: '', pathParameters: W }) },
  };
}

/** A settings example without the names of the example's own styles and layers. */
function settingsBody(example: Record<string, unknown>, f: Fixed): Record<string, unknown> {
  const body = { ...example };
  if ('default_style' in body) body.default_style = f.style;
  return body;
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
function authorizerEvent(op: Operation, request: RouteRequest, headers: Record<string, string>) {
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
function proxyEvent(
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

// ---- measuring ----------------------------------------------------------------------------------

export interface ColdRequest {
  /** The operation (or `authorizer`, or the floor). */
  id: string;
  bundle: string;
  /** Minified bundle bytes (the sidecars it loads not included). */
  bytes: number;
  importMs: number[];
  requestMs: number[];
  /** The statuses answered, one per run. */
  statuses: number[];
  /** Why a run failed: its status and body, or the error. */
  error?: string;
}

const FLOOR = 'floor/floor-handler';
const AUTHORIZER = 'authorizer/index';

function bundleName(handler: string): string {
  return handler.replace(/^functions\//, '').replace(/\.ts$/, '');
}

/**
 * The floor, the authorizer and every route, `runs` times each, round-robin (each run goes through
 * all of them, in the route table's order with a run's producers before the requests that use
 * what they made), each one a fresh process: import time and the first request's time (a route's
 * authorizer context made beforehand, untimed). Two processes at a time (`parallel`, 2 at most): the
 * floor runs among them, so it meets the same contention.
 */
export async function measureColdRequests(
  bundles: readonly Bundle[],
  stack: ColdStack,
  runs: number,
  progress: (message: string) => void,
  parallel = 2,
): Promise<ColdRequest[]> {
  const standIn = await startStepFunctionsStandIn();
  const api = hostClient(stack);
  try {
    const env = await lambdaEnv(stack, standIn.endpoint);
    const byName = new Map(bundles.map((b) => [b.name, b]));
    const authorizer = byName.get(AUTHORIZER);
    const { fixed, perRun, loadImports } = await prepare(stack, api, runs, progress);
    const table = requests(fixed, perRun);
    const cases: Case[] = routes.map((operation) => ({
      operation,
      ...(table[operation.operationId] ?? {
        request: () => {
          throw new Error('no request written for this route');
        },
      }),
    }));
    // A run's producers first: the requests that use a queued job come after the one that queues it.
    const consumers = new Set([
      'getMosaicHarvestJob',
      'cancelMosaicHarvestJob',
      'getTileCacheJob',
      'getTileCacheJobProgress',
      'cancelTileCacheJob',
    ]);
    cases.sort(
      (a, b) =>
        Number(consumers.has(a.operation.operationId)) - Number(consumers.has(b.operation.operationId)),
    );
    const results: ColdRequest[] = [
      { id: 'FLOOR', bundle: FLOOR },
      { id: 'authorizer', bundle: AUTHORIZER },
      ...cases.map((c) => ({ id: c.operation.operationId, bundle: bundleName(c.operation.handler) })),
    ].map((r) => ({
      ...r,
      bytes: byName.get(r.bundle)?.bytes ?? 0,
      importMs: [],
      requestMs: [],
      statuses: [],
    }));
    const superAdmin = { 'X-API-Key': stack.apiKey };
    // The authorizer's answer depends on the request's path and credentials: made once per pair.
    const contexts = new Map<string, Record<string, unknown>>();
    const authorize = async (op: Operation, request: RouteRequest, headers: Record<string, string>) => {
      const event = authorizerEvent(op, request, headers);
      const key = `${op.method} ${event.path} ${JSON.stringify(headers)}`;
      const known = contexts.get(key);
      if (known) return known;
      if (!authorizer || authorizer.buildError) throw new Error('the authorizer does not build');
      const out = await probe(authorizer.file, event, 'authorize', env);
      const m = /^BENCH_AUTHORIZED (.*)$/m.exec(out);
      if (!m?.[1]) throw new Error(`the authorizer answered nothing usable: ${out.slice(0, 300)}`);
      const result = JSON.parse(m[1]) as {
        principalId: string;
        context?: Record<string, unknown>;
        policyDocument?: { Statement?: { Effect: string }[] };
      };
      if (!result.policyDocument?.Statement?.some((s) => s.Effect === 'Allow'))
        throw new Error(`the authorizer denied the request: ${m[1].slice(0, 300)}`);
      const context = { ...(result.context ?? {}), principalId: result.principalId };
      contexts.set(key, context);
      return context;
    };
    const record = (result: ColdRequest, out: string, expected: (status: number) => boolean) => {
      const m = /^BENCH_COLD (\S+) (\S+) (\d+)$/m.exec(out);
      if (!m) throw new Error(`no timing: ${out.slice(0, 300)}`);
      const status = Number(m[3]);
      const body = /^BENCH_BODY (.*)$/m.exec(out)?.[1];
      const text = body ? (JSON.parse(body) as string) : '';
      result.statuses.push(status);
      if (!expected(status)) throw new Error(`answered ${status}: ${text.slice(0, 300)}`);
      result.importMs.push(Number(m[1]));
      result.requestMs.push(Number(m[2]));
      return text;
    };
    const one = async (index: number, run: number, made: Made) => {
      const result = results[index] as ColdRequest;
      const bundle = byName.get(result.bundle);
      try {
        if (!bundle || bundle.buildError) throw new Error('the bundle does not build');
        if (result.id === 'FLOOR') {
          const event = { pathParameters: { id: fixed.ws } };
          record(result, await probe(bundle.file, event, 'request', env), (s) => s === 200);
          return;
        }
        if (result.id === 'authorizer') {
          const op = byId.get('getWorkspace') as Operation;
          const request: RouteRequest = { method: 'GET', path: '', pathParameters: { workspace: fixed.ws } };
          const event = authorizerEvent(op, request, superAdmin);
          record(result, await probe(bundle.file, event, 'authorize', env), (s) => s === 200);
          return;
        }
        const c = cases[index - 2] as Case;
        const op = c.operation;
        const request = c.request(run, made);
        const auth = request.as ?? superAdmin;
        const context = op.permission === 'public' ? null : await authorize(op, request, auth);
        const out = await probe(bundle.file, proxyEvent(op, request, auth, context), 'request', env);
        const documented = Object.keys(op.responses)
          .map(Number)
          .filter((s) => s >= 200 && s < 300);
        const text = record(result, out, (s) => documented.includes(s));
        if (c.keep) c.keep(JSON.parse(text), made);
      } catch (error) {
        const message = (error as Error).message;
        // The first failure is kept; a later run that fails otherwise adds its reason.
        result.error = result.error ? result.error : `run ${run + 1}: ${message}`;
      }
    };
    // Warm the disk cache and the node binary (not measured).
    const floor = byName.get(FLOOR);
    if (floor) await probe(floor.file, { pathParameters: { id: fixed.ws } }, 'request', env).catch(() => '');
    const rounds = async (indexes: number[], what: string) => {
      for (let run = 0; run < runs; run++) {
        progress(`cold requests: run ${run + 1}/${runs} (${indexes.length} ${what})`);
        const made: Made = new Map();
        let next = 0;
        const worker = async () => {
          for (let at = next++; at < indexes.length; at = next++) await one(indexes[at] as number, run, made);
        };
        await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, 2)) }, worker));
      }
    };
    const all = results.map((_, i) => i);
    await rounds(
      all.filter((i) => !LOADED.has((results[i] as ColdRequest).id)),
      'routes and the authorizer',
    );
    await loadImports();
    await rounds(
      all.filter((i) => LOADED.has((results[i] as ColdRequest).id)),
      'routes that need an import the host loaded',
    );
    return results;
  } finally {
    api.agent.destroy();
    await new Promise((r) => standIn.server.close(r));
  }
}

/**
 * What the section adds to a run's watchdog: ~125 fresh processes per run (and the authorizer's,
 * the first run), the items made beforehand and the host's loads, on a busy machine.
 */
export const COLD_REQUESTS_WATCHDOG_MS = 25 * 60_000;

/** Cold request ≤ this × the floor's (issue #27, target 2). */
export const COLD_REQUEST_MAX = 1.5;

/** The section's table and its verdict lines: import, first request and both, against the floor's. */
export function coldRequestSection(results: readonly ColdRequest[], verdicts: string[] = []): string {
  const floor = results.find((r) => r.id === 'FLOOR');
  const floorTotal =
    floor && !floor.error && floor.importMs.length
      ? median(floor.importMs) + median(floor.requestMs)
      : undefined;
  let pass = 0;
  const measured = results.filter((r) => r !== floor);
  const failed: string[] = [];
  const rows = results.map((r) => {
    const isFloor = r === floor;
    const kb = r.bytes ? (r.bytes / 1024).toFixed(1) : '';
    if (r.error || !r.importMs.length) {
      failed.push(r.id);
      return [
        isFloor ? `**${r.id}**` : r.id,
        `\`${r.bundle}\``,
        kb,
        '',
        '',
        '',
        '',
        `${r.importMs.length}`,
        `**FAIL** (${(r.error ?? 'not measured').replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 240)})`,
      ];
    }
    const imp = median(r.importMs);
    const req = median(r.requestMs);
    const ratio = floorTotal ? (imp + req) / floorTotal : undefined;
    const ok = ratio !== undefined && ratio <= COLD_REQUEST_MAX;
    if (!isFloor && ok) pass++;
    if (!isFloor && !ok) failed.push(r.id);
    return [
      isFloor ? `**${r.id}**` : r.id,
      `\`${r.bundle}\``,
      kb,
      imp.toFixed(1),
      req.toFixed(1),
      (imp + req).toFixed(1),
      ratio === undefined ? 'n/a' : `${ratio.toFixed(2)}×`,
      String(r.importMs.length),
      isFloor ? '—' : ok ? 'PASS' : '**FAIL**',
    ];
  });
  verdicts.push(
    `- cold request (import + first request) ≤ ${COLD_REQUEST_MAX}× the floor's` +
      `${floorTotal ? ` (${(COLD_REQUEST_MAX * floorTotal).toFixed(1)} ms)` : ''}, every route and the authorizer: ` +
      `${pass === measured.length ? 'PASS' : '**FAIL**'} (${pass} of ${measured.length} within` +
      `${failed.length ? `; not: ${failed.join(', ')}` : ''})`,
  );
  const head = [
    'route',
    'bundle',
    'bundle KB',
    'import ms',
    'first request ms',
    'cold total ms',
    '× floor',
    'runs',
    `≤ ${COLD_REQUEST_MAX}×`,
  ];
  return [
    '### Cold requests: every route, import plus its first request',
    '',
    "Every route of the route table and the authorizer: a fresh `node` imports the route's bundle (as built above) " +
      "and answers one valid request with it, against this run's DynamoDB Local and embedded PostGIS — what a Lambda " +
      'does on its first invocation (the init, then the handler; its first connections to DynamoDB and PostGIS are in ' +
      'the request). The floor is `bench/floor-handler.ts` answering one GetItem the same way (import plus the request, a ' +
      "fresh connection). A route's authorizer context comes from the authorizer bundle, run before in a process of its " +
      "own and not timed (API Gateway runs the authorizer as a Lambda of its own); the authorizer's row is its own cold " +
      'request (import plus the authorization of a getWorkspace request with the bootstrap API key). What a request needs ' +
      "is made beforehand through the local host's API (a layer, a key, a session, an import loaded to the state the " +
      'request needs; one throwaway item per run for each request that deletes or moves one on). A workflow a request ' +
      'starts goes to a Step Functions stand-in on 127.0.0.1 that accepts the StartExecution (the execution never runs). ' +
      'Each route runs in a fresh process per run, the routes round-robin, two processes at a time (the floor among them); medians. A run that does not answer a ' +
      "documented 2xx fails its route, with the status and body. Bundle KB: the route's own bundle, not the sidecars " +
      'it loads on its path (they are in the cold time).',
    '',
    `| ${head.join(' | ')} |`,
    `| ${head.map((_, i) => (i < 2 ? '---' : i === head.length - 1 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
