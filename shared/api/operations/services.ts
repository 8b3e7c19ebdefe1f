import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import {
  DeletionConflictBody,
  DeletionOperationBody,
  DeletionPlanBody,
  RecurseFlag,
} from '../deletion-schemas.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import {
  DiscoveredLayerBody,
  IdOrName,
  MosaicConnectionIn,
  Name,
  PostgisConnectionIn,
  pageQuery,
  ServiceBody,
  SqlText,
  ValidateSQLResponse,
} from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const ServiceParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, service: IdOrName }),
);
const ServiceInput = /* @__PURE__ */ shakable(() =>
  z.discriminatedUnion('type', [
    z.strictObject({
      name: Name,
      type: z.literal('postgis'),
      connection: PostgisConnectionIn,
      enabled: z.optional(z.boolean()),
    }),
    z.strictObject({
      name: Name,
      type: z.literal('raster_mosaic'),
      connection: MosaicConnectionIn,
      enabled: z.optional(z.boolean()),
    }),
  ]),
);
/** What a connection test answers (testExistingServiceConnection, testNewServiceConnection). */
const ConnectionTest = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ ok: z.boolean(), duration_ms: z.number(), message: z.optional(z.string()) })
    .check(z.meta({ id: 'ConnectionTest' })),
);
const notPostgis = { 422: { description: 'the service is not a PostGIS service' } };
const notFound = { description: 'workspace or service not found' };
/** The path of the example service. */
const serviceExample = { workspace: 'roads-demo', service: 'roads-db' };
const unavailable = { 503: { description: 'data source unavailable' } };

export const createService = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createService',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services',
    handler: 'functions/services/create-service.ts',
    permission: 'manage',
    summary: 'Register a PostGIS data source or a raster mosaic',
    description:
      'An enabled PostGIS service must connect first (400 with the reason otherwise). The password is write-only: stored encrypted, never returned (`configured_secrets` lists it). A `raster_mosaic` (`connection: {root_uri}`) needs a readable root (400 otherwise).',
    tags: ['services'],
    request: { params: WorkspaceParams, body: ServiceInput },
    responses: {
      201: {
        description: 'created service',
        schema: ServiceBody,
        headers: { Location: 'URL of the service' },
      },
      400: { description: 'bad request, or the connection could not be opened (or the mosaic root read)' },
      404: { description: 'workspace not found' },
      409: { description: 'a service with this name already exists in the workspace' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: {
        name: 'roads-db',
        type: 'postgis',
        connection: {
          host: 'db.internal.example',
          port: 5432,
          database: 'gis',
          user: 'geoplane_reader',
          password: 'change-me',
          sslmode: 'require',
          schemas: ['public'],
        },
      },
      response: ex.postgisService,
    },
    data: ['GetItem', 'PutItem', 'ConditionCheckItem', 'UpdateItem'],
    secrets: ['encrypt'],
    readsMosaicSources: true,
    postgres: true,
  }),
);

export const listServices = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listServices',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/services',
    handler: 'functions/services/list-services.ts',
    permission: 'read',
    summary: 'Return the services of a workspace (default page size 1000)',
    tags: ['services'],
    // Default 1000, so "all services" holds for ordinary workspaces (DESIGN §5).
    request: { params: WorkspaceParams, query: pageQuery(1000) },
    responses: {
      200: {
        description: 'the services',
        schema: z
          .strictObject({ services: z.array(ServiceBody), next_cursor: z.optional(z.string()) })
          .check(z.meta({ id: 'ServiceList' })),
      },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: { services: [ex.postgisService] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const getService = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getService',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/services/{service}',
    handler: 'functions/services/get-service.ts',
    permission: 'read',
    summary: 'Read a service (no secrets)',
    tags: ['services'],
    request: { params: ServiceParams },
    responses: { 200: { description: 'the service', schema: ServiceBody }, 404: notFound },
    examples: {
      params: serviceExample,
      response: ex.postgisService,
    },
    data: ['GetItem'],
  }),
);

