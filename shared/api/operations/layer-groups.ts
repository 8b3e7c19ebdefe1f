import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { GroupMemberSchema, IdOrName, LayerGroupBody, Name, PageQuery } from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const GroupParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    workspace: IdOrName,
    group: z.string().check(z.minLength(1), z.maxLength(64)),
  }),
);
const GroupInput = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    public_id: Name,
    title: z.optional(z.string().check(z.maxLength(256))),
    members: z.array(GroupMemberSchema).check(z.minLength(1), z.maxLength(40)),
  }),
);
const notFound = { description: 'workspace or layer group not found' };

export const createLayerGroup = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createLayerGroup',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/layer-groups',
    handler: 'functions/layer-groups/create-layer-group.ts',
    permission: 'write',
    summary: 'Create a layer group of existing layers and groups',
    tags: ['layer-groups'],
    request: { params: WorkspaceParams, body: GroupInput },
    responses: {
      201: {
        description: 'created group',
        schema: LayerGroupBody,
        headers: { Location: 'URL of the group' },
      },
      400: { description: 'bad request, or a member does not exist' },
      404: { description: 'workspace not found' },
      409: { description: 'public_id is already published in this workspace' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: {
        public_id: 'basemap',
        title: 'Basemap',
        members: [{ resource: 'roads', style: 'roads-line', opacity: 0.8 }],
      },
      response: ex.layerGroup,
    },
    data: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
  }),
);

export const listLayerGroups = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listLayerGroups',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/layer-groups',
    handler: 'functions/layer-groups/list-layer-groups.ts',
    permission: 'read',
    summary: 'List layer groups',
    tags: ['layer-groups'],
    request: { params: WorkspaceParams, query: PageQuery },
    responses: {
      200: {
        description: 'a page of groups',
        schema: z
          .strictObject({ layer_groups: z.array(LayerGroupBody), next_cursor: z.optional(z.string()) })
          .check(z.meta({ id: 'LayerGroupList' })),
      },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: { layer_groups: [ex.layerGroup] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const getLayerGroup = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getLayerGroup',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/layer-groups/{group}',
    handler: 'functions/layer-groups/get-layer-group.ts',
    permission: 'read',
    summary: 'Read a layer group by id or public_id',
    tags: ['layer-groups'],
    request: { params: GroupParams },
    responses: { 200: { description: 'the group', schema: LayerGroupBody }, 404: notFound },
    examples: {
      params: { workspace: 'roads-demo', group: 'basemap' },
      response: ex.layerGroup,
    },
    data: ['GetItem'],
  }),
);

export const updateLayerGroup = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'updateLayerGroup',
    method: 'PUT',
    path: '/api/v1/workspaces/{workspace}/layer-groups/{group}',
    handler: 'functions/layer-groups/update-layer-group.ts',
    permission: 'write',
    summary: 'Replace a layer group; cycles are refused. Honours If-Match.',
    tags: ['layer-groups'],
    request: { params: GroupParams, body: GroupInput },
    responses: {
      200: { description: 'updated group', schema: LayerGroupBody },
      400: { description: 'bad request, or a member does not exist' },
      404: notFound,
      409: {
        description: 'public_id taken, or the group is a member elsewhere and its public_id would change',
      },
      412: { description: 'If-Match does not match the current version' },
      422: { description: 'the change would create a cycle' },
    },
    examples: {
      params: { workspace: 'roads-demo', group: 'basemap' },
      request: {
        public_id: 'basemap',
        title: 'Basemap (roads on top)',
        members: [{ resource: 'roads', opacity: 1 }],
      },
      response: {
        ...ex.layerGroup,
        title: 'Basemap (roads on top)',
        members: [{ resource: 'roads', opacity: 1 }],
        version: 2,
        updated_at: ex.updated,
      },
    },
    data: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
  }),
);

export const deleteLayerGroup = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteLayerGroup',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/layer-groups/{group}',
    handler: 'functions/layer-groups/delete-layer-group.ts',
    permission: 'write',
    summary: 'Delete a layer group (409 while another group contains it). Honours If-Match.',
    tags: ['layer-groups'],
    request: { params: GroupParams },
    responses: {
      204: { description: 'deleted' },
      404: notFound,
      409: { description: 'another group contains this group' },
      412: { description: 'If-Match does not match the current version' },
    },
    examples: { params: { workspace: 'roads-demo', group: 'basemap' } },
    data: ['GetItem', 'DeleteItem', 'UpdateItem'],
  }),
);
