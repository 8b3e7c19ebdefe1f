import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { z } from 'zod';
import { parseAllowList } from '../../shared/datasources/network-policy.ts';

const retentionValues = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'),
);

/** An empty string in cdk.json means "not configured"; `-c key=` on the CLI gives the same. */
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v ? v : undefined));

const schema = z.object({
  stageName: z
    .string()
    .regex(/^[A-Za-z0-9_]{1,128}$/, 'stage names are letters, digits and underscores')
    .default('v1'),
  oidcIssuer: optionalText,
  oidcAudience: optionalText,
  oidcJwksUri: optionalText.pipe(z.url().optional()),
  /** Browser console (GET /console/config, login). */
  oidcClientId: optionalText,
  oidcRedirectUri: optionalText,
  oidcScopes: optionalText,
  oidcGroupClaims: optionalText,
  consoleTokenLogin: z.coerce.boolean().default(true),
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
  throttlingRateLimit: z.coerce.number().positive().default(50),
  throttlingBurstLimit: z.coerce.number().int().positive().default(100),
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
});

/** Stage configuration of a deployment, read from `cdk.json` context (or `-c key=value`). */
export type StageConfig = z.output<typeof schema>;

/** Context keys read by {@link stageConfigOf}. */
export const stageContextKeys = Object.keys(schema.shape) as (keyof StageConfig)[];

/** Parses the stage configuration from a construct's context; throws with every problem listed. */
export function stageConfigOf(node: Node): StageConfig {
  const raw = Object.fromEntries(stageContextKeys.map((key) => [key, node.tryGetContext(key) ?? undefined]));
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid cdk.json context: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
