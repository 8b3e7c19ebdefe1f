import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { IMPORT_LIMIT_REASONS } from '#domain/errors.ts';
import * as ex from '../examples.ts';
import {
  CreateImportInput,
  FeatureCollectionBody,
  ImportHistoryBody,
  ImportJobBody,
  ImportList,
  ImportPlanInputBody,
  ImportStatusEnum,
} from '../import-schemas.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, pageQuery } from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const ImportParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, import: IdOrName }),
);
const notFound = { description: 'workspace or import not found (or an import of another workspace)' };
const conflict = (text: string) => ({ description: text });
const accepted = (what: string) => ({
  description: what,
  schema: ImportJobBody,
  headers: { Location: 'URL of the import' },
});
const tags = ['imports'];
/** The 422 of a plan over a limit (ADR 0110). */
const overLimit = /* @__PURE__ */ shakable(() => ({
  description: `the plan is over one import's limit (layers, features, file bytes) or the workspace's import quota (rows, bytes): reason ${IMPORT_LIMIT_REASONS.join(', ')}`,
}));
/** One event of the example import's history (its id is the import's and a sequence number). */
const historyEvent = (n: number, status: string, phase: string, at: string) => ({
  id: `${ex.ids.import}.${String(n).padStart(6, '0')}`,
  import_id: ex.ids.import,
  status,
  phase,
  created_at: at,
  processed_bytes: 0,
  processed_features: 0,
  processed_layers: 0,
});
/** The example import once loaded with its plan (the CRS warning of discovery stays). */
const loaded = {
  ...ex.importJob,
  plan: ex.importPlan,
  processed_features: 12840,
  processed_layers: 1,
  warnings: ex.importJob.discovery.warnings,
};

export const createImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createImport',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/imports',
    handler: 'functions/imports/create-import.ts',
    permission: 'write',
    summary: 'Start an import: a file to upload (presigned form POST), or an allowed URI',
    description:
      "An `upload` source answers `awaiting_upload` with `upload`: POST the file as multipart form data to `upload.url` with `upload.fields` and the file in the `file` field (at most `upload.max_bytes`, before `upload.expires_at`), then call startImport. A `uri` source (`s3://` in a bucket the operator allows; locally a path under the configured import directory) is queued at once. `auto_publish` publishes with the discovered default plan. `service_name` and `layers` name what the import publishes up front (ADR 0126): discovery checks every name against the workspace before a row is loaded; a name in use stops the import at `awaiting_plan` with `clashes` (the name and a free one proposed), or, with `auto_publish`, is replaced by the free name, which the history records. A `layers` entry with `target` replaces or appends to an existing layer's data instead (ADR 0127): the layer must exist and have been published by an import (422 `import_target_invalid` otherwise); its columns are matched once the file is read. Uploads never reach the API itself (API Gateway's 10 MB limit).",
    tags,
    request: { params: WorkspaceParams, body: CreateImportInput },
    responses: {
      201: { description: 'the import', schema: ImportJobBody, headers: { Location: 'URL of the import' } },
      400: {
        description:
          'bad request: a URI that is not allowed, a file over the size limit, a layer or public id named twice (`invalid_layer_names`)',
      },
      404: { description: 'workspace not found' },
      409: conflict('a service with the service_name exists in the workspace'),
      422: {
        description:
          'a `target` layer that does not exist or was not published by an import (`import_target_invalid`)',
      },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: {
        name: 'parcels-2026',
        source: { kind: 'upload', filename: 'parcels.gpkg', size_bytes: 5242880 },
        service_name: 'imports',
      },
      response: {
        ...ex.importJob,
        status: 'awaiting_upload',
        phase: 'upload',
        plan: undefined,
        discovery: undefined,
        warnings: undefined,
        processed_bytes: 0,
        total_layers: 0,
        version: 1,
        updated_at: ex.created,
        started_at: undefined,
        upload: {
          url: 'https://geoplane-imports.s3.eu-central-2.amazonaws.com/',
          method: 'POST',
          fields: {
            key: `uploads/${ex.ids.workspace}/${ex.ids.import}`,
            Policy: 'eyJjb25kaXRpb25zIjpbXX0=',
            'X-Amz-Signature': '5e1f…',
          },
          file_field: 'file',
          expires_at: '2026-03-02T10:15:00.000Z',
          max_bytes: 5368709120,
        },
      },
    },
    data: ['GetItem', 'Query', 'PutItem', 'ConditionCheckItem', 'UpdateItem'],
    starts: ['import'],
    uploads: ['presign'],
  }),
);

