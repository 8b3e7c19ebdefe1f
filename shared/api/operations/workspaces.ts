import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { IMPORT_STATUSES, type ImportStatus } from '#domain/import-model.ts';
import {
  DeletionConflictBody,
  DeletionOperationBody,
  DeletionPlanBody,
  RecurseFlag,
} from '../deletion-schemas.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { ErrorBody, IdOrName, Name, PageQuery, Workspace } from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const Description = /* @__PURE__ */ shakable(() => z.string().check(z.maxLength(1024)));
const WorkspaceList = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ workspaces: z.array(Workspace), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'WorkspaceList' })),
);

export const createWorkspace = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createWorkspace',
    method: 'POST',
    path: '/api/v1/workspaces',
    handler: 'functions/workspaces/create-workspace.ts',
    permission: 'global',
    summary: 'Create a workspace',
    tags: ['workspaces'],
    request: {
      body: z.strictObject({ name: Name, description: z.optional(z.nullable(Description)) }),
    },
    responses: {
      201: {
        description: 'created workspace',
        schema: Workspace,
        headers: { Location: 'URL of the workspace' },
      },
      400: { description: 'bad request (invalid name, unknown field)' },
      409: { description: 'a workspace with this name already exists' },
    },
    examples: {
      request: { name: 'roads-demo', description: 'Road network of the demo region' },
      response: ex.workspace,
    },
    // The usage-key pool (ADR 0111): the assignment counter, the slot's recorded key, a new slot's record.
    data: ['PutItem', 'ConditionCheckItem', 'UpdateItem', 'GetItem'],
    // A slot's first workspace makes its key (deleted again if it can't join the plan or loses a race).
    usageKeys: ['create', 'delete'],
  }),
);

export const listWorkspaces = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listWorkspaces',
    method: 'GET',
    path: '/api/v1/workspaces',
    handler: 'functions/workspaces/list-workspaces.ts',
    permission: 'global',
    summary: 'List workspaces by name, a page at a time',
    tags: ['workspaces'],
    request: { query: PageQuery },
    responses: {
      200: { description: 'a page of workspaces', schema: WorkspaceList },
      400: { description: 'bad limit or cursor' },
    },
    examples: {
      query: { limit: '1' },
      response: { workspaces: [ex.workspace], next_cursor: 'eyJrIjoicm9hZHMtZGVtbyJ9' },
    },
    data: ['Query'],
  }),
);

export const getWorkspace = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getWorkspace',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}',
    handler: 'functions/workspaces/get-workspace.ts',
    permission: 'read',
    summary: 'Read a workspace by id or name',
    tags: ['workspaces'],
    request: { params: WorkspaceParams },
    responses: {
      200: { description: 'the workspace', schema: Workspace },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: ex.workspace,
    },
    data: ['GetItem'],
  }),
);

export const updateWorkspace = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'updateWorkspace',
    method: 'PUT',
    path: '/api/v1/workspaces/{workspace}',
    handler: 'functions/workspaces/update-workspace.ts',
    permission: 'manage',
    summary: 'Update a workspace',
    description:
      'Requires admin access to the workspace. `description` omitted or null leaves it unchanged; "" clears it. Honours If-Match.',
    tags: ['workspaces'],
    request: {
      params: WorkspaceParams,
      body: z.strictObject({ name: z.optional(Name), description: z.optional(z.nullable(Description)) }),
    },
    responses: {
      200: { description: 'updated workspace', schema: Workspace },
      400: { description: 'bad request' },
      404: { description: 'workspace not found' },
      409: { description: 'a workspace with this name already exists' },
      412: { description: 'If-Match does not match the current version' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: { description: 'Roads and paths of the demo region' },
      response: {
        ...ex.workspace,
        description: 'Roads and paths of the demo region',
        version: 2,
        updated_at: ex.updated,
      },
    },
    data: ['GetItem', 'UpdateItem', 'PutItem', 'DeleteItem'],
  }),
);

/**
 * The example plan of a workspace (deleteWorkspace's 202 carries the same): it counts its other
 * items and lists every layer with its service.
 */
const workspacePlanExample = {
  ...ex.deletionPlan,
  target: { scope: 'workspace', id: ex.ids.workspace, name: 'roads-demo' },
  layers: {
    ...ex.deletionPlan.layers,
    items: [{ id: ex.ids.layer, public_id: 'roads', service_id: ex.ids.service }],
  },
  style_references: [],
  workspace_items: {
    api_keys: 1,
    claim_mappings: 1,
    services: 1,
    settings: 3,
    style_assets: 1,
    styles: 1,
  },
  total: 11,
};

