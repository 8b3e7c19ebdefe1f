import { randomUUID } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { parseAllowList } from '#datasources/network-policy.ts';
import { originOf } from '#http/console-headers.ts';
import { gatewayErrorBody, gatewayErrors } from '#http/gateway-responses.ts';
import { errorFields, logger } from '#log/logger.ts';
import { localUploadSecret } from '#platform/import-uploads.ts';
import { stopLocalWorkflows, useLocalAdapters } from '#wiring/local-mode.ts';
import { CONSOLE_DIST } from '../../console/build.ts';
import { accessLog, REQUEST_ID_HEADER } from './access-log.ts';
import { bootstrap } from './bootstrap.ts';
import { startChangeStream } from './change-stream.ts';
import { consoleResponse } from './console-site.ts';
import { installDataAccessCheck } from './data-access.ts';
import { type DynamoLocal, ensureTable, startDynamoLocal } from './dynamodb.ts';
import { eventFeed } from './event-feed.ts';
import { localCertificate, localIssuer, localSecretKey } from './files.ts';
import {
  gatewayError,
  handleRequest,
  httpsRequired,
  isParsableTarget,
  malformedRequest,
  type OutgoingResponse,
} from './gateway.ts';
import { LOCAL_ISSUER_PATH, localOidcProvider } from './oidc-provider.ts';
import { startEmbeddedPostgis } from './postgis.ts';
import { tokenBuckets } from './rate-limit.ts';
import { startLocalSweeps } from './sweeps.ts';
import { handleUpload, LOCAL_UPLOAD_PATH, startUploadExpiry } from './uploads.ts';
import { LocalWorkflowRunner } from './workflows.ts';

/** Options of the local host; every one has an environment variable (see main.ts). */
export interface LocalHostOptions {
  dataDir: string;
  port: number;
  httpPort: number;
  dynamoPort: number;
  /** Use this DynamoDB instead of starting DynamoDB Local. */
  dynamoEndpoint?: string;
  tableName: string;
  /** The usage plan's rate and burst: per usage key, so per workspace (ADR 0111). */
  rateLimitRps: number;
  rateLimitBurst: number;
  /** The stage's method throttle: per method, all clients together (the deployment's ceiling). */
  stageRateLimitRps: number;
  stageRateLimitBurst: number;
  maxBodyBytes?: number;
  /** Skip creating the table and bootstrap data (used to simulate a store outage). */
  skipBootstrap?: boolean;
  /**
   * Resume the unfinished work found in the table at start, and sweep stuck work (default true).
   * False for a second host on a table another host serves: that host's executions are its own,
   * and a second runner would run them again with its own data dir and settings.
   */
  resumeWork?: boolean;
  /** Port of the embedded PostGIS (0 = any free port); undefined = don't start it. */
  postgisPort?: number;
  /**
   * Non-public database hosts services may connect to besides the embedded PostGIS, which is
   * always allowed (exactly its 127.0.0.1 port; ADR 0074).
   */
  allowedDatabaseHosts?: string;
  /** The directory local mosaic roots must lie under; default `<dataDir>/mosaics` (ADR 0074). */
  mosaicRoot?: string;
  /** The persistent tile cache's directory (ADR 0139); default `<data dir>/tile-cache`. */
  tileCacheDir?: string;
  /** The directory import URIs (paths, file://) must lie under; default `<dataDir>/import-sources` (ADR 0083). */
  importRoot?: string;
  /** Largest import file in bytes (default 2 GiB). */
  importMaxBytes?: number;
  /** One access line per request on stdout (default on; `GEOPLANE_ACCESS_LOG=off`; ADR 0090). */
  accessLog?: boolean;
  /** The built console served at /console/ (default console/dist; `GEOPLANE_CONSOLE_DIST`; ADR 0098). */
  consoleDist?: string;
}

/** A running local host. */
export interface LocalHost {
  url: string;
  dynamoEndpoint: string;
  httpUrl: string;
  apiKey?: string;
  bootstrapCreated: boolean;
  close(): Promise<void>;
}

/** Where the local host serves the local issuer's JWKS. */
export const LOCAL_JWKS_PATH = '/local-issuer/.well-known/jwks.json';