export const listImports = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listImports',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/imports',
    handler: 'functions/imports/list-imports.ts',
    permission: 'read',
    summary: 'List the imports of a workspace in the order they were created',
    description:
      'Filter with `status`. A page may hold fewer than `limit` imports while `next_cursor` says more may follow.',
    tags,
    request: {
      params: WorkspaceParams,
      query: z.strictObject({
        ...pageQuery(100).def.shape,
        status: z.optional(ImportStatusEnum).check(z.meta({ description: 'Only imports in this status.' })),
      }),
    },
    responses: {
      200: { description: 'the imports', schema: ImportList },
      400: { description: 'bad filter, limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      query: { status: 'awaiting_plan' },
      response: { imports: [ex.importJob] },
    },
    data: ['Query'],
  }),
);

export const getImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getImport',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/imports/{import}',
    handler: 'functions/imports/get-import.ts',
    permission: 'read',
    summary: 'Read an import: status, phase, progress, discovery and plan',
    tags,
    request: { params: ImportParams },
    responses: { 200: { description: 'the import', schema: ImportJobBody }, 404: notFound },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      response: ex.importJob,
    },
    data: ['GetItem'],
  }),
);

export const cancelImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'cancelImport',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/imports/{import}',
    handler: 'functions/imports/cancel-import.ts',
    permission: 'manage',
    summary: 'Cancel an import before it is published; its staged data is dropped',
    description:
      'Awaiting its upload: cancelled at once (204). Queued, running, waiting for a plan or to be published, or failed: 202 `cancelling`; the workflow drops the staged tables and the import ends `cancelled`. Publishing, published, rolling back or rolled back: 409 (a published import is rolled back instead). Cancelling again answers as before.',
    tags,
    request: { params: ImportParams },
    responses: {
      202: accepted('the import, cancelling'),
      204: { description: 'cancelled' },
      404: notFound,
      409: conflict('the import is publishing, published or rolled back'),
    },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      response: { ...ex.importJob, status: 'cancelling', version: 6 },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem'],
    starts: ['import'],
    uploads: ['delete'],
  }),
);

export const startImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'startImport',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/imports/{import}/start',
    handler: 'functions/imports/start-import.ts',
    permission: 'write',
    summary: 'Start loading an uploaded file (idempotent)',
    description:
      'From `awaiting_upload` once the file is uploaded; any later status answers with the import as it is.',
    tags,
    request: { params: ImportParams },
    responses: {
      202: accepted('the import, queued (or as it is)'),
      404: notFound,
      409: conflict('nothing was uploaded (or the upload URL expired)'),
    },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      response: {
        ...ex.importJob,
        status: 'queued',
        phase: 'acquire',
        plan: undefined,
        discovery: undefined,
        warnings: undefined,
        processed_bytes: 0,
        total_layers: 0,
        version: 2,
        updated_at: ex.importJob.started_at,
      },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem'],
    starts: ['import'],
    uploads: ['head'],
  }),
);

