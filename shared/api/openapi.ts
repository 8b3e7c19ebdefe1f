import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { bodyKind } from './content-types.ts';
import type { Operation, ResponseSpec, Schema } from './operation.ts';
import { apiVersion, routes } from './routes.ts';
import { ErrorBody } from './schemas.ts';

type Json = Record<string, unknown>;

/** The 415 of every operation that takes a JSON body (ADR 0075). */
const unsupportedMediaType = {
  description:
    'the body is not declared as JSON: Content-Type must be application/json or application/<x>+json, charset utf-8 only (the Accept header lists them)',
};

/** What every POST can answer for its `Idempotency-Key` (ADR 0088). */
const idempotencyErrors: Record<number, string> = {
  409: 'a request with the same Idempotency-Key is still being processed (reason idempotency_key_in_flight)',
  422: 'the Idempotency-Key was already used with a different request (reason idempotency_key_reused)',
};

/** Errors every operation can answer (DESIGN §5), documented once for all. */
const commonErrors: Record<number, string> = {
  401: 'missing or rejected credential',
  403: 'authenticated but not allowed (no role in the workspace, insufficient role, disabled login, failed CSRF)',
  413: 'request body exceeds the configured limit',
  426: 'HTTPS required',
  429: 'request rate exceeded (see Retry-After)',
  503: 'the catalog store or a data source is temporarily unavailable',
};

/**
 * The shared answers in `components/responses`, by status: an operation that does not describe the
 * status itself refers to them (`$ref`) instead of repeating them inline (ADR 0095).
 */
const sharedResponses: Record<
  string,
  { status: number; description: string; headers?: Record<string, string> }
> = {
  Unauthorized: { status: 401, description: commonErrors[401] as string },
  Forbidden: { status: 403, description: commonErrors[403] as string },
  PayloadTooLarge: { status: 413, description: commonErrors[413] as string },
  UnsupportedMediaType: {
    status: 415,
    description: unsupportedMediaType.description,
    headers: { Accept: 'the JSON media types the operation takes' },
  },
  HttpsRequired: {
    status: 426,
    description: commonErrors[426] as string,
    headers: { Upgrade: '`TLS/1.2, HTTP/1.1`' },
  },
  TooManyRequests: {
    status: 429,
    description: commonErrors[429] as string,
    headers: { 'Retry-After': 'seconds to wait before retrying' },
  },
  ServiceUnavailable: {
    status: 503,
    description: commonErrors[503] as string,
    headers: { 'Retry-After': 'seconds to wait before retrying' },
  },
  IdempotencyKeyInFlight: { status: 409, description: idempotencyErrors[409] as string },
  IdempotencyKeyReused: { status: 422, description: idempotencyErrors[422] as string },
  // Errors many operations describe in the same words: an operation's own entry with exactly this
  // status and text (and no schema of its own) refers to the shared one.
  BadPage: { status: 400, description: 'bad limit or cursor' },
  BadFilter: { status: 400, description: 'bad filter, limit or cursor' },
  WorkspaceNotFound: { status: 404, description: 'workspace not found' },
  ServiceNotFound: { status: 404, description: 'workspace or service not found' },
  ImportNotFound: {
    status: 404,
    description: 'workspace or import not found (or an import of another workspace)',
  },
  RoleNotFound: { status: 404, description: 'role not found' },
  PreconditionFailed: { status: 412, description: 'If-Match does not match the current version' },
};
/** `<status> <description>` → the shared response with exactly that answer. */
const sharedByText = /* @__PURE__ */ shakable(
  () => new Map(Object.entries(sharedResponses).map(([name, r]) => [`${r.status} ${r.description}`, name])),
);
const commonRef: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  426: 'HttpsRequired',
  429: 'TooManyRequests',
  503: 'ServiceUnavailable',
};
const idempotencyRef: Record<number, string> = { 409: 'IdempotencyKeyInFlight', 422: 'IdempotencyKeyReused' };