export const updateService = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'updateService',
    method: 'PUT',
    path: '/api/v1/workspaces/{workspace}/services/{service}',
    handler: 'functions/services/update-service.ts',
    permission: 'manage',
    summary: 'Replace a service; an omitted password keeps the stored one. Honours If-Match.',
    tags: ['services'],
    request: { params: ServiceParams, body: ServiceInput },
    responses: {
      200: { description: 'updated service', schema: ServiceBody },
      400: { description: 'bad request, or the connection could not be opened (or the mosaic root read)' },
      404: notFound,
      409: { description: 'a service with this name already exists' },
      412: { description: 'If-Match does not match the current version' },
    },
    examples: {
      params: serviceExample,
      request: {
        name: 'roads-db',
        type: 'postgis',
        connection: {
          host: 'db2.internal.example',
          port: 5432,
          database: 'gis',
          user: 'geoplane_reader',
          sslmode: 'require',
        },
        enabled: true,
      },
      response: {
        ...ex.postgisService,
        connection: { ...ex.postgisService.connection, host: 'db2.internal.example' },
        version: 2,
        updated_at: ex.updated,
      },
    },
    data: ['GetItem', 'PutItem', 'DeleteItem'],
    secrets: ['encrypt', 'decrypt'],
    readsMosaicSources: true,
    postgres: true,
  }),
);

export const testExistingServiceConnection = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'testExistingServiceConnection',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services/{service}/test-connection',
    handler: 'functions/services/test-existing-service-connection.ts',
    permission: 'manage',
    summary: "Try the service's connection now",
    tags: ['services'],
    request: { params: ServiceParams },
    responses: {
      200: {
        description: 'the outcome (ok false with a message when it failed)',
        schema: ConnectionTest,
      },
      404: notFound,
      ...notPostgis,
      503: {
        description:
          'the catalog store or the key service is unavailable (a target that refuses, times out or is not PostgreSQL is 200 ok: false)',
      },
    },
    examples: {
      params: serviceExample,
      response: { ok: true, duration_ms: 42, message: 'Connected to PostgreSQL 16.4 with PostGIS 3.4.2.' },
    },
    data: ['GetItem'],
    secrets: ['decrypt'],
    postgres: true,
  }),
);

export const testNewServiceConnection = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'testNewServiceConnection',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services/test-connection',
    handler: 'functions/services/test-new-service-connection.ts',
    permission: 'manage',
    summary: 'Try a PostGIS connection before saving it (nothing is stored)',
    description:
      "The connection createService would take, tried now and forgotten: the same network policy (a host the stage doesn't allow, or a login reserved for the import database, is 400 and nothing is opened) and the same answer as testExistingServiceConnection (200 `ok: false` with one uniform message for a target that refuses, times out or isn't PostgreSQL). The password is used once and neither stored nor logged.",
    tags: ['services'],
    request: {
      params: WorkspaceParams,
      body: z.strictObject({ type: z.literal('postgis'), connection: PostgisConnectionIn }),
    },
    responses: {
      200: {
        description: 'the outcome (ok false with a message when it failed)',
        schema: ConnectionTest,
      },
      400: {
        description:
          'bad body, a target the network policy refuses (`connection_target_not_allowed`) or a reserved login (`connection_login_reserved`)',
      },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: {
        type: 'postgis',
        connection: {
          host: 'db.internal.example',
          port: 5432,
          database: 'gis',
          user: 'geoplane_reader',
          password: 'change-me',
          sslmode: 'require',
        },
      },
      response: { ok: true, duration_ms: 42, message: 'Connected to PostgreSQL 16.4 with PostGIS 3.4.2.' },
    },
    data: [],
    postgres: true,
  }),
);

