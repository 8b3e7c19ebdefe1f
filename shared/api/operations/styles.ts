import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, PageQuery } from '../schemas.ts';
import { MAX_STYLE_BODY_BYTES, StyleBody, StyleInput, StyleSummary } from '../style-schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const StyleParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    workspace: IdOrName,
    style: z.string().check(z.minLength(1), z.maxLength(64)),
  }),
);
const notFound = { description: 'workspace or style not found' };
const badStyle = {
  description:
    'bad request: invalid body for its format (malformed XML, wrong root or version, MapLibre validation errors), or an asset reference to an asset that does not exist',
};

export const createStyle = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createStyle',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/styles',
    handler: 'functions/styles/create-style.ts',
    permission: 'write',
    summary: 'Create a style (SLD 1.0/1.1, SE 1.1 or Mapbox/MapLibre); its asset references are recorded',
    tags: ['styles'],
    request: { params: WorkspaceParams, body: StyleInput },
    responses: {
      201: { description: 'created style', schema: StyleBody, headers: { Location: 'URL of the style' } },
      400: badStyle,
      404: { description: 'workspace not found' },
      409: { description: 'a style with this name already exists' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: { name: 'roads-line', format: 'mapbox', title: 'Roads as lines', body: ex.mapboxStyleBody },
      response: { ...ex.styleSummary, body: ex.mapboxStyleBody },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
    maxBodyBytes: MAX_STYLE_BODY_BYTES,
  }),
);

export const listStyles = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listStyles',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/styles',
    handler: 'functions/styles/list-styles.ts',
    permission: 'read',
    summary: 'List styles (without bodies), by name',
    tags: ['styles'],
    request: { params: WorkspaceParams, query: PageQuery },
    responses: {
      200: {
        description: 'a page of styles',
        schema: z
          .strictObject({ styles: z.array(StyleSummary), next_cursor: z.optional(z.string()) })
          .check(z.meta({ id: 'StyleList' })),
      },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: { styles: [ex.styleSummary] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const getStyle = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getStyle',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/styles/{style}',
    handler: 'functions/styles/get-style.ts',
    permission: 'read',
    summary: 'Read a style with its body',
    tags: ['styles'],
    request: { params: StyleParams },
    responses: { 200: { description: 'the style', schema: StyleBody }, 404: notFound },
    examples: {
      params: { workspace: 'roads-demo', style: 'roads-line' },
      response: { ...ex.styleSummary, body: ex.mapboxStyleBody },
    },
    data: ['GetItem'],
  }),
);

export const updateStyle = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'updateStyle',
    method: 'PUT',
    path: '/api/v1/workspaces/{workspace}/styles/{style}',
    handler: 'functions/styles/update-style.ts',
    permission: 'write',
    summary: 'Replace a style (a different name renames it). Honours If-Match.',
    tags: ['styles'],
    request: { params: StyleParams, body: StyleInput },
    responses: {
      200: { description: 'updated style', schema: StyleBody },
      400: badStyle,
      404: notFound,
      409: { description: 'the new name is taken, layers use the style (rename), or a concurrent change' },
      412: { description: 'If-Match does not match the current version' },
    },
    examples: {
      params: { workspace: 'roads-demo', style: 'roads-line' },
      request: {
        name: 'roads-line',
        format: 'mapbox',
        title: 'Roads as red lines',
        body: ex.mapboxStyleBody,
      },
      response: {
        ...ex.styleSummary,
        title: 'Roads as red lines',
        body: ex.mapboxStyleBody,
        version: 2,
        updated_at: ex.updated,
      },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    maxBodyBytes: MAX_STYLE_BODY_BYTES,
  }),
);

export const deleteStyle = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteStyle',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/styles/{style}',
    handler: 'functions/styles/delete-style.ts',
    permission: 'write',
    summary: 'Delete a style (409 while layers use it); its asset references go with it. Honours If-Match.',
    tags: ['styles'],
    request: { params: StyleParams },
    responses: {
      204: { description: 'deleted' },
      404: notFound,
      409: { description: 'layers use the style, or a concurrent change' },
      412: { description: 'If-Match does not match the current version' },
    },
    examples: { params: { workspace: 'roads-demo', style: 'roads-line' } },
    data: ['GetItem', 'DeleteItem', 'UpdateItem'],
  }),
);