export const retryImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'retryImport',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/imports/{import}/retry',
    handler: 'functions/imports/retry-import.ts',
    permission: 'write',
    summary: 'Retry a failed import where it failed (load, publish or rollback)',
    description:
      "A load starts over from the file with the import's plan, which is checked again and reserves its rows and bytes of the workspace's import quota (400 `invalid_plan`, 422 when over a limit).",
    tags,
    request: { params: ImportParams },
    responses: {
      202: accepted('the import, queued again'),
      400: { description: 'the stored plan is no longer valid (invalid_plan): PUT a new one' },
      404: notFound,
      409: conflict('the import is not failed'),
      422: overLimit,
    },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      // A load that failed (the plan named a CRS the database doesn't know), retried with the right plan.
      response: { ...ex.importJob, status: 'queued', plan: ex.importPlan, retry_count: 1, version: 11 },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem'],
    starts: ['import'],
  }),
);

export const setImportPlan = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'setImportPlan',
    method: 'PUT',
    path: '/api/v1/workspaces/{workspace}/imports/{import}/plan',
    handler: 'functions/imports/set-import-plan.ts',
    permission: 'write',
    summary: 'Set how the layers are loaded and published (names, fields, CRS, make-valid)',
    description:
      "From `awaiting_plan` or `ready_to_publish` the data is loaded again with the plan (the import is queued) and reserves its rows and bytes of the workspace's import quota; from `failed` the plan is stored for the retry. Every layer and field must exist in the file, a source layer is loaded once, and every table and column name must be one PostgreSQL takes as it is: no two public ids giving one table name (after lower-casing, `[^a-z0-9_]` → `_` and the 63-byte cut) or an index name of another's table, no column named `fid`, like the geometry column or like a system column (`xmin`, `xmax`, `cmin`, `cmax`, `ctid`, `tableoid`, `oid`). 400 `invalid_plan` names the first layer or field that fails; 422 says which limit a plan is over. A layer may leave `fields` out: its fields are taken as discovered (ADR 0126). `service_name` renames the service the publish creates. A public id or service name the workspace already uses is a 409 (`public_id_taken`, `service_name_taken`) whose `clashes` propose free names. After a failed publish (which leaves no service behind) the plan can be changed and the import retried. A layer with `target` (and no public_id) replaces or appends to that existing layer's data on publish (ADR 0127): the layer keeps its id, public id, styles, groups, policies and URLs; without `fields` every field whose column name the layer has is mapped to it with the layer's type, with `fields` each included field must name a column of the layer with its type — else 422 `import_target_invalid` naming the column and its type. `encoding` (Shapefiles) names the code page of the .dbf's text (ADR 0125).",
    tags,
    request: { params: ImportParams, body: ImportPlanInputBody },
    responses: {
      200: { description: 'the import with its plan', schema: ImportJobBody },
      400: { description: 'the plan does not fit the file, or a name in it is not a usable PostgreSQL name' },
      404: notFound,
      409: conflict(
        'the import is not awaiting a plan, ready to publish or failed; or a public id or the service name is taken in the workspace (`clashes` proposes free names)',
      ),
      422: {
        ...overLimit,
        description: `${overLimit.description}; or a target layer that can't take the file's layer (\`import_target_invalid\`)`,
      },
    },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      request: ex.importPlan,
      response: { ...ex.importJob, status: 'queued', plan: ex.importPlan, version: 6 },
    },
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
    starts: ['import'],
  }),
);

export const previewImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'previewImport',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/imports/{import}/preview',
    handler: 'functions/imports/preview-import.ts',
    permission: 'write',
    summary: 'Preview staged features of a layer as GeoJSON (EPSG:4326)',
    tags,
    request: {
      params: ImportParams,
      query: z.strictObject({
        layer: z
          .optional(z.string().check(z.minLength(1), z.maxLength(64)))
          .check(z.meta({ description: 'The staged layer to preview (default: the first).' })),
        limit: z.optional(z.coerce.number().check(z.multipleOf(1), z.minimum(1), z.maximum(1000))),
      }),
    },
    responses: {
      200: { description: 'up to `limit` (default 100) features', schema: FeatureCollectionBody },
      404: notFound,
      409: conflict('nothing is staged yet (or any more)'),
    },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      query: { layer: 'parcels', limit: '1' },
      response: {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            id: 1,
            geometry: {
              type: 'MultiPolygon',
              coordinates: [
                [
                  [
                    [7.438632, 46.951083],
                    [7.438764, 46.951083],
                    [7.438764, 46.951173],
                    [7.438632, 46.951173],
                    [7.438632, 46.951083],
                  ],
                ],
              ],
            },
            properties: { parcel_no: 'BE-1024', area_m2: 812.5 },
          },
        ],
      },
    },
    data: ['GetItem'],
    importDatabase: true,
    postgres: true,
  }),
);

