import * as z from 'zod/mini';

const schema = z.object({
  TABLE_NAME: z._default(z.string().check(z.minLength(3)), 'geoplane'),
  AWS_REGION: z._default(z.string(), 'us-east-1'),
  /** Set only in local mode and tests: the DynamoDB Local endpoint. */
  DYNAMODB_ENDPOINT: z.optional(z.url()),
  MAX_BODY_BYTES: z._default(
    z.coerce.number().check(z.multipleOf(1), z.positive(), z.maximum(5 * 1024 * 1024)),
    1048576,
  ),
  /** Issuer and audience of accepted bearer tokens. */
  OIDC_ISSUER: z.optional(z.string().check(z.minLength(1))),
  OIDC_AUDIENCE: z.optional(z.string().check(z.minLength(1))),
  /** JWKS URL; defaults to `${OIDC_ISSUER}/.well-known/jwks.json`. */
  OIDC_JWKS_URI: z.optional(z.url()),
  /** Minimum time between two JWKS fetches triggered by unknown `kid`s. */
  OIDC_JWKS_COOLDOWN_MS: z._default(z.coerce.number().check(z.multipleOf(1), z.minimum(0)), 30000),
  /** Inline JWKS (JSON), used by the local issuer so no HTTP fetch is needed. */
  OIDC_JWKS: z.optional(z.string()),
  /**
   * Trust `geoplane:roles` / `geoplane:global_role` claims in bearer tokens (the local issuer's
   * tokens). Off by default: a real IdP's tokens get roles only through claim mappings.
   */
  OIDC_TRUST_ROLE_CLAIMS: z._default(z.stringbool(), false),
  /** Browser console settings (GET /console/config; login). */
  CONSOLE_AUTH_ENABLED: z._default(z.stringbool(), true),
  CONSOLE_TOKEN_LOGIN: z._default(z.stringbool(), true),
  OIDC_CLIENT_ID: z._default(z.string(), ''),
  OIDC_REDIRECT_URI: z._default(z.string(), ''),
  OIDC_SCOPES: z._default(z.string(), 'openid profile email'),
  OIDC_GROUP_CLAIMS: z.optional(z.string()),
  SESSION_TTL_SECONDS: z._default(z.coerce.number().check(z.multipleOf(1), z.positive()), 43200),
  SESSION_IDLE_SECONDS: z._default(z.coerce.number().check(z.multipleOf(1), z.positive()), 3600),
  /** Failed logins per client address within 5 minutes before 429. */
  LOGIN_FAILURE_LIMIT: z._default(z.coerce.number().check(z.multipleOf(1), z.positive()), 10),
  /** Local mode: base64 of the 32-byte AES-256-GCM key that encrypts connection passwords. */
  GEOPLANE_SECRET_KEY: z.optional(z.string()),
  /** AWS: the KMS key that encrypts connection passwords. */
  KMS_KEY_ID: z.optional(z.string()),
  /** AWS: the usage plan (by name) that the keys of the usage-key pool join (ADR 0111). */
  USAGE_PLAN_NAME: z.optional(z.string().check(z.minLength(1))),
  /** How many usage keys workspaces are spread over (ADR 0111): each of the first this many has its own. */
  USAGE_KEY_POOL_SIZE: z._default(
    z.coerce.number().check(z.multipleOf(1), z.positive(), z.maximum(9000)),
    1000,
  ),
  /**
   * The usage key of global calls (the authorizer returns it for every request outside a
   * workspace); the local host sets its own, so it meters exactly as API Gateway would.
   */
  GLOBAL_USAGE_KEY: z.optional(z.string().check(z.minLength(20))),
  /**
   * AWS: the public origin of the data plane (its CloudFront domain, `https://…`), so the OGC
   * documents' links point where clients reach it; unset, links use the request's Host (ADR 0123).
   */
  DATA_PLANE_ORIGIN: z.optional(z.url()),
  POWERTOOLS_SERVICE_NAME: z._default(z.string(), 'geoplane'),
  /** How long audit records are kept (days; the table's TTL removes them after), ADR 0094. */
  AUDIT_RETENTION_DAYS: z._default(z.coerce.number().check(z.positive(), z.maximum(3650)), 90),
  /**
   * Non-public database hosts a PostGIS service may connect to (ADR 0074): comma-separated IPs,
   * CIDRs, host names or `*`, each optionally `:port` or `:from-to`. Public addresses always pass;
   * the local host adds its embedded PostGIS (127.0.0.1:<its port>).
   */
  GEOPLANE_ALLOWED_DATABASE_HOSTS: z._default(z.string(), ''),
  /**
   * Local mode: the directory every local mosaic root_uri must lie under (ADR 0074); the local host
   * defaults it to `<data dir>/mosaics`. Unset: no local root is accepted.
   */
  GEOPLANE_MOSAIC_ROOT: z.optional(z.string().check(z.minLength(1))),
});

