import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { z } from 'zod';
import { parseAllowList } from '#datasources/network-policy.ts';
import { bootstrapAdminsOf } from '#domain/bootstrap-admins.ts';
import { objectOrJsonText, vpcContextSchema } from './vpc-config.ts';

const retentionValues = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);

/** An empty string in cdk.json means "not configured"; `-c key=` on the CLI gives the same. */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v ? v : undefined));

/**
 * A boolean context value: `-c key=false` arrives as the string "false", which `z.coerce.boolean()`
 * reads as true (ADR 0087). true/"true"/"1"/1 and false/"false"/"0"/0 only (any case); "" is "not
 * configured" (the default); anything else is an error.
 */
export const contextBoolean = (byDefault: boolean) =>
  z.preprocess(
    (value) => {
      // An empty string means "not configured", as for every other key.
      if (value === '') return undefined;
      if (typeof value === 'string') {
        const text = value.trim().toLowerCase();
        if (text === 'true' || text === '1') return true;
        if (text === 'false' || text === '0') return false;
      }
      if (value === 1) return true;
      if (value === 0) return false;
      return value;
    },
    z
      .boolean({
        error: (issue) =>
          `must be true or false ("true"/"1" or "false"/"0"), got ${JSON.stringify(issue.input)}`,
      })
      .default(byDefault),
  );

/** `host:port` as an allowlist entry reads it (IPv6 literals in brackets). */
export function hostAndPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** S3 bucket names (the ones imports and mosaics may name in `s3://` URIs). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** A full Secrets Manager secret ARN, with the six characters Secrets Manager appends to the name. */
const SECRET_ARN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;

/**
 * The import database (ADR 0086, 0105): where imports stage and publish their tables. The secret's
 * JSON holds `username`/`password`: the loader login (CREATE on the database), set up with
 * `importRolesSql()`; each published import gets a login of its own, derived from it.
 */
