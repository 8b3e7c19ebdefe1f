import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { MAX_SQL_BYTES } from '#domain/datasource.ts';
import { API_KEY_PATTERN, NAME_PATTERN, NAME_RULE } from '#domain/identifiers.ts';

/** Workspace and service names (DESIGN §5). */
export const Name = /* @__PURE__ */ shakable(() =>
  z.string().check(z.regex(NAME_PATTERN, { error: NAME_RULE })),
);

/** A path parameter that is an id or a name. */
export const IdOrName = /* @__PURE__ */ shakable(() => z.string().check(z.minLength(1), z.maxLength(128)));
export const Uuid = /* @__PURE__ */ shakable(() => z.uuid());
/** A SHA-256 digest in lower-case hex (a style asset's content, a tile matrix set's definition). */
export const Sha256Hex = /* @__PURE__ */ shakable(() => z.string().check(z.regex(/^[0-9a-f]{64}$/)));
export const DateTime = /* @__PURE__ */ shakable(() => z.iso.datetime({ offset: true }));

/**
 * `limit` of a list operation: an integer from 1 to 1000, `defaultLimit` when absent. The default is
 * applied on parsing, so handlers read `query.limit` as a number (it isn't published as a JSON
 * Schema `default`: the input schema stays as documented).
 */
export function pageLimit(defaultLimit: number) {
  return z.pipe(
    z.optional(z.coerce.number().check(z.multipleOf(1), z.minimum(1), z.maximum(1000))),
    z.transform((limit: number | undefined) => limit ?? defaultLimit),
  );
}

/** `cursor` of list operations. */
export const PageCursor = /* @__PURE__ */ shakable(() =>
  z.optional(z.string().check(z.minLength(1), z.maxLength(2048))),
);

/** `limit` and `cursor` of a list operation whose pages hold `defaultLimit` items by default. */
export function pageQuery(defaultLimit: number) {
  return z.strictObject({ limit: pageLimit(defaultLimit), cursor: PageCursor });
}

/** `limit` (default 100) and `cursor` of list operations. */
export const PageQuery = /* @__PURE__ */ shakable(() => pageQuery(100));

/** The error body of every 4xx and 5xx (DESIGN §5). */
export const ErrorBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      code: z.int(),
      message: z.string(),
      detail: z.string(),
      reason: z.string(),
      request_id: z.string(),
      issues: z.optional(z.array(z.object({ path: z.string(), message: z.string() }))),
    })
    .check(z.meta({ id: 'Error', description: 'The standard error body.' })),
);

export const Workspace = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      name: z.string(),
      description: z.optional(z.string()),
      version: z.int(),
      created_at: DateTime,
      updated_at: DateTime,
    })
    .check(z.meta({ id: 'Workspace' })),
);

export const Role = /* @__PURE__ */ shakable(() => z.enum(['admin', 'editor', 'viewer']));

export const APIKey = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      key_prefix: z.string().check(z.length(12)),
      name: z.string(),
      role_id: z.string(),
      revoked: z.boolean(),
      created_at: DateTime,
      expires_at: z.optional(DateTime),
      owner_email: z.optional(z.string()),
      owner_name: z.optional(z.string()),
      workspace_id: z.optional(z.string()),
      /** The ETag If-Match names (revoking adds one). */
      version: z.int(),
    })
    .check(z.meta({ id: 'APIKey' })),
);

export const APIKeyWithSecret = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      ...APIKey.def.shape,
      key: z.string().check(z.regex(API_KEY_PATTERN)),
    })
    .check(
      z.meta({ id: 'APIKeyWithSecret', description: 'An API key with its full secret, returned only once.' }),
    ),
);

export const AuthMe = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      authenticated: z.literal(true),
      principal: z.string(),
      auth_method: z.enum(['apikey', 'jwt']),
      super_admin: z.boolean(),
      global_role: z.nullable(z.string()),
      api_key_id: z.nullable(z.string()),
      session_id: z.nullable(z.string()),
      session_expires_at: z.nullable(DateTime),
      session_idle_expires_at: z.nullable(DateTime),
      workspaces: z.array(z.strictObject({ id: z.string(), name: z.string(), role: z.string() })),
    })
    .check(z.meta({ id: 'AuthMe' })),
);

/** One browser session as listed (ADR 0134): who holds it and when it ends; never a cookie or hash. */
export const BrowserSession = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z
        .uuid()
        .check(z.meta({ description: 'the public id (`session_id` of getAuthMe), kept across refreshes' })),
      principal: z.string(),
      principal_id: z.string(),
      auth_method: z.enum(['apikey', 'jwt']),
      api_key_id: z.nullable(z.string()),
      issuer: z.nullable(z.string()),
      super_admin: z.boolean(),
      workspace_roles: z.array(z.strictObject({ workspace: z.string(), role: z.string() })).check(
        z.meta({
          description:
            'roles as derived at sign-in or the last refresh (at most 20; every request derives them again)',
        }),
      ),
      workspace_role_count: z.int(),
      created_at: DateTime,
      refreshed_at: z.nullable(DateTime),
      expires_at: DateTime,
      idle_expires_at: DateTime,
      version: z
        .int()
        .check(z.meta({ description: 'what If-Match names: 1 at sign-in, one more per refresh' })),
    })
    .check(z.meta({ id: 'BrowserSession' })),
);