export const discoverLayers = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'discoverLayers',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services/{service}/discover',
    handler: 'functions/services/discover-layers.ts',
    permission: 'write',
    summary: 'List the readable geometry tables and views of the data source',
    tags: ['services'],
    request: { params: ServiceParams },
    responses: {
      200: {
        description: 'discovered layers',
        schema: z
          .strictObject({ layers: z.array(DiscoveredLayerBody) })
          .check(z.meta({ id: 'DiscoveredLayers' })),
      },
      404: notFound,
      422: {
        description:
          'the data source refuses the connection (credentials, database), or not a PostGIS service',
      },
      ...unavailable,
    },
    examples: {
      params: serviceExample,
      response: {
        layers: [
          {
            schema: 'public',
            table: 'roads',
            name: 'roads',
            geometry_column: 'geom',
            geometry_type: 'MULTILINESTRING',
            srid: 4326,
            extent: { min_x: 5.9, min_y: 45.8, max_x: 10.5, max_y: 47.8 },
          },
        ],
      },
    },
    data: ['GetItem'],
    secrets: ['decrypt'],
    postgres: true,
  }),
);

export const validateSQLView = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'validateSQLView',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services/{service}/validate-sql',
    handler: 'functions/services/validate-sql-view.ts',
    permission: 'write',
    summary: 'Validate a read-only SQL view query and discover its columns and geometry',
    description: 'A refused or failing query is 200 with `valid: false` and the error.',
    tags: ['services'],
    request: {
      params: ServiceParams,
      body: z.strictObject({ sql: SqlText }),
    },
    responses: {
      200: { description: 'validation result', schema: ValidateSQLResponse },
      400: { description: 'bad request' },
      404: notFound,
      ...notPostgis,
      503: {
        description:
          'the catalog store or the key service is unavailable (a target that refuses, times out or is not PostgreSQL is 200 ok: false)',
      },
    },
    examples: {
      params: serviceExample,
      request: { sql: "SELECT id, name, geom FROM public.roads WHERE class = 'motorway'" },
      response: {
        valid: true,
        discovered: {
          columns: [
            { name: 'id', type: 'integer' },
            { name: 'name', type: 'string' },
          ],
          geometry_column: 'geom',
          geometry_type: 'MULTILINESTRING',
          srid: 4326,
          suggested_id_column: 'id',
        },
      },
    },
    data: ['GetItem'],
    secrets: ['decrypt'],
    postgres: true,
  }),
);

export const deleteService = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteService',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/services/{service}',
    handler: 'functions/services/delete-service.ts',
    permission: 'manage',
    summary: 'Delete a service; with recurse=true its dependents too (asynchronously)',
    description:
      'An empty service is deleted at once (204). One with dependents (layers, the layer groups that contain them — transitively — and mosaic granules) answers 409 with the deletion plan unless `recurse=true`; with it the service is hidden at once and a durable workflow removes everything (202 with the DeletionOperation and its Location). A service already being deleted answers with its operation.',
    tags: ['services'],
    resolvesDeletingService: true,
    request: {
      params: ServiceParams,
      query: z.strictObject({ recurse: RecurseFlag }),
    },
    responses: {
      202: {
        description: 'the deletion operation',
        schema: DeletionOperationBody,
        headers: { Location: 'URL of the operation (GET /api/v1/deletions/{id})' },
      },
      204: { description: 'the empty service was deleted' },
      400: { description: 'recurse is not one of true, false, 1, 0' },
      404: { description: 'service not found' },
      409: {
        description: 'the service has dependents (the plan is in the body)',
        schema: DeletionConflictBody,
      },
    },
    examples: {
      params: serviceExample,
      query: { recurse: 'true' },
      response: ex.deletion,
    },
    data: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
    starts: ['deletion'],
  }),
);

export const getServiceDeletionPlan = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getServiceDeletionPlan',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/services/{service}/deletion-plan',
    handler: 'functions/services/get-service-deletion-plan.ts',
    permission: 'read',
    summary: 'What deleting this service with recurse=true would remove (nothing is changed)',
    tags: ['services'],
    request: { params: ServiceParams },
    responses: { 200: { description: 'the plan', schema: DeletionPlanBody }, 404: notFound },
    examples: {
      params: serviceExample,
      response: ex.deletionPlan,
    },
    data: ['GetItem', 'Query', 'BatchGetItem'],
  }),
);