const importDatabaseSchema = z
  .strictObject({
    host: z.string().min(1).max(253),
    port: z.coerce.number().int().min(1).max(65535).default(5432),
    database: z.string().min(1).max(63),
    secretArn: z
      .string()
      .regex(
        SECRET_ARN,
        'must be the full ARN of a Secrets Manager secret (arn:aws:secretsmanager:<region>:<account>:secret:<name>-XXXXXX)',
      ),
    sslmode: z.enum(['disable', 'prefer', 'require', 'verify-full']).optional(),
  })
  .superRefine((db, ctx) => {
    const bad = () =>
      ctx.addIssue({
        code: 'custom',
        path: ['host'],
        message: `'${db.host}' is not a host name or IP address`,
      });
    if (/[/*\s,]/.test(db.host)) return bad();
    try {
      parseAllowList(hostAndPort(db.host, db.port));
    } catch {
      bad();
    }
  });

export type ImportDatabaseConfig = z.output<typeof importDatabaseSchema>;

/** An e-mail address as SNS e-mail subscriptions take it (one `@`, a dotted domain, no spaces or commas). */
const EMAIL = /^[^\s@,;<>"]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;

/**
 * The addresses alarm notifications are e-mailed to (ADR 0091): a list, its JSON text, or a
 * comma-separated string as `-c alarmEmails=a@example.com,b@example.com` gives it; none by default.
 */
const alarmEmailsSchema = z.preprocess(
  (value, ctx) => {
    if (value === undefined || value === null || value === '') return [];
    if (typeof value !== 'string') return value;
    const text = value.trim();
    if (text.startsWith('[')) {
      try {
        return JSON.parse(text);
      } catch {
        ctx.issues.push({
          code: 'custom',
          input: value,
          message: 'must be a list of e-mail addresses, its JSON text or a comma-separated string',
        });
        return z.NEVER;
      }
    }
    return text
      .split(',')
      .map((address) => address.trim())
      .filter(Boolean);
  },
  z
    .array(
      z
        .string({ error: (issue) => `must be an e-mail address, got ${JSON.stringify(issue.input)}` })
        .trim()
        .regex(EMAIL, { error: (issue) => `'${issue.input}' is not an e-mail address` }),
      { error: 'must be a list of e-mail addresses, its JSON text or a comma-separated string' },
    )
    // One subscription per address: a repeated one is the same subscriber.
    .transform((addresses) => [...new Set(addresses)]),
);

const schema = z.object({
  /**
   * The deployment's name within an account and region (ADR 0114): empty (the default) keeps the
   * stack `GeoPlane`, as deployed so far; `dev` makes it `GeoPlane-dev`, and every explicitly named
   * resource derives its name from the stack's, so several stages fit one account and region.
   * Never change it on a deployed stack: another value is another stack (a new, empty catalog).
   */
  stage: optionalText.pipe(
    z
      .string()
      .max(24, 'at most 24 characters (it prefixes resource names with their own length limits)')
      .regex(
        /^[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*$/,
        'a stage starts with a letter and has letters, digits and single hyphens inside',
      )
      .optional(),
  ),
  stageName: z
    .string()
    .regex(/^[A-Za-z0-9_]{1,128}$/, 'stage names are letters, digits and underscores')
    // Not `v1`: the routes already carry the version (`/prod/api/v1/…`, ADR 0089).
    .default('prod'),
  oidcIssuer: optionalText,
  oidcAudience: optionalText,
  oidcJwksUri: optionalText.pipe(z.url().optional()),
  /** Browser console (GET /console/config, login). */
  oidcClientId: optionalText,
  oidcRedirectUri: optionalText,
  oidcScopes: optionalText,
  oidcGroupClaims: optionalText,
  consoleTokenLogin: contextBoolean(true),
  /**
   * Deploy the web console (issue #14): its files in a private bucket, served with the API by one
   * CloudFront distribution (console at /console/, API at /api/v1). On by default.
   */
  consoleEnabled: contextBoolean(true),
  sessionTtlSeconds: z.coerce.number().int().positive().default(43200),
  sessionIdleSeconds: z.coerce.number().int().positive().default(3600),
  /** S3 buckets raster mosaics may read (comma-separated names); none by default. */
  mosaicBuckets: optionalText,
  /**
   * Non-public database hosts PostGIS services may connect to (ADR 0074): comma-separated IPs,
   * CIDRs, host names or `*`, each optionally `:port` or `:from-to`; none by default (public
   * addresses only). Typically the VPC's RDS/Aurora endpoint or subnet, e.g. `10.0.0.0/16:5432`.
   */
  allowedDatabaseHosts: optionalText.superRefine((value, ctx) => {
    try {
      parseAllowList(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  }),
  /**
   * The import database (ADR 0086): an object or its JSON text, `{host, port, database, secretArn,
   * sslmode?}`. Empty: the stack still deploys and imports answer 503 until one is configured.
   */
  importDatabase: objectOrJsonText(
    importDatabaseSchema,
    '{"host", "port", "database", "secretArn", "sslmode"?}',
  ),
  /**
   * The operator's VPC (ADR 0112): an object or its JSON text, `{vpcId, privateSubnetIds,
   * securityGroupIds, endpoints, routeTableIds?, availabilityZones?}` (see ./vpc-config.ts). The
   * functions that open PostgreSQL connections (route table `postgres`) run in its private subnets;
   * every other function stays outside. Empty (the default): no function is in a VPC.
   */
  vpc: vpcContextSchema,
  /** S3 buckets `s3://` import URIs may name (comma-separated names); none by default. */
  importBuckets: optionalText.superRefine((value, ctx) => {
    for (const name of (value ?? '').split(',').map((b) => b.trim())) {
      if (name && !BUCKET_NAME.test(name))
        ctx.addIssue({ code: 'custom', message: `'${name}' is not an S3 bucket name` });
    }
  }),
  /** Largest file an import may upload or read (S3 refuses POST uploads over 5 GB). */
  importMaxBytes: z.coerce
    .number()
    .int()
    .positive()
    .max(5 * 1024 ** 3, 'a presigned POST uploads at most 5 GB (S3) and the step keeps the file in /tmp')
    .default(2 * 1024 ** 3),
  /** Days after which uploaded files are removed from the upload bucket (its lifecycle rule). */
  importUploadExpiryDays: z.coerce.number().int().min(1).max(3650).default(7),
  /**
   * Origins browsers may POST uploads from (comma-separated, e.g. the console's
   * `https://console.example.com`); any origin by default: the presigned POST is the credential.
   */
  importUploadOrigins: optionalText.superRefine((value, ctx) => {
    for (const origin of (value ?? '').split(',').map((o) => o.trim())) {
      if (origin && origin !== '*' && !/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/.test(origin))
        ctx.addIssue({ code: 'custom', message: `'${origin}' is not an origin (scheme://host[:port]) or *` });
    }
  }),
  /**
   * The first administrators (ADR 0089): a list (or its JSON text) of `{claim_name, claim_value}`
   * OIDC claims that become global super_admin claim mappings at deploy; none by default.
   */
  bootstrapAdmins: z.preprocess(
    (value, ctx) => {
      if (value === undefined || value === null || value === '') return [];
      let list = value;
      if (typeof value === 'string') {
        try {
          list = JSON.parse(value);
        } catch {
          ctx.issues.push({
            code: 'custom',
            input: value,
            message: 'must be a list or its JSON text: [{"claim_name", "claim_value"}, …]',
          });
          return z.NEVER;
        }
      }
      try {
        return bootstrapAdminsOf(list);
      } catch (error) {
        ctx.issues.push({ code: 'custom', input: value, message: (error as Error).message });
        return z.NEVER;
      }
    },
    z.array(z.strictObject({ claim_name: z.string(), claim_value: z.string() })),
  ),
  /** Where alarm notifications are e-mailed (ADR 0091); each address confirms its subscription once. */
  alarmEmails: alarmEmailsSchema,
  /**
   * Set API Gateway's account-wide CloudWatch Logs role for this region (ADR 0114): creates the
   * role and `AWS::ApiGateway::Account`, which replaces whatever role the account had. Off by
   * default: the stage's logs need that role set once per account and region (docs/deploy.md).
   */
  apiGatewayCloudWatchRole: contextBoolean(false),
  /**
   * CloudFront standard logs of the console's distribution (ADR 0115), into the console's log
   * bucket. On by default, and then only in the regions whose buckets CloudFront delivers logs to
   * (a condition on the deploy region); off: never.
   */
  consoleAccessLogs: contextBoolean(true),
  /**
   * Reserved concurrency of the import step (ADR 0115): at most this many imports load at once, and
   * the account's unreserved pool shrinks by as much. Empty (the default): none reserved, no cap.
   */
  importStepConcurrency: z.preprocess(
    (value) => (value === '' || value === null ? undefined : value),
    z.coerce
      .number({
        error: (issue) => `must be a whole number of executions, got ${JSON.stringify(issue.input)}`,
      })
      .int()
      .min(1, 'at least 1 (0 would stop every import); leave it empty for no reservation')
      .max(10000)
      .optional(),
  ),
  /**
   * The usage plan's throttle (ADR 0111): requests per second and burst of one usage key, so of
   * one workspace (or of global calls together). API Gateway meters a usage plan per key.
   */
  throttlingRateLimit: z.coerce.number().positive().default(50),
  throttlingBurstLimit: z.coerce.number().int().positive().default(100),
  /**
   * The stage's method throttle (ADR 0111): requests per second and burst of each method, all
   * clients together — the deployment's ceiling, well above one workspace's. At most the
   * account's regional limit (10,000 rps, burst 5,000 by default).
   */
  stageThrottlingRateLimit: z.coerce.number().positive().max(10_000).default(1000),
  stageThrottlingBurstLimit: z.coerce.number().int().positive().max(5000).default(2000),
  /**
   * How many usage keys workspaces are spread over (ADR 0111): the first this many workspaces get
   * a key each, the rest share round robin. API Gateway allows 10,000 keys per account and region
   * (not adjustable), shared with every other application there.
   */
  usageKeyPoolSize: z.coerce.number().int().min(1).max(9000).default(1000),
  maxBodyBytes: z.coerce
    .number()
    .int()
    .positive()
    .max(5 * 1024 * 1024, 'Lambda refuses 6 MB payloads; the hard ceiling is 5 MiB (DESIGN §5)')
    .default(1024 * 1024),
  logRetentionDays: z.coerce
    .number()
    .refine(
      (days) => retentionValues.has(days),
      'must be a CloudWatch Logs retention value (1, 3, 5, 7, 14, 30, …)',
    )
    .default(30),
  /** Days an audit record is kept before the table's TTL removes it (ADR 0094). */
  auditRetentionDays: z.coerce.number().int().min(1).max(3650).default(90),
});

/** Stage configuration of a deployment, read from `cdk.json` context (or `-c key=value`). */
export type StageConfig = z.output<typeof schema>;

/** Context keys read by {@link stageConfigOf}. */
export const stageContextKeys = Object.keys(schema.shape) as (keyof StageConfig)[];

/** The boolean context keys (each read with {@link contextBoolean}). */
export const stageBooleanKeys = stageContextKeys.filter((key) => {
  const probe = (value: unknown) => schema.shape[key].safeParse(value);
  return probe('false').success && probe('false').data === false && !probe('maybe').success;
});

/** Parses the stage configuration from a construct's context; throws with every problem listed. */
export function stageConfigOf(node: Node): StageConfig {
  const raw = Object.fromEntries(stageContextKeys.map((key) => [key, node.tryGetContext(key) ?? undefined]));
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid cdk.json context: ${z.prettifyError(parsed.error)}`);
  const config = parsed.data;
  // One workspace's limit above the ceiling of all of them together would never apply (ADR 0111).
  const above = [
    config.throttlingRateLimit > config.stageThrottlingRateLimit &&
      `throttlingRateLimit (${config.throttlingRateLimit}) is above stageThrottlingRateLimit (${config.stageThrottlingRateLimit})`,
    config.throttlingBurstLimit > config.stageThrottlingBurstLimit &&
      `throttlingBurstLimit (${config.throttlingBurstLimit}) is above stageThrottlingBurstLimit (${config.stageThrottlingBurstLimit})`,
  ].filter(Boolean);
  if (above.length)
    throw new Error(
      `Invalid cdk.json context: ${above.join('; ')}: a workspace's limit must fit under the stage's ceiling`,
    );
  return config;
}