export const deleteWorkspace = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteWorkspace',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}',
    handler: 'functions/workspaces/delete-workspace.ts',
    permission: 'global',
    summary: 'Delete a workspace; with recurse=true everything in it (asynchronously)',
    description:
      'Without `recurse` only a workspace without catalog items is deleted (its API keys, claim mappings and settings go with it; 204). With `recurse=true` the workspace is hidden at once and a durable workflow removes everything in it, API keys and claim mappings included (202 with the DeletionOperation). A workspace already being deleted answers with its operation. Honours If-Match.',
    tags: ['workspaces'],
    request: { params: WorkspaceParams, query: z.strictObject({ recurse: RecurseFlag }) },
    responses: {
      202: {
        description: 'the deletion operation',
        schema: DeletionOperationBody,
        headers: { Location: 'URL of the operation (GET /api/v1/deletions/{id})' },
      },
      204: { description: 'deleted' },
      400: { description: 'recurse is not one of true, false, 1, 0' },
      404: { description: 'workspace not found' },
      409: {
        description:
          'the workspace is not empty (without recurse: `workspace_not_empty` with `recurse_required` and the plan of what it holds, whose counts the detail repeats), or one of its services is being deleted',
        schema: z.union([DeletionConflictBody, ErrorBody]),
      },
      412: { description: 'If-Match does not match the current version' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      query: { recurse: 'true' },
      response: {
        ...ex.deletion,
        scope: 'workspace',
        target_id: ex.ids.workspace,
        target_name: 'roads-demo',
        phase: 'layers',
        plan: workspacePlanExample,
        progress: { total: 11, deleted: 0 },
      },
    },
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
    starts: ['deletion'],
    resolvesDeletingWorkspace: true,
  }),
);

export const getWorkspaceDeletionPlan = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getWorkspaceDeletionPlan',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/deletion-plan',
    handler: 'functions/workspaces/get-workspace-deletion-plan.ts',
    permission: 'manage',
    summary: 'What deleting this workspace with recurse=true would remove (nothing is changed)',
    description:
      "The plan deleteWorkspace reports in its 409 (`workspace_not_empty`) and stores with a recursive deletion, read by the same code: every layer with its service, the layer groups, the counts of the workspace's other items (services, styles, style assets, settings, API keys, claim mappings, imports…) and the custom roles its layers and mappings reference. `manage`: it counts the workspace's API keys and claim mappings, which only its admins see. Reads the workspace's partition once (a Query per page).",
    tags: ['workspaces'],
    request: { params: WorkspaceParams },
    responses: {
      200: { description: 'the plan', schema: DeletionPlanBody },
      404: { description: 'workspace not found (or being deleted)' },
    },
    examples: { params: { workspace: 'roads-demo' }, response: workspacePlanExample },
    data: ['Query'],
  }),
);

const count = /* @__PURE__ */ shakable(() => z.number().check(z.int(), z.nonnegative()));
const importStatusCounts = /* @__PURE__ */ shakable(() =>
  z
    .strictObject(
      Object.fromEntries(IMPORT_STATUSES.map((s) => [s, count])) as Record<ImportStatus, typeof count>,
    )
    .check(z.meta({ id: 'ImportStatusCounts' })),
);

const WorkspaceSummaryBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      workspace_id: z.string(),
      services: count,
      layers: z.strictObject({ total: count, enabled: count, disabled: count }),
      styles: count,
      imports: z.strictObject({ total: count, by_status: importStatusCounts }),
      api_keys: z.strictObject({ total: count, active: count, revoked: count }),
      claim_mappings: count,
    })
    .check(z.meta({ id: 'WorkspaceSummary' })),
);

export const getWorkspaceSummary = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getWorkspaceSummary',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/summary',
    handler: 'functions/workspaces/get-workspace-summary.ts',
    permission: 'manage',
    summary:
      'How many services, layers (enabled, disabled), styles, imports by status, API keys and claim mappings a workspace has',
    description:
      "Read from counters that every write of those entities keeps in its own transaction (ADR 0137): one Query of a handful of items, whatever the workspace's size — exact at the moment of the read. A workspace older than the counters is counted once, on its first summary. `layers.enabled` counts published layers, `disabled` drafts; `api_keys.active` counts keys not revoked (expired ones included until their record's retention ends), `revoked` the revoked ones. `manage`: it counts the workspace's API keys and claim mappings, which only its admins see.",
    tags: ['workspaces'],
    request: { params: WorkspaceParams },
    responses: {
      200: { description: 'the counts', schema: WorkspaceSummaryBody },
      404: { description: 'workspace not found (or being deleted)' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: {
        workspace_id: '6a1d3b2e-9c1f-4a57-8e0b-2f4c8d1e7a90',
        services: 1,
        layers: { total: 1, enabled: 1, disabled: 0 },
        styles: 1,
        imports: {
          total: 1,
          by_status: {
            awaiting_upload: 0,
            queued: 0,
            running: 0,
            awaiting_plan: 0,
            ready_to_publish: 0,
            publishing: 0,
            published: 1,
            cancelling: 0,
            cancelled: 0,
            failed: 0,
            rolling_back: 0,
            rolled_back: 0,
          },
        },
        api_keys: { total: 1, active: 1, revoked: 0 },
        claim_mappings: 2,
      },
    },
    // The first summary of a workspace older than the counters writes their base (a Put under
    // ConditionChecks that no counted write raced it; ADR 0137).
    data: ['Query', 'PutItem', 'ConditionCheckItem'],
  }),
);