// API Gateway refuses payloads over 10 MB itself; the Lambda limit (6 MB) is lower, so stop there.
const GATEWAY_BODY_CEILING = 6 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > GATEWAY_BODY_CEILING) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function write(res: ServerResponse, out: OutgoingResponse): void {
  // The request id travels in a header (as API Gateway's), so the access log can name it.
  const id = Object.entries(out.headers).find(
    ([k]) => k.toLowerCase() === REQUEST_ID_HEADER.toLowerCase(),
  )?.[1];
  if (id !== undefined) res.setHeader(REQUEST_ID_HEADER, id);
  const headers = Object.fromEntries(
    Object.entries(out.headers).filter(([k]) => k.toLowerCase() !== REQUEST_ID_HEADER.toLowerCase()),
  );
  res.writeHead(out.statusCode, { ...headers, 'Content-Length': Buffer.byteLength(out.body) });
  res.end(out.body);
}

/** What the host keeps in its data dir: made private with everything inside (ADR 0106). */
const HOST_ENTRIES = [
  'dynamodb',
  'postgis',
  'postgis.json',
  'postgis.lock',
  'imports',
  'tls-key.pem',
  'tls-cert.pem',
  'secret.key',
  'issuer-key.json',
  'issuer-url',
  'bootstrap.json',
];

/** Folders the host makes for the operator's files: the folders are made private, their files are left as they are. */
const OPERATOR_FOLDERS = ['import-sources', 'mosaics'];

/**
 * Makes the data dir its owner's only (ADR 0106): what the host and its children create from now on
 * (umask 077: DynamoDB Local's file, the embedded PostGIS, uploads) and what an older host left
 * readable (directories 0700, files without group and other bits). Only the host's own entries are
 * walked (symbolic links not followed); a data dir that is not its user's or is a shared folder
 * (sticky, like /tmp) is left as it is.
 */
function makePrivate(dataDir: string): void {
  if (isMainThread) process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tighten = (path: string) => {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink() || (info.mode & 0o077) === 0) return;
      if (info.uid !== process.getuid?.() || info.mode & 0o1000) return;
      chmodSync(path, info.isDirectory() ? 0o700 : info.mode & 0o700);
    } catch {
      // Not ours to change (or gone): left as it is.
    }
  };
  tighten(dataDir);
  for (const folder of OPERATOR_FOLDERS) tighten(join(dataDir, folder));
  for (const entry of HOST_ENTRIES) {
    const path = join(dataDir, entry);
    tighten(path);
    let names: string[] = [];
    try {
      if (lstatSync(path).isDirectory()) names = readdirSync(path, { recursive: true }).map(String);
    } catch {
      continue;
    }
    for (const name of names) tighten(join(path, name));
  }
}

/**
 * The local host's last resort (ADR 0106): an error that no path of the host caught is logged
 * (`last_resort: true`) and the host keeps serving, rather than exiting and taking DynamoDB Local
 * and the embedded PostGIS with it. Every path catches its own errors; the tests check that none
 * reaches this. Installed by `main.ts` once the host serves (a failed start still exits).
 */
export function keepServingOnUncaughtErrors(): void {
  process.on('unhandledRejection', (reason) =>
    logger.error('unhandled rejection; the local host keeps serving', {
      last_resort: true,
      ...errorFields(reason),
    }),
  );
  process.on('uncaughtException', (error, origin) =>
    logger.error('uncaught exception; the local host keeps serving', {
      last_resort: true,
      origin,
      ...errorFields(error),
    }),
  );
}

/**
 * The answer of a request whose path let an error through (ADR 0106): logged, and a 5xx when
 * nothing was sent yet, else the connection is ended. Never throws.
 */
function lastAnswer(req: IncomingMessage, res: ServerResponse, error: unknown): void {
  try {
    logger.error('local host failed to answer', errorFields(error));
    req.resume();
    if (res.headersSent) res.destroy();
    else write(res, gatewayError(gatewayErrors.default5xx, randomUUID(), { Connection: 'close' }));
  } catch {
    res.destroy();
  }
}