/** The top-level tags: one per tag an operation uses, each described (a new tag needs a line here). */
const tagDescriptions: Record<string, string> = {
  meta: 'The API itself: this OpenAPI document, liveness (`/health`) and readiness (`/ready`).',
  auth: 'Browser sessions (login with a JWT or API key, refresh, logout), the caller (`/auth/me`) and the web console configuration.',
  workspaces:
    'Workspaces: the unit of tenancy. Addressed by id (UUID) or name; create, list and recursive delete are super_admin only.',
  'api-keys':
    'API keys of a workspace (`X-API-Key`): the secret is shown once, at creation; keys can be revoked.',
  roles: 'Built-in and custom roles and the policies of custom roles (super_admin).',
  'claim-mappings':
    'Claim mappings: which JWT claim values grant which role, per workspace and globally (highest priority wins).',
  services:
    'Services of a workspace: PostGIS datasources, raster mosaics and their published protocols (WMS, WFS, WCS, WMTS, OGC API); addressed by id (UUID) or name.',
  deletions: 'Recursive deletions of workspaces and services: asynchronous operations and their progress.',
  layers: "Layers published from a service's source layers or SQL views; addressed by id (UUID).",
  'layer-groups': 'Layer groups: ordered trees of layers and groups; addressed by id (UUID) or public_id.',
  mosaics: 'Raster mosaics: the granules of a raster_mosaic service, harvested from allowed S3 locations.',
  'tile-cache':
    'The caches: the persistent tile cache (statistics; seed, reseed and truncate jobs) and clearing the caches of a workspace or of every workspace (ADR 0139).',
  settings: 'Per-workspace settings (contact, limits, defaults of the published services).',
  'tile-matrix-sets':
    'Tile matrix sets (OGC TMS 2.0) for tiled services; built-in ones plus custom ones (super_admin).',
  styles: 'Styles of a workspace (SLD, SE or MapLibre/Mapbox JSON); addressed by name.',
  'style-assets': 'Graphics (PNG, JPEG, GIF, SVG) that styles reference; addressed by name.',
  imports: 'Imports of vector files into a PostGIS service: upload, plan, run, preview, roll back.',
  audit: 'The audit trail: who changed what, and which requests were refused.',
  catalog:
    'The catalog as a whole: the integrity check (dangling references, orphaned markers, counters, missing source tables, orphaned import schemas) and its repair.',
};

/**
 * What a path or query parameter holds, by name (ids vs names: ADR 0095). A parameter whose zod
 * schema carries a `description` (z.meta) uses that instead; a parameter with neither fails the
 * generation.
 */
const parameterDescriptions: Record<string, string> = {
  workspace: 'The workspace: its id (UUID) or its name.',
  service: 'The service: its id (UUID) or its name, within the workspace.',
  layer: 'The layer id (a UUID, as `id` in the layer body), not its public_id.',
  group: 'The layer group: its id (UUID) or its public_id.',
  keyId: 'The API key id (a UUID, as `id` in the key body; not the key or its prefix).',
  roleId: 'The role id: `admin`, `editor`, `viewer`, `super_admin` or a custom role id.',
  policyId: 'The policy id (20 hex digits, as `id` in the listed policies).',
  mappingId: 'The claim mapping id (a UUID).',
  id: 'The deletion operation id (a UUID, from the 202 answer or its Location).',
  granule: 'The granule id (as `id` in the listed granules; case-insensitive).',
  tileMatrixSet: 'The tile matrix set id (e.g. `WebMercatorQuad`).',
  style: 'The style name, within the workspace.',
  asset: 'The style asset name, within the workspace (1–64 letters, digits, `.`, `_`, `-`).',
  import: 'The import id (a UUID, from the 201 answer or its Location).',
  limit: 'Page size: an integer from 1 to 1000 (the default depends on the list).',
  cursor: 'The opaque `next_cursor` of the previous page; omit it for the first page.',
  recurse:
    '`true` (or `1`) deletes everything inside as an asynchronous operation (202); `false` (or `0`, the default) refuses a non-empty one with 409.',
};