export const RoleBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z.string(),
      name: z.string(),
      description: z.optional(z.string()),
      is_system: z.boolean(),
      /** Custom roles: the ETag If-Match names. */
      version: z.optional(z.int()),
      created_at: z.optional(DateTime),
      updated_at: z.optional(DateTime),
    })
    .check(z.meta({ id: 'Role' })),
);

export const RolePolicy = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      workspace: z.string().check(z.minLength(1), z.maxLength(128)),
      service: z.enum(['management', 'wms', 'wfs', 'wcs', 'wmts', 'ogcapi', 'ogc-tiles']),
      operation: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
      action: z.enum(['read', 'write', 'delete', 'manage']),
    })
    .check(z.meta({ id: 'RolePolicy', description: 'An operation policy: an allow rule of a role.' })),
);

export const StoredRolePolicy = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z.string(),
      workspace: z.string(),
      service: z.string(),
      operation: z.string(),
      action: z.string(),
      /** Always 1: a policy never changes (its ETag for If-Match). */
      version: z.int(),
      created_at: DateTime,
    })
    .check(z.meta({ id: 'StoredRolePolicy' })),
);

export const ClaimMappingBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      workspace_id: z.string(),
      claim_name: z.string(),
      claim_value: z.string(),
      role_id: z.string(),
      priority: z.int(),
      /** Always 1: a mapping never changes (its ETag for If-Match). */
      version: z.int(),
      created_at: DateTime,
    })
    .check(z.meta({ id: 'ClaimMapping' })),
);

export const ClaimMappingInput = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    claim_name: z.string().check(z.minLength(1), z.maxLength(256)),
    claim_value: z.string().check(z.minLength(1), z.maxLength(1024)),
    role_id: z.string().check(z.minLength(1), z.maxLength(64)),
    priority: z.optional(z.int().check(z.minimum(-1000000), z.maximum(1000000))),
  }),
);

export const ClaimMappingList = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ claim_mappings: z.array(ClaimMappingBody), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'ClaimMappingList' })),
);

export const AuthConsoleConfig = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      enabled: z.boolean(),
      method: z.string(),
      password_login: z.boolean(),
      token_login: z.boolean(),
      oidc: z.strictObject({
        enabled: z.boolean(),
        issuer: z.string(),
        client_id: z.string(),
        redirect_uri: z.string(),
        scopes: z.array(z.string()),
        group_claims: z.optional(z.array(z.string())),
      }),
    })
    .check(z.meta({ id: 'AuthConsoleConfig' })),
);

const PostgisConnectionOut = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    host: z.string(),
    port: z.int(),
    database: z.string(),
    user: z.string(),
    sslmode: z.optional(z.enum(['disable', 'prefer', 'require', 'verify-full'])),
    schemas: z.optional(z.array(z.string())),
  }),
);

export const PostgisConnectionIn = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    host: z.string().check(z.minLength(1), z.maxLength(255)),
    port: z._default(z.int().check(z.minimum(1), z.maximum(65535)), 5432),
    database: z.string().check(z.minLength(1), z.maxLength(63)),
    user: z.string().check(z.minLength(1), z.maxLength(63)),
    password: z.optional(z.string().check(z.maxLength(1024))),
    sslmode: z.optional(z.enum(['disable', 'prefer', 'require', 'verify-full'])),
    schemas: z.optional(
      z.array(z.string().check(z.minLength(1), z.maxLength(63))).check(z.minLength(1), z.maxLength(20)),
    ),
  }),
);

/** A raster mosaic's root: an absolute local directory (local mode) or `s3://bucket/prefix` (ADR 0060). */
export const MosaicConnectionIn = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    root_uri: z.string().check(
      z.minLength(1),
      z.maxLength(1024),
      z.regex(/^(\/|file:\/\/\/|s3:\/\/[a-z0-9][a-z0-9.-]{1,62}(\/|$))/, {
        error: 'must be an absolute directory path, file:///path or s3://bucket/prefix',
      }),
    ),
  }),
);

export const ServiceBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      workspace_id: Uuid,
      name: z.string(),
      type: z.enum(['postgis', 'raster_mosaic']),
      connection: z.union([PostgisConnectionOut, z.strictObject({ root_uri: z.string() })]),
      enabled: z.boolean(),
      configured_secrets: z.array(z.string()),
      version: z.int(),
      created_at: DateTime,
      updated_at: DateTime,
    })
    .check(z.meta({ id: 'Service' })),
);

