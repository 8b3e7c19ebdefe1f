import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, LayerBody, LayerInputSchema, PageCursor, PageQuery, pageLimit, Uuid } from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const ServiceParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, service: IdOrName }),
);
const LayerParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, service: IdOrName, layer: Uuid }),
);
const notFound = { description: 'workspace, service or layer not found' };

export const createLayer = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createLayer',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/services/{service}/layers',
    handler: 'functions/layers/create-layer.ts',
    permission: 'write',
    summary: 'Publish a readable discovered layer (SQL views are read-only)',
    description:
      'public_id defaults to source_layer, title to public_id, crs_default to 4326, enabled to true. An enabled layer is validated against its source first; `enabled: false` saves an offline draft without touching the source.',
    tags: ['layers'],
    request: { params: ServiceParams, body: LayerInputSchema },
    responses: {
      201: { description: 'created layer', schema: LayerBody, headers: { Location: 'URL of the layer' } },
      400: {
        description: 'bad request (neither source_layer nor sql_view, unknown allowed role, bad public_id)',
      },
      404: { description: 'workspace or service not found' },
      409: { description: 'public_id is already published in this workspace' },
      422: { description: 'source layer is missing or unreadable' },
      503: { description: 'datasource unavailable' },
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'roads-db' },
      request: {
        source_layer: 'public.roads',
        public_id: 'roads',
        title: 'Roads',
        default_style: 'roads-line',
        styles: ['roads-line'],
      },
      response: ex.layer,
    },
    data: ['GetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
    secrets: ['decrypt'],
    postgres: true,
  }),
);

export const listLayers = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listLayers',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/services/{service}/layers',
    handler: 'functions/layers/list-layers.ts',
    permission: 'read',
    summary: "List a service's layers, a page at a time",
    tags: ['layers'],
    request: { params: ServiceParams, query: PageQuery },
    responses: {
      200: {
        description: 'a page of layers',
        schema: z
          .strictObject({ layers: z.array(LayerBody), next_cursor: z.optional(z.string()) })
          .check(z.meta({ id: 'LayerList' })),
      },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace or service not found' },
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'roads-db' },
      response: { layers: [ex.layer] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const listWorkspaceLayers = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listWorkspaceLayers',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/layers',
    handler: 'functions/layers/list-workspace-layers.ts',
    permission: 'read',
    summary: 'List the layers of every service of a workspace, a page at a time, optionally by name',
    description:
      "Each layer carries its service's id and name. `q` keeps the layers whose public_id or title contains it (any case); a filtered page reads at most 1,000 layers, so it may hold fewer than `limit` (even none) and still have a next_cursor: follow it to read on (ADR 0130). Layers of a service being deleted are left out.",
    tags: ['layers'],
    request: {
      params: WorkspaceParams,
      query: z.strictObject({
        limit: pageLimit(100),
        cursor: PageCursor,
        q: z.optional(
          z.string().check(
            z.minLength(1),
            z.maxLength(128),
            z.meta({
              description: 'Keep the layers whose public_id or title contains this text (any case).',
            }),
          ),
        ),
      }),
    },
    responses: {
      200: {
        description: 'a page of layers with their services',
        schema: z
          .strictObject({
            layers: z.array(
              z.strictObject({
                ...LayerBody.shape,
                service_name: z.string().check(z.meta({ description: "The name of the layer's service." })),
              }),
            ),
            next_cursor: z.optional(z.string()),
          })
          .check(z.meta({ id: 'WorkspaceLayerList' })),
      },
      400: { description: 'bad limit, cursor or q' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      query: { q: 'road', limit: '50' },
      response: { layers: [{ ...ex.layer, service_name: 'roads-db' }] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const getLayer = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getLayer',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}',
    handler: 'functions/layers/get-layer.ts',
    permission: 'read',
    summary: 'Read a layer',
    tags: ['layers'],
    request: { params: LayerParams },
    responses: {
      200: { description: 'the layer', schema: LayerBody },
      400: { description: 'layer is not a UUID' },
      404: notFound,
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'roads-db', layer: ex.ids.layer },
      response: ex.layer,
    },
    data: ['GetItem'],
  }),
);

export const updateLayer = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'updateLayer',
    method: 'PUT',
    path: '/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}',
    handler: 'functions/layers/update-layer.ts',
    permission: 'write',
    summary: 'Update a layer; enabling a draft validates its source. Honours If-Match.',
    description: 'Omitted fields keep their values.',
    tags: ['layers'],
    request: { params: LayerParams, body: LayerInputSchema },
    responses: {
      200: { description: 'updated layer', schema: LayerBody },
      400: { description: 'bad request' },
      404: notFound,
      409: { description: 'public_id taken, or the layer is in a group and its public_id would change' },
      412: { description: 'If-Match does not match the current version' },
      422: { description: 'source layer is missing or unreadable' },
      503: { description: 'datasource unavailable' },
    },
    examples: {
      params: { workspace: 'roads-demo', service: 'roads-db', layer: ex.ids.layer },
      request: { title: 'Roads (2026)', public: true },
      response: { ...ex.layer, title: 'Roads (2026)', public: true, version: 2, updated_at: ex.updated },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    secrets: ['decrypt'],
    postgres: true,
  }),
);

export const deleteLayer = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteLayer',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/services/{service}/layers/{layer}',
    handler: 'functions/layers/delete-layer.ts',
    takesCarriedService: true,
    permission: 'write',
    summary: 'Delete a layer (409 while a layer group contains it). Honours If-Match.',
    tags: ['layers'],
    request: { params: LayerParams },
    responses: {
      204: { description: 'deleted' },
      400: { description: 'layer is not a UUID' },
      404: notFound,
      409: { description: 'a layer group contains the layer' },
      412: { description: 'If-Match does not match the current version' },
    },
    examples: { params: { workspace: 'roads-demo', service: 'roads-db', layer: ex.ids.layer } },
    data: ['GetItem', 'DeleteItem', 'UpdateItem'],
  }),
);