/** Runtime configuration, parsed once from the environment. */
export type Config = z.infer<typeof schema>;

let cached: Config | undefined;

/** Returns the configuration parsed from `process.env` (cached after the first call). */
export function config(): Config {
  if (!cached) {
    const parsed = schema.safeParse(process.env);
    if (!parsed.success) {
      throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
    }
    cached = parsed.data;
  }
  return cached;
}

/*
 * Values read on every call, not parsed once: the deployed stack sets them per function, and the
 * local host and the tests set them while a process runs. Only shared/config reads process.env
 * (ADR 0079).
 */

/** The AWS resources a port's adapter runs on: CDK sets each variable on the functions that use it. */
export type AwsResource =
  | 'KMS_KEY_ID'
  | 'USAGE_PLAN_NAME'
  | 'IMPORT_UPLOAD_BUCKET'
  | 'TILE_CACHE_BUCKET'
  | 'DELETION_STATE_MACHINE_ARN'
  | 'IMPORT_STATE_MACHINE_ARN'
  | 'HARVEST_STATE_MACHINE_ARN'
  | 'TILE_CACHE_STATE_MACHINE_ARN';

/**
 * THE local/AWS switch (issue #28, ARCHITECTURE §6): the AWS resource this function has for a
 * port, or undefined (unset or empty), in which case the port's adapter is the local one. Every
 * adapter that has an AWS and a local form decides here. `KMS_KEY_ID` and `USAGE_PLAN_NAME` come
 * from the configuration parsed once; the others are read on every call (see above).
 */
export function awsResource(name: AwsResource): string | undefined {
  if (name === 'KMS_KEY_ID' || name === 'USAGE_PLAN_NAME') return config()[name] || undefined;
  return process.env[name] || undefined;
}

/** Sets variables of the environment: the local host's switch to local mode (`shared/wiring/local-mode.ts`) only. */
export function setEnvironment(values: Readonly<Record<string, string>>): void {
  Object.assign(process.env, values);
}

/** AWS: the deletion state machine (`DELETION_STATE_MACHINE_ARN`); unset or empty locally. */
export function deletionStateMachineArn(): string | undefined {
  return awsResource('DELETION_STATE_MACHINE_ARN');
}

/** Time one deletion batch invocation may spend before handing back to the state machine. */
export function deletionBatchBudgetMs(): number {
  const value = Number(process.env.DELETION_BATCH_BUDGET_MS ?? 60000);
  return Number.isFinite(value) && value > 0 ? value : 60000;
}

/** AWS: the EventBridge bus of the catalog events (`EVENT_BUS_NAME`, ADR 0094); the default bus when unset. */
export function eventBusName(): string {
  return process.env.EVENT_BUS_NAME || 'default';
}

/** AWS: the import state machine (`IMPORT_STATE_MACHINE_ARN`); unset or empty locally. */
export function importStateMachineArn(): string | undefined {
  return awsResource('IMPORT_STATE_MACHINE_ARN');
}