/** Starts DynamoDB Local (unless given), the table, the bootstrap data and the HTTPS + HTTP ports. */
export async function startLocalHost(options: LocalHostOptions): Promise<LocalHost> {
  makePrivate(options.dataDir);
  // DynamoDB Local and the embedded PostGIS start side by side (PostGIS' first init takes ~40 s).
  const [dynamo, postgis] = await Promise.all([
    options.dynamoEndpoint
      ? undefined
      : startDynamoLocal(options.dynamoPort, join(options.dataDir, 'dynamodb')),
    options.postgisPort === undefined
      ? undefined
      : startEmbeddedPostgis({ dataDir: options.dataDir, port: options.postgisPort }),
  ]);
  const endpoint = options.dynamoEndpoint ?? (dynamo as DynamoLocal).endpoint;
  // The embedded PostGIS is a loopback port like any other: allowed by name, and nothing else of loopback.
  const allowedDatabaseHosts = [options.allowedDatabaseHosts, postgis && `${postgis.host}:${postgis.port}`]
    .filter((entry) => entry)
    .join(',');
  parseAllowList(allowedDatabaseHosts);
  const mosaicRoot = options.mosaicRoot ?? join(options.dataDir, 'mosaics');
  mkdirSync(mosaicRoot, { recursive: true, mode: 0o700 });
  const importRoot = options.importRoot ?? join(options.dataDir, 'import-sources');
  // Uploads are stored under ids only (ADR 0106): `uploads/<workspace>/<import>`, `sealed/…`, `incoming/…`.
  const uploadDir = join(options.dataDir, 'imports');
  mkdirSync(importRoot, { recursive: true, mode: 0o700 });
  mkdirSync(uploadDir, { recursive: true, mode: 0o700 });
  // The persistent tile cache (ADR 0139): a directory under the data dir, as S3 is on AWS.
  const tileCacheDir = options.tileCacheDir ?? join(options.dataDir, 'tile-cache');
  mkdirSync(tileCacheDir, { recursive: true, mode: 0o700 });

  // The HTTPS port first: the local issuer's URL (and so its tokens' `iss`) names it.
  const tls = await localCertificate(options.dataDir);
  // Idle keep-alive connections are kept 30 s, not Node's 5 s: a client reusing one as the
  // server closes it gets ECONNRESET for a request never read (API Gateway keeps them 350 s).
  const https = createHttpsServer({
    key: tls.key,
    cert: tls.cert,
    keepAlive: true,
    keepAliveTimeout: 30_000,
  });
  await new Promise<void>((r) => https.listen(options.port, '127.0.0.1', r));
  const origin = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
  const issuer = await localIssuer(options.dataDir, `${origin}${LOCAL_ISSUER_PATH}`);
  const consoleCallback = `${origin}/console/callback`;
  // Local mode, switched in one call (ARCHITECTURE §6): this environment names no AWS resource, so
  // every port takes its local adapter; workflows run in this process from the deployed ASL, and
  // the catalog events (ADR 0094) go to the local feed (read from DynamoDB Local's stream below).
  const workflows = new LocalWorkflowRunner();
  const env: Record<string, string> = {
    TABLE_NAME: options.tableName,
    DYNAMODB_ENDPOINT: endpoint,
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    OIDC_ISSUER: issuer.issuer,
    OIDC_AUDIENCE: issuer.audience,
    OIDC_JWKS: JSON.stringify(issuer.jwks),
    // The console signs in at the local issuer (code + PKCE) unless the operator names another client.
    OIDC_CLIENT_ID: process.env.OIDC_CLIENT_ID ?? issuer.audience,
    OIDC_REDIRECT_URI: process.env.OIDC_REDIRECT_URI ?? consoleCallback,
    // The local issuer's tokens carry their roles (npm run token); a real IdP's never are trusted.
    OIDC_TRUST_ROLE_CLAIMS: 'true',
    GEOPLANE_SECRET_KEY: localSecretKey(options.dataDir),
    // The usage key of global calls: the local gateway meters by usageIdentifierKey alone (ADR 0111).
    GLOBAL_USAGE_KEY: 'geoplane-local-global-usage-key',
    GEOPLANE_ALLOWED_DATABASE_HOSTS: allowedDatabaseHosts,
    GEOPLANE_MOSAIC_ROOT: mosaicRoot,
    GEOPLANE_IMPORT_ROOT: importRoot,
    GEOPLANE_TILE_CACHE_DIR: tileCacheDir,
    // The embedded PostGIS serves one connection at a time: a load step holds it this long at most.
    IMPORT_STEP_BUDGET_MS: process.env.IMPORT_STEP_BUDGET_MS ?? '20000',
    GEOPLANE_IMPORT_UPLOAD_DIR: uploadDir,
    GEOPLANE_IMPORT_UPLOAD_URL: `${origin}${LOCAL_UPLOAD_PATH}`,
    ...(options.importMaxBytes ? { IMPORT_MAX_BYTES: String(options.importMaxBytes) } : {}),
    // The import database: the embedded PostGIS, loaded by its importer login; each published import has a login of its own.
    ...(postgis
      ? {
          IMPORT_DATABASE: JSON.stringify({
            host: postgis.host,
            port: postgis.port,
            database: postgis.database,
            sslmode: 'disable',
            user: postgis.importer.user,
            password: postgis.importer.password,
          }),
        }
      : {}),
    ...(options.maxBodyBytes ? { MAX_BODY_BYTES: String(options.maxBodyBytes) } : {}),
  };
  useLocalAdapters({
    env,
    workflows,
    eventBus: eventFeed,
    // Each handler may use only the DynamoDB actions its route declares (IAM's least privilege, locally).
    checkDataAccess: installDataAccessCheck,
  });

  const throttle = tokenBuckets(options.rateLimitRps, options.rateLimitBurst);
  const methodThrottle = tokenBuckets(options.stageRateLimitRps, options.stageRateLimitBurst);
  const jwks = JSON.stringify(issuer.jwks);
  const uploadSecret = localUploadSecret();
  const logAccess = accessLog(options.accessLog ?? true);
  const oidc = localOidcProvider({
    issuer,
    clientId: issuer.audience,
    redirectUris: [
      consoleCallback,
      ...(process.env.OIDC_REDIRECT_URI ? [process.env.OIDC_REDIRECT_URI] : []),
    ],
  });
  const consoleDist = options.consoleDist ?? CONSOLE_DIST;
  const issuerOrigins = [originOf(issuer.issuer)].filter((o): o is string => o !== undefined);
  // Every path answers its own errors; what one lets through is still answered (lastAnswer).
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    logAccess(req, res);
    // A request target no URL parser takes (`http://[`) is the client's fault: 400, as for bad HTTP.
    if (!isParsableTarget(req.url ?? '/')) {
      req.resume();
      write(res, gatewayError(malformedRequest, randomUUID(), { Connection: 'close' }));
      return;
    }
    // The stand-in for S3's presigned POST of import uploads (outside the API, like S3 is).
    if (req.method === 'POST' && (req.url ?? '').split('?')[0] === LOCAL_UPLOAD_PATH) {
      res.setHeader(REQUEST_ID_HEADER, randomUUID());
      await handleUpload(req, res, { secret: uploadSecret, dir: uploadDir });
      return;
    }
    // The local issuer publishes its public keys like an IdP would (tokens come from `npm run token`).
    if (req.method === 'GET' && req.url === LOCAL_JWKS_PATH) {
      req.resume();
      write(res, {
        statusCode: 200,
        headers: { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' },
        body: jwks,
      });
      return;
    }
    // The console's files (ADR 0098), outside the API like the CloudFront origin that serves them.
    const site = consoleResponse(req.method ?? 'GET', req.url ?? '/', consoleDist, issuerOrigins);
    if (site) {
      req.resume();
      res.setHeader(REQUEST_ID_HEADER, randomUUID());
      write(res, req.method === 'HEAD' ? { ...site, body: '' } : site);
      return;
    }
    try {
      const body = await readBody(req);
      if (body === 'too_large') {
        write(res, gatewayError(gatewayErrors.tooLarge, randomUUID(), { Connection: 'close' }));
        return;
      }
      const fromIssuer = await oidc.handle(req.method ?? 'GET', req.url ?? '/', body);
      if (fromIssuer) {
        write(res, fromIssuer);
        return;
      }
      const out = await handleRequest(
        {
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          headers: req.headers,
          body,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        },
        { throttle, methodThrottle, maxGatewayBodyBytes: GATEWAY_BODY_CEILING },
      );
      write(res, out);
    } catch (error) {
      lastAnswer(req, res, error);
    }
  };
  https.on('request', (req: IncomingMessage, res: ServerResponse) => {
    serve(req, res).catch((error: unknown) => lastAnswer(req, res, error));
  });
  // A request Node can't even parse still gets the standard error body (API Gateway does the same).
  https.on('clientError', (_error, socket) => {
    if (!socket.writable) return socket.destroy();
    try {
      const refused = malformedRequest;
      const requestId = randomUUID();
      const body = JSON.stringify(gatewayErrorBody(refused, requestId));
      if (options.accessLog ?? true) process.stdout.write(`access - - ${refused.status} 0ms ${requestId}\n`);
      socket.end(
        `HTTP/1.1 ${refused.status} ${refused.message}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    } catch (error) {
      logger.error('local host failed to refuse a malformed request', errorFields(error));
      socket.destroy();
    }
  });
  const http = createHttpServer((req, res) => {
    try {
      logAccess(req, res);
      req.resume();
      write(res, httpsRequired());
    } catch (error) {
      lastAnswer(req, res, error);
    }
  });
  await new Promise<void>((r) => http.listen(options.httpPort, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(https.address() as AddressInfo).port}/api/v1`;
  const httpUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1`;

  let apiKey: string | undefined;
  let bootstrapCreated = false;
  if (!options.skipBootstrap) {
    await ensureTable(endpoint, options.tableName);
    const result = await bootstrap(
      options.dataDir,
      url,
      postgis && {
        host: postgis.host,
        port: postgis.port,
        database: postgis.database,
        user: postgis.user,
        password: postgis.password,
      },
    );
    apiKey = result.bootstrap.api_key;
    bootstrapCreated = result.created;
  }

  // Unfinished work resumes now (DESIGN §9).
  const resumeWork = !options.skipBootstrap && options.resumeWork !== false;
  if (resumeWork) {
    const resumed = await workflows.resume();
    if (resumed.deletions > 0)
      logger.info(`resumed ${resumed.deletions} unfinished deletion(s)`, { count: resumed.deletions });
    if (resumed.imports > 0)
      logger.info(`resumed ${resumed.imports} unfinished import(s)`, { count: resumed.imports });
    if (resumed.harvests > 0)
      logger.info(`resumed ${resumed.harvests} unfinished mosaic harvest(s)`, { count: resumed.harvests });
    if (resumed.tileCacheJobs > 0)
      logger.info(`resumed ${resumed.tileCacheJobs} unfinished tile cache job(s)`, {
        count: resumed.tileCacheJobs,
      });
  }
  // The catalog events (ADR 0094): read from DynamoDB Local's stream into the local feed.
  const changeStream = startChangeStream({
    endpoint,
    tableName: options.tableName,
    region: process.env.AWS_REGION ?? 'us-east-1',
  });
  // The scheduled sweep (ADR 0093): expired items (DynamoDB Local has no TTL) and stuck work.
  const sweeps = startLocalSweeps(workflows, resumeWork ? undefined : 0);
  // What the upload bucket's lifecycle rules remove on AWS, removed here too (ADR 0106).
  const uploadExpiry = startUploadExpiry(uploadDir);

  return {
    url,
    dynamoEndpoint: endpoint,
    httpUrl,
    apiKey,
    bootstrapCreated,
    async close() {
      await sweeps.close();
      await uploadExpiry.close();
      await changeStream.close();
      workflows.close();
      stopLocalWorkflows();
      https.closeAllConnections();
      http.closeAllConnections();
      await Promise.all([new Promise((r) => https.close(r)), new Promise((r) => http.close(r))]);
      await Promise.all([dynamo?.stop(), postgis?.stop()]);
    },
  };
}
