import { z } from 'zod/mini';

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
  /** Inline JWKS (JSON), used by the local issuer so no HTTP fetch is needed. */
  OIDC_JWKS: z.optional(z.string()),
  POWERTOOLS_SERVICE_NAME: z._default(z.string(), 'geoplane'),
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