/** AWS: the mosaic harvest state machine (`HARVEST_STATE_MACHINE_ARN`, ADR 0136); unset or empty locally. */
export function harvestStateMachineArn(): string | undefined {
  return awsResource('HARVEST_STATE_MACHINE_ARN');
}

/** Time one harvest step invocation may spend on chunks before handing back to the state machine. */
export function harvestStepBudgetMs(): number {
  const value = Number(process.env.HARVEST_STEP_BUDGET_MS ?? 60000);
  return Number.isFinite(value) && value > 0 ? value : 60000;
}

/** AWS: the tile cache workflow (`TILE_CACHE_STATE_MACHINE_ARN`, ADR 0139); unset or empty locally. */
export function tileCacheStateMachineArn(): string | undefined {
  return awsResource('TILE_CACHE_STATE_MACHINE_ARN');
}

/** Time one tile cache step invocation may spend on chunks before handing back to the state machine. */
export function tileCacheStepBudgetMs(): number {
  const value = Number(process.env.TILE_CACHE_STEP_BUDGET_MS ?? 60000);
  return Number.isFinite(value) && value > 0 ? value : 60000;
}

/**
 * Where the persistent tile cache lives (ADR 0139): `TILE_CACHE_BUCKET` on AWS (objects under
 * `tiles/`), `GEOPLANE_TILE_CACHE_DIR` locally (the local host sets `<data dir>/tile-cache`).
 * Neither: no persistent tile cache (every tile is rendered).
 */
export function tileCacheLocation(): { bucket: string } | { directory: string } | undefined {
  const bucket = awsResource('TILE_CACHE_BUCKET');
  if (bucket) return { bucket };
  if (process.env.GEOPLANE_TILE_CACHE_DIR) return { directory: process.env.GEOPLANE_TILE_CACHE_DIR };
  return undefined;
}

/** Time one import step invocation may spend loading before handing back to the state machine. */
export function importStepBudgetMs(): number {
  const value = Number(process.env.IMPORT_STEP_BUDGET_MS ?? 600000);
  return Number.isFinite(value) && value > 0 ? value : 600000;
}

/** Where imports are configured (ADR 0083): upload store, allowed URIs, limits, the import database. */
export interface ImportConfig {
  /** AWS: the upload bucket (presigned POSTs). */
  uploadBucket?: string;
  /** Local: the directory uploads are stored in, and the URL of the host's form-POST endpoint. */
  localUploadDir?: string;
  localUploadUrl?: string;
  /** AWS: buckets `s3://` URIs may name. */
  allowedBuckets: string[];
  /** Local: the directory `file://` URIs and absolute paths must lie under. */
  localImportRoot?: string;
  /**
   * `GEOPLANE_ALLOWED_IMPORT_URL_HOSTS`: non-public hosts `https://` import URLs may name (ADR 0129),
   * in the syntax of ADR 0074's database list; empty: public unicast addresses only.
   */
  urlAllowedHosts: string;
  /** `GEOPLANE_IMPORT_URL_CA_FILE`: PEM certificates trusted for import URLs besides Node's own roots. */
  urlCaFile?: string;
  /** `IMPORT_URL_TIMEOUT_MS` (default 300,000): how long fetching one import URL may take in all. */
  urlTimeoutMs: number;
  /** `IMPORT_MAX_BYTES` (default 2 GiB): the largest file one import takes (upload or URI). */
  maxBytes: number;
  uploadTtlSeconds: number;
  /** `IMPORT_MAX_LAYERS` (default 100): layers one import's plan loads at most (ADR 0110). */
  maxLayers: number;
  /** `IMPORT_MAX_ROWS` (default 10,000,000): features one import loads at most. */
  maxRows: number;
  /** `IMPORT_WORKSPACE_MAX_ROWS` (default 100,000,000): rows a workspace's staged and published imports hold. */
  workspaceMaxRows: number;
  /** `IMPORT_WORKSPACE_MAX_BYTES` (default 50 GiB): bytes (of their files) a workspace's imports hold. */
  workspaceMaxBytes: number;
  /**
   * `IMPORT_GENERATION_RETENTION_HOURS` (default 168): how long a layer's previous data is kept
   * after an import replaced it, so the import can be rolled back (ADR 0127).
   */
  generationRetentionHours: number;
  /** The import database: local JSON with logins, or (AWS) host/port/database with the secret's ARN. */
  database?: {
    host: string;
    port: number;
    database: string;
    sslmode?: 'disable' | 'prefer' | 'require' | 'verify-full';
    user?: string;
    password?: string;
    /** The key reader passwords are derived from (ADR 0118); the loader's password when absent. */
    readerKey?: string;
  };
  databaseSecretArn?: string;
}