export const publishImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'publishImport',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/imports/{import}/publish',
    handler: 'functions/imports/publish-import.ts',
    permission: 'write',
    summary: 'Publish the staged layers as a new PostGIS service',
    tags,
    request: { params: ImportParams },
    responses: {
      202: accepted('the import, publishing'),
      404: notFound,
      409: conflict('the import is not ready to publish'),
    },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      response: { ...loaded, status: 'publishing', phase: 'publish', version: 10 },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem'],
    starts: ['import'],
  }),
);

export const getImportHistory = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getImportHistory',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/imports/{import}/history',
    handler: 'functions/imports/get-import-history.ts',
    permission: 'read',
    summary: 'List the transition history of an import, oldest first (spec 4.14)',
    description:
      'One immutable event per status, phase or error change, each a snapshot of the progress at that moment.',
    tags,
    request: { params: ImportParams, query: pageQuery(100) },
    responses: {
      200: { description: 'the events', schema: ImportHistoryBody },
      400: { description: 'bad limit or cursor' },
      404: notFound,
    },
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      response: {
        events: [
          historyEvent(1, 'awaiting_upload', 'upload', ex.created),
          historyEvent(2, 'queued', 'acquire', '2026-03-02T09:16:40.000Z'),
          historyEvent(3, 'running', 'acquire', '2026-03-02T09:16:41.000Z'),
          historyEvent(4, 'running', 'discover', '2026-03-02T09:16:41.000Z'),
          {
            ...historyEvent(5, 'awaiting_plan', 'transform', '2026-03-02T09:16:52.000Z'),
            processed_bytes: 5242880,
            warnings: ex.importJob.warnings,
          },
        ],
      },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const rollbackImport = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'rollbackImport',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/imports/{import}/rollback',
    handler: 'functions/imports/rollback-import.ts',
    permission: 'manage',
    summary: 'Take a published import away again: its service, layers and tables (spec 4.15)',
    description:
      "Only from `published` (409 otherwise). The service goes through the recursive deletion workflow (`rollback_operation_id`: its layers, the layer groups containing them, references), then the import's schema is dropped; the import ends `rolled_back` (or `failed`, and retryImport resumes the rollback). An import that replaced or appended to a layer (ADR 0127) gives that layer its previous data back, or removes exactly the rows it appended; such imports roll back newest first (409 `import_rollback_order` names the later one), and a replace only while its previous data is kept (`rollback_until`; 409 `import_generation_expired` after). A rollback already running answers with the import.",
    tags,
    request: { params: ImportParams },
    responses: {
      202: accepted('the import, rolling back'),
      404: notFound,
      409: conflict(
        'the import is not published; a later import changed a layer this one replaced or appended to (`import_rollback_order`); the previous data is no longer kept (`import_generation_expired`)',
      ),
    },
    // It records the service's recursive deletion (as deleteService?recurse=true does) and starts the
    // import workflow, which runs that deletion as its nested execution (ADR 0083).
    examples: {
      params: { workspace: 'roads-demo', import: ex.ids.import },
      response: {
        ...loaded,
        status: 'rolling_back',
        phase: 'rollback',
        service_id: ex.ids.importService,
        completed_at: ex.updated,
        rollback_operation_id: ex.ids.deletion,
        version: 13,
      },
    },
    data: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
    starts: ['import'],
  }),
);
