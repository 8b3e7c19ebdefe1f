import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { defineOperation } from '../operation.ts';

export const getOpenAPI = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getOpenAPI',
    method: 'GET',
    path: '/api/v1/openapi.json',
    handler: 'functions/meta/get-open-api.ts',
    permission: 'public',
    summary: 'This OpenAPI 3.1 document',
    tags: ['meta'],
    request: {},
    responses: { 200: { description: 'the OpenAPI document' } },
    data: [],
  }),
);

const Health = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ status: z.literal('ok') })
    .check(z.meta({ id: 'Health', description: 'Liveness: the server answers.' })),
);

const Readiness = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      status: z.literal('ready'),
      checks: z.strictObject({
        catalog: z.literal('ok'),
        import_database: z.enum(['ok', 'not_configured']),
      }),
    })
    .check(
      z.meta({
        id: 'Readiness',
        description:
          'Readiness: each dependency reached (`not_configured`: the stage has no import database, so imports are off).',
      }),
    ),
);

export const getHealth = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getHealth',
    method: 'GET',
    path: '/api/v1/health',
    handler: 'functions/meta/get-health.ts',
    permission: 'public',
    summary: 'Liveness: the server answers (no dependency is read)',
    description:
      'Liveness for load balancers and orchestrators: 200 whenever the server runs. It reads nothing (no catalog store, no database), so a dependency outage never restarts a healthy server; readiness is `GET /ready`. Unauthenticated, and it says nothing about the server (no version, host or configuration).',
    tags: ['meta'],
    request: {},
    responses: { 200: { description: 'the server answers', schema: Health } },
    examples: { response: { status: 'ok' } },
    data: [],
  }),
);

export const getReadiness = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getReadiness',
    method: 'GET',
    path: '/api/v1/ready',
    handler: 'functions/meta/get-readiness.ts',
    permission: 'public',
    summary: 'Readiness: the catalog store and the import database are reachable',
    description:
      'Readiness: one read of the catalog store (DynamoDB) and a login with `SELECT 1` on the import database, at once, each within 4 s. 503 (`not_ready`, the standard error body) when either fails, naming neither the dependency nor the cause (both are logged). Unauthenticated.',
    tags: ['meta'],
    request: {},
    responses: {
      200: { description: 'every dependency answered', schema: Readiness },
      503: { description: 'a dependency is unreachable (`not_ready`); nothing about which or why' },
    },
    examples: { response: { status: 'ready', checks: { catalog: 'ok', import_database: 'ok' } } },
    // One GetItem of a key no item has.
    data: ['GetItem'],
    importDatabase: true,
    postgres: true,
  }),
);