/** Who may call an operation, by permission class (DESIGN §6). */
const permissionText: Record<string, string> = {
  public: 'No credential needed.',
  authenticated: 'Any authenticated caller.',
  read: 'Viewer or above in the workspace.',
  write: 'Editor or above in the workspace.',
  manage: 'Admin or above in the workspace.',
  global: 'super_admin only.',
};

/** Tools reject `prefixItems` + `items: false` and `number` + `multipleOf: 1`: publish tuples as
 * arrays of fixed length and whole numbers as `integer` (ADR 0095). */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = portable(v);
  if (Array.isArray(out.prefixItems)) {
    const items = out.prefixItems as Json[];
    const distinct = [...new Map(items.map((i) => [JSON.stringify(i), i])).values()];
    delete out.prefixItems;
    out.items = distinct.length === 1 ? distinct[0] : { anyOf: distinct };
    out.minItems = items.length;
    out.maxItems = items.length;
  }
  if (out.type === 'number' && out.multipleOf === 1) {
    out.type = 'integer';
    delete out.multipleOf;
  }
  return out;
}

class Components {
  readonly schemas: Record<string, Json> = {};

  /** Converts a zod schema to JSON Schema, hoisting named ($defs) schemas into components. */
  convert(schema: Schema, io: 'input' | 'output'): Json {
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io }) as Json;
    const text = JSON.stringify(portable(raw)).replaceAll('"#/$defs/', '"#/components/schemas/');
    const { $schema: _s, $defs, ...rest } = JSON.parse(text) as Json & { $defs?: Record<string, Json> };
    for (const [name, def] of Object.entries($defs ?? {})) this.schemas[name] = def;
    return rest;
  }
}

function parameters(op: Operation, components: Components): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ['path', op.request.params],
    ['query', op.request.query],
  ] as const) {
    if (!schema) continue;
    const json = components.convert(schema, 'input') as {
      properties?: Record<string, Json>;
      required?: string[];
    };
    for (const [name, prop] of Object.entries(json.properties ?? {})) {
      const { description: own, ...schema } = prop as Json & { description?: string };
      const description = own ?? parameterDescriptions[name];
      if (!description) throw new Error(`${op.operationId}: parameter ${name} has no description`);
      const example = (where === 'path' ? op.examples?.params : op.examples?.query)?.[name];
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        description,
        schema,
        // Examples are declared as sent (strings); a numeric parameter's example is its number.
        ...(example === undefined
          ? {}
          : { example: schema.type === 'integer' || schema.type === 'number' ? Number(example) : example }),
      });
    }
  }
  if (op.method === 'POST') out.push({ $ref: '#/components/parameters/IdempotencyKey' });
  if (op.method === 'PUT' || op.method === 'DELETE') out.push({ $ref: '#/components/parameters/IfMatch' });
  return out;
}

/** The status whose body the response example shows: the lowest 2xx that declares a schema. */
export function successWithSchema(op: Operation): number | undefined {
  return Object.entries(op.responses)
    .filter(([s, r]) => Number(s) < 300 && r.schema)
    .map(([s]) => Number(s))
    .sort((a, b) => a - b)[0];
}

/**
 * The operation's description: what it does (its own description, else its summary), what it
 * answers, its notable (operation-specific) errors and who may call it — from the route table.
 */
