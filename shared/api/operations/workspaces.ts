import * as z from 'zod/mini';
import { defineOperation } from '../operation.ts';
import { IdOrName, Name, PageQuery, Workspace } from '../schemas.ts';

const WorkspaceParams = z.strictObject({ workspace: IdOrName });
const Description = z.string().check(z.maxLength(1024));
const WorkspaceList = z
  .strictObject({ workspaces: z.array(Workspace), next_cursor: z.optional(z.string()) })
  .check(z.meta({ id: 'WorkspaceList' }));

export const createWorkspace = defineOperation({
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
  data: ['PutItem', 'ConditionCheckItem'],
  // Each workspace gets its own usage key (deleted again if the name is taken).
  usageKeys: ['create', 'delete'],
});

export const listWorkspaces = defineOperation({
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
  data: ['Query'],
});

export const getWorkspace = defineOperation({
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
  data: ['GetItem'],
});

export const updateWorkspace = defineOperation({
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
  data: ['GetItem', 'PutItem', 'DeleteItem'],
});

export const deleteWorkspace = defineOperation({
  operationId: 'deleteWorkspace',
  method: 'DELETE',
  path: '/api/v1/workspaces/{workspace}',
  handler: 'functions/workspaces/delete-workspace.ts',
  permission: 'global',
  summary: 'Delete an empty workspace',
  description: 'Deletes a workspace that holds no catalog items (its API keys go with it). Honours If-Match.',
  tags: ['workspaces'],
  request: { params: WorkspaceParams },
  responses: {
    204: { description: 'deleted' },
    404: { description: 'workspace not found' },
    409: { description: 'the workspace is not empty' },
    412: { description: 'If-Match does not match the current version' },
  },
  data: ['GetItem', 'Query', 'UpdateItem', 'DeleteItem'],
  usageKeys: ['delete'],
});