export const DimensionSchema = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      name: z.string().check(z.minLength(1), z.maxLength(64)),
      units: z.string().check(z.maxLength(128)),
      // 2048, not more: ten of them must leave a layer item room for 64 KiB of SQL (ADR 0073).
      extent: z.string().check(z.maxLength(2048)),
      default: z.optional(z.string().check(z.maxLength(256))),
      source_property: z.optional(z.string().check(z.maxLength(128))),
      end_property: z.optional(z.string().check(z.maxLength(128))),
      multiple_values: z.optional(z.boolean()),
      nearest_value: z.optional(z.boolean()),
      current: z.optional(z.boolean()),
    })
    .check(z.meta({ id: 'Dimension' })),
);

export { MAX_SQL_BYTES };

/** SQL text of at most MAX_SQL_BYTES UTF-8 bytes. */
export const SqlText = /* @__PURE__ */ shakable(() =>
  z.string().check(
    z.maxLength(MAX_SQL_BYTES),
    z.refine((s: string) => Buffer.byteLength(s, 'utf8') <= MAX_SQL_BYTES, {
      error: `must be at most ${MAX_SQL_BYTES} bytes of UTF-8`,
    }),
  ),
);

export const SQLViewInput = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      sql: SqlText.check(z.minLength(1)),
      geometry_column: z.string().check(z.minLength(1), z.maxLength(63)),
      id_column: z.optional(z.string().check(z.minLength(1), z.maxLength(63))),
      srid: z.optional(z.int().check(z.minimum(1), z.maximum(999999))),
    })
    .check(z.meta({ id: 'SQLView' })),
);

export const LayerInputSchema = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    source_layer: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
    public_id: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
    title: z.optional(z.string().check(z.maxLength(256))),
    description: z.optional(z.string().check(z.maxLength(4096))),
    crs_default: z.optional(z.int().check(z.minimum(1), z.maximum(999999))),
    enabled: z.optional(z.boolean()),
    public: z.optional(z.boolean()),
    allowed_roles: z.optional(
      z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(20)),
    ),
    dimensions: z.optional(z.array(DimensionSchema).check(z.maxLength(10))),
    default_style: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
    styles: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(10))),
    sql_view: z.optional(SQLViewInput),
  }),
);

const Extent = /* @__PURE__ */ shakable(() =>
  z.strictObject({ min_x: z.number(), min_y: z.number(), max_x: z.number(), max_y: z.number() }),
);

export const LayerBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      workspace_id: Uuid,
      service_id: Uuid,
      source_layer: z.string(),
      public_id: z.string(),
      title: z.string(),
      description: z.optional(z.string()),
      crs_default: z.int(),
      enabled: z.boolean(),
      public: z.boolean(),
      allowed_roles: z.array(z.string()),
      dimensions: z.array(DimensionSchema),
      default_style: z.optional(z.string()),
      styles: z.array(z.string()),
      is_sql_view: z.boolean(),
      sql_view: z.optional(
        z.strictObject({
          sql: z.string(),
          geometry_column: z.string(),
          geometry_type: z.optional(z.string()),
          srid: z.optional(z.int()),
          id_column: z.string(),
          properties: z.optional(z.array(z.strictObject({ name: z.string(), type: z.string() }))),
          read_only: z.literal(true),
        }),
      ),
      geometry_type: z.optional(z.string()),
      native_extent: z.optional(z.strictObject({ ...Extent.def.shape, srid: z.int() })),
      version: z.int(),
      created_at: DateTime,
      updated_at: DateTime,
    })
    .check(z.meta({ id: 'Layer' })),
);

export const ValidateSQLResponse = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      valid: z.boolean(),
      error: z.optional(z.string()),
      discovered: z.optional(
        z.strictObject({
          columns: z.array(z.strictObject({ name: z.string(), type: z.string() })),
          geometry_column: z.string(),
          geometry_type: z.string(),
          srid: z.int(),
          suggested_id_column: z.string(),
        }),
      ),
    })
    .check(z.meta({ id: 'ValidateSQLResponse' })),
);

export const DiscoveredLayerBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      schema: z.string(),
      table: z.string(),
      name: z.string(),
      geometry_column: z.string(),
      geometry_type: z.string(),
      srid: z.int(),
      extent: z.nullable(Extent),
    })
    .check(z.meta({ id: 'DiscoveredLayer' })),
);

export const GroupMemberSchema = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    resource: z.string().check(z.minLength(1), z.maxLength(64)),
    style: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
    opacity: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
  }),
);

export const LayerGroupBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      workspace_id: Uuid,
      public_id: z.string(),
      title: z.string(),
      members: z.array(GroupMemberSchema),
      version: z.int(),
      created_at: DateTime,
      updated_at: DateTime,
    })
    .check(z.meta({ id: 'LayerGroup' })),
);