function describe(op: Operation): string {
  const sentence = (t: string) => (/[.!?)`]$/.test(t) ? t : `${t}.`);
  const does = sentence(op.description ?? op.summary.charAt(0).toUpperCase() + op.summary.slice(1));
  const answers = Object.entries(op.responses)
    .filter(([s]) => Number(s) < 400)
    .map(([s, r]) => `${s} ${r.description}`);
  const errors = Object.entries(op.responses)
    .filter(([s]) => Number(s) >= 400)
    .map(([s, r]) => `${s} ${r.description}`);
  return [
    does,
    `Answers: ${answers.join('; ')}.`,
    ...(errors.length > 0 ? [`Notable errors: ${errors.join('; ')}.`] : []),
    permissionText[op.permission] ?? '',
  ].join('\n\n');
}

function operationObject(op: Operation, components: Components): Json {
  const responses: Record<string, Json> = {};
  const statuses: Record<string, { description: string }> = Object.fromEntries(
    Object.entries(commonErrors).map(([s, d]) => [s, { description: d }]),
  );
  // An operation's own 409/422 keeps its description and gains the idempotency meaning.
  const idempotency: Record<string, { description: string }> = {};
  if (op.method === 'POST') {
    for (const [s, d] of Object.entries(idempotencyErrors)) {
      const own = op.responses[Number(s)];
      idempotency[s] = { ...own, description: own ? `${own.description}; or ${d}` : d };
    }
  }
  const all: Record<string, ResponseSpec> = {
    ...statuses,
    ...(bodyKind(op) === 'json' ? { 415: unsupportedMediaType } : {}),
    ...op.responses,
    ...idempotency,
  };
  const exampleStatus = successWithSchema(op);
  for (const [status, spec] of Object.entries(all)) {
    const code = Number(status);
    const own = op.responses[code];
    const shared = own
      ? !own.schema && !own.headers && !idempotency[status]
        ? sharedByText.get(`${code} ${own.description}`)
        : undefined
      : (idempotency[status] ? idempotencyRef : commonRef)[code];
    if (shared) {
      responses[status] = { $ref: `#/components/responses/${shared}` };
      continue;
    }
    const entry: Json = { description: spec.description };
    const schema = spec.schema;
    const example =
      code === exampleStatus && op.examples?.response !== undefined ? { example: op.examples.response } : {};
    if (code >= 400 && schema)
      entry.content = { 'application/json': { schema: components.convert(schema, 'output') } };
    else if (code >= 400)
      entry.content = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
    else if (schema)
      entry.content = { 'application/json': { schema: components.convert(schema, 'output'), ...example } };
    else if (spec.mediaTypes)
      entry.content = Object.fromEntries(
        spec.mediaTypes.map((m) => [m, { schema: { type: 'string', format: 'binary' } }]),
      );
    else if (code !== 204 && op.operationId === 'getOpenAPI')
      entry.content = { 'application/json': { schema: { type: 'object' }, ...example } };
    const replayed =
      op.method === 'POST' && code >= 200 && code < 300
        ? {
            'Idempotent-Replayed':
              '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
          }
        : {};
    const headers = { ...spec.headers, ...replayed };
    if (Object.keys(headers).length > 0) {
      entry.headers = Object.fromEntries(
        Object.entries(headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]),
      );
    }
    responses[status] = entry;
  }
  const object: Json = {
    operationId: op.operationId,
    summary: op.summary,
    description: describe(op),
    tags: op.tags,
    'x-permission': op.permission,
    parameters: parameters(op, components),
    responses,
  };
  if (op.request.body) {
    object.requestBody = {
      required: true,
      description:
        'JSON: Content-Type application/json or application/<x>+json, charset utf-8 only (else 415).',
      content: {
        'application/json': {
          schema: components.convert(op.request.body, 'input'),
          ...(op.examples?.request === undefined ? {} : { example: op.examples.request }),
        },
      },
    };
  } else if (bodyKind(op) === 'raw') {
    object.requestBody = {
      required: true,
      description: `The raw bytes${op.maxBodyBytes ? ` (at most ${op.maxBodyBytes} bytes, else 413)` : ''}.`,
      content: Object.fromEntries(
        (op.requestMediaTypes ?? ['application/octet-stream']).map((m) => [
          m,
          { schema: { type: 'string', format: 'binary' } },
        ]),
      ),
    };
  }
  if (op.permission === 'public') object.security = [];
  return object;
}

