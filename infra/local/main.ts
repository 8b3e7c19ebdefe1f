import { resolve } from 'node:path';

/** `npm start`: the whole API on this machine (DESIGN §9). */
const env = process.env;
// The SDK's notice about Node 22 would repeat on every start; the versions are pinned (DESIGN §2).
env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The logger reads its service name when it is first imported: set before the host loads (ADR 0090).
env.POWERTOOLS_SERVICE_NAME ??= 'geoplane-local';
// No EMF metric lines on the console unless the operator asks (POWERTOOLS_METRICS_DISABLED=false; ADR 0092).
env.POWERTOOLS_METRICS_DISABLED ??= 'true';
const { keepServingOnUncaughtErrors, startLocalHost } = await import('./server.ts');
// The console is built from its sources when they changed since the last build (ADR 0098), unless
// the host serves a build from elsewhere.
const { ensureConsoleBuilt } = await import('../../console/build.ts');
if (!env.GEOPLANE_CONSOLE_DIST && (await ensureConsoleBuilt())) console.log('console        built');
const int = (value: string | undefined, fallback: number) => (value ? Number.parseInt(value, 10) : fallback);
// Rates are requests per second, fractions allowed (a usage plan's rateLimit is a double on AWS too).
const rate = (value: string | undefined, fallback: number) => (value ? Number.parseFloat(value) : fallback);
const dataDir = resolve(env.GEOPLANE_DATA_DIR ?? '.local');

const host = await startLocalHost({
  dataDir,
  port: int(env.PORT, 8443),
  httpPort: int(env.HTTP_PORT, 8080),
  dynamoPort: int(env.DYNAMODB_PORT, 8000),
  dynamoEndpoint: env.GEOPLANE_DYNAMODB_ENDPOINT,
  tableName: env.GEOPLANE_TABLE_NAME ?? 'geoplane',
  rateLimitRps: rate(env.GEOPLANE_RATE_LIMIT_RPS, 50),
  rateLimitBurst: int(env.GEOPLANE_RATE_LIMIT_BURST, 100),
  stageRateLimitRps: rate(env.GEOPLANE_STAGE_RATE_LIMIT_RPS, 1000),
  stageRateLimitBurst: int(env.GEOPLANE_STAGE_RATE_LIMIT_BURST, 2000),
  maxBodyBytes: env.MAX_BODY_BYTES ? int(env.MAX_BODY_BYTES, 1048576) : undefined,
  skipBootstrap: env.GEOPLANE_SKIP_BOOTSTRAP === '1',
  resumeWork: env.GEOPLANE_RESUME_WORK !== 'off',
  postgisPort: env.GEOPLANE_POSTGIS === 'off' ? undefined : int(env.GEOPLANE_POSTGIS_PORT, 5433),
  allowedDatabaseHosts: env.GEOPLANE_ALLOWED_DATABASE_HOSTS,
  mosaicRoot: env.GEOPLANE_MOSAIC_ROOT ? resolve(env.GEOPLANE_MOSAIC_ROOT) : undefined,
  tileCacheDir: env.GEOPLANE_TILE_CACHE_DIR ? resolve(env.GEOPLANE_TILE_CACHE_DIR) : undefined,
  importRoot: env.GEOPLANE_IMPORT_ROOT ? resolve(env.GEOPLANE_IMPORT_ROOT) : undefined,
  importMaxBytes: env.IMPORT_MAX_BYTES ? int(env.IMPORT_MAX_BYTES, 0) : undefined,
  accessLog: env.GEOPLANE_ACCESS_LOG !== 'off',
  consoleDist: env.GEOPLANE_CONSOLE_DIST ? resolve(env.GEOPLANE_CONSOLE_DIST) : undefined,
});
// From here on no request can end the process: an error no path caught is logged (ADR 0106).
keepServingOnUncaughtErrors();

console.log(`GeoPlane API   ${host.url}`);
console.log(`plain HTTP     ${host.httpUrl} (answers 426)`);
console.log(`OpenAPI        ${host.url}/openapi.json`);
console.log(`Console        ${host.url.replace(/\/api\/v1$/, '')}/console/`);
console.log(`DynamoDB       ${host.dynamoEndpoint} (table ${env.GEOPLANE_TABLE_NAME ?? 'geoplane'})`);
if (host.bootstrapCreated && host.apiKey) {
  console.log(
    `\nsuper_admin bootstrap key (shown once; also saved in ${dataDir}/bootstrap.json):\n  ${host.apiKey}\n`,
  );
} else if (host.apiKey) {
  console.log(`bootstrap key  in ${dataDir}/bootstrap.json`);
}
console.log('ready');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await host.close();
    process.exit(0);
  });
}