/** The import configuration, read on every call (the local host sets it while running). */
export function importConfig(): ImportConfig {
  const env = process.env;
  const number = (value: string | undefined, fallback: number) => {
    const n = Number(value);
    return value && Number.isFinite(n) && n > 0 ? n : fallback;
  };
  let database: ImportConfig['database'];
  if (env.IMPORT_DATABASE) {
    try {
      database = JSON.parse(env.IMPORT_DATABASE) as ImportConfig['database'];
    } catch {
      throw new Error('Invalid configuration: IMPORT_DATABASE is not JSON.');
    }
  }
  return {
    uploadBucket: awsResource('IMPORT_UPLOAD_BUCKET'),
    localUploadDir: env.GEOPLANE_IMPORT_UPLOAD_DIR || undefined,
    localUploadUrl: env.GEOPLANE_IMPORT_UPLOAD_URL || undefined,
    allowedBuckets: (env.IMPORT_BUCKETS ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    localImportRoot: env.GEOPLANE_IMPORT_ROOT || undefined,
    urlAllowedHosts: env.GEOPLANE_ALLOWED_IMPORT_URL_HOSTS ?? '',
    urlCaFile: env.GEOPLANE_IMPORT_URL_CA_FILE || undefined,
    urlTimeoutMs: number(env.IMPORT_URL_TIMEOUT_MS, 300_000),
    maxBytes: number(env.IMPORT_MAX_BYTES, 2 * 1024 ** 3),
    uploadTtlSeconds: number(env.IMPORT_UPLOAD_TTL_SECONDS, 3600),
    maxLayers: number(env.IMPORT_MAX_LAYERS, 100),
    maxRows: number(env.IMPORT_MAX_ROWS, 10_000_000),
    workspaceMaxRows: number(env.IMPORT_WORKSPACE_MAX_ROWS, 100_000_000),
    workspaceMaxBytes: number(env.IMPORT_WORKSPACE_MAX_BYTES, 50 * 1024 ** 3),
    generationRetentionHours: number(env.IMPORT_GENERATION_RETENTION_HOURS, 168),
    database,
    databaseSecretArn: env.IMPORT_DATABASE_SECRET_ARN || undefined,
  };
}

/** True inside a Lambda function (`AWS_LAMBDA_FUNCTION_NAME` is set). */
export function runsInLambda(): boolean {
  return Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
}

/** The scheduled sweep of stuck work (ADR 0093), read on every call (the local host and tests set it). */
export interface SweepConfig {
  /** `SWEEP_STUCK_AFTER_MINUTES` (default 15): no progress for this long and no running execution is stuck. */
  stuckAfterMs: number;
  /** `SWEEP_MAX_RESTARTS` (default 3): restarts in a row without progress before the work is failed. */
  maxRestarts: number;
}

/** The sweep's settings from the environment (invalid values fall back to the defaults). */
export function sweepConfig(): SweepConfig {
  const minutes = Number(process.env.SWEEP_STUCK_AFTER_MINUTES ?? 15);
  const restarts = Number(process.env.SWEEP_MAX_RESTARTS ?? 3);
  return {
    stuckAfterMs: (Number.isFinite(minutes) && minutes > 0 ? minutes : 15) * 60_000,
    maxRestarts: Number.isInteger(restarts) && restarts >= 0 ? restarts : 3,
  };
}