/** The OpenAPI 3.1 document, generated from the route table. */
export function openApiDocument(): Json {
  const components = new Components();
  components.convert(ErrorBody, 'output');
  const paths: Record<string, Record<string, Json>> = {};
  const used = [...new Set(routes.flatMap((op) => op.tags))];
  for (const tag of used) if (!tagDescriptions[tag]) throw new Error(`tag ${tag} has no description`);
  for (const op of routes) {
    paths[op.path] ??= {};
    (paths[op.path] as Record<string, Json>)[op.method.toLowerCase()] = operationObject(op, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'GeoPlane Management API',
      version: apiVersion,
      description: [
        'The management API (control plane) of the GeoPlane geospatial publishing server.',
        'Credentials (DESIGN §6): `Authorization: Bearer <JWT>` from the configured OIDC issuer, `X-API-Key: <key>`, or a browser session (`POST /auth/login`) whose unsafe requests also send `X-CSRF-Token`. Errors have one body (`Error`). Every POST takes `Idempotency-Key`; every PUT and DELETE honours `If-Match`.',
        'Servers: `../..` resolves against the URL this document was fetched from, so the same document is right on a deployed stack (the stage root, e.g. `https://<api>.execute-api.<region>.amazonaws.com/prod`) and on the local host (ADR 0089).',
      ].join('\n\n'),
      contact: { name: 'GeoPlane maintainers' },
    },
    // The paths start with /api/v1 and the document is served at /api/v1/openapi.json, so `../..`
    // (resolved against the document's own URL) is the stage root on API Gateway (`…/prod`) and
    // the host root locally; `/` would drop the stage (ADR 0089).
    servers: [
      {
        url: '../..',
        description: 'The deployment that serves this document (GET …/api/v1/openapi.json)',
      },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com/{stage}',
        description: 'A deployed stack: its ApiUrl output without the trailing /api/v1',
        variables: {
          apiId: { default: 'API_ID', description: 'the REST API id' },
          region: { default: 'us-east-1' },
          stage: { default: 'prod', description: 'cdk.json stageName' },
        },
      },
    ],
    tags: used.map((name) => ({ name, description: tagDescriptions[name] })),
    security: [{ bearer: [] }, { apiKey: [] }, { session: [] }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses: Object.fromEntries(
        Object.entries(sharedResponses).map(([name, r]) => [
          name,
          {
            description: r.description,
            ...(r.headers
              ? {
                  headers: Object.fromEntries(
                    Object.entries(r.headers).map(([h, d]) => [
                      h,
                      { description: d, schema: { type: 'string' } },
                    ]),
                  ),
                }
              : {}),
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        ]),
      ),
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a retry safe (ADR 0088): the first 2xx answer is stored for 24 h per caller, operation and key and replayed (with `Idempotent-Replayed: true`) for the same request; the same key with another request answers 422, while the first still runs 409. 1–255 characters (400 otherwise).',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
        IfMatch: {
          name: 'If-Match',
          in: 'header',
          required: false,
          description: 'The ETag of the version you read; a mismatch answers 412.',
          schema: { type: 'string' },
        },
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A JWT from the configured OIDC issuer (`iss`, `aud`, `exp`, `nbf` enforced; asymmetric algorithms only). Roles come from the claim mappings of each workspace and the global ones.',
        },
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description:
            'An API key (`gpk_` + 43 base64url characters) of one workspace with its role (admin, editor, viewer), created by createAPIKey; revoked or expired keys answer 401.',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-session',
          description:
            'A browser session: `POST /auth/login` exchanges a JWT or API key for the `__Host-session` cookie (HttpOnly, Secure, SameSite=Lax, Path=/) and a readable `csrf_token` cookie. Every unsafe request (POST, PUT, DELETE) made with the session must also send the header `X-CSRF-Token` equal to the `csrf_token` cookie, else 403. `POST /auth/refresh` rotates both (the previous pair stays valid 30 s); `POST /auth/logout` ends the session.',
        },
      },
    },
  };
}
