import * as z from 'zod/mini';
import { bodyKind } from './content-types.ts';
import type { Operation, Schema } from './operation.ts';
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

class Components {
  readonly schemas: Record<string, Json> = {};

  /** Converts a zod schema to JSON Schema, hoisting named ($defs) schemas into components. */
  convert(schema: Schema, io: 'input' | 'output'): Json {
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io }) as Json;
    const text = JSON.stringify(raw).replaceAll('"#/$defs/', '"#/components/schemas/');
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
      out.push({
        name,
        in: where,
        required: where === 'path' || (json.required ?? []).includes(name),
        schema: prop,
      });
    }
  }
  if (op.method === 'POST') {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes a retry safe (ADR 0088): the first 2xx answer is stored for 24 h per caller, operation and key and replayed (with `Idempotent-Replayed: true`) for the same request; the same key with another request answers 422, while the first still runs 409. 1–255 characters (400 otherwise).',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  if (op.method === 'PUT' || op.method === 'DELETE') {
    out.push({
      name: 'If-Match',
      in: 'header',
      required: false,
      description: 'The ETag of the version you read; a mismatch answers 412.',
      schema: { type: 'string' },
    });
  }
  return out;
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
  const all: Record<string, { description: string; schema?: Schema; headers?: Record<string, string> }> = {
    ...statuses,
    ...(bodyKind(op) === 'json' ? { 415: unsupportedMediaType } : {}),
    ...op.responses,
    ...idempotency,
  };
  for (const [status, spec] of Object.entries(all)) {
    const code = Number(status);
    const entry: Json = { description: spec.description };
    const schema = spec.schema;
    if (code >= 400 && schema)
      entry.content = { 'application/json': { schema: components.convert(schema, 'output') } };
    else if (code >= 400)
      entry.content = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
    else if (schema) entry.content = { 'application/json': { schema: components.convert(schema, 'output') } };
    else if (code !== 204 && op.operationId === 'getOpenAPI')
      entry.content = { 'application/json': { schema: {} } };
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
    ...(op.description ? { description: op.description } : {}),
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
      content: { 'application/json': { schema: components.convert(op.request.body, 'input') } },
    };
  } else if (bodyKind(op) === 'raw') {
    object.requestBody = {
      required: true,
      description: 'The raw bytes, with any Content-Type.',
      content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
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
  for (const op of routes) {
    paths[op.path] ??= {};
    (paths[op.path] as Record<string, Json>)[op.method.toLowerCase()] = operationObject(op, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'GeoPlane Management API',
      version: apiVersion,
      description: 'The management API (control plane) of the GeoPlane geospatial publishing server.',
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
    security: [{ bearer: [] }, { apiKey: [] }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}
