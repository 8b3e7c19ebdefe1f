import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { MAX_DEFINITION_BYTES } from '#domain/tile-matrix-sets.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, PageQuery } from '../schemas.ts';
import {
  TileMatrixSetDefinition,
  TileMatrixSetId,
  TileMatrixSetRecord,
  TileMatrixSetSummary,
} from '../tile-matrix-set-schemas.ts';

const Params = /* @__PURE__ */ shakable(() => z.strictObject({ tileMatrixSet: TileMatrixSetId }));
const notFound = { description: 'tile matrix set not found' };
const mismatch = { description: 'If-Match does not match the current revision' };

export const listTileMatrixSets = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listTileMatrixSets',
    method: 'GET',
    path: '/api/v1/tile-matrix-sets',
    handler: 'functions/tile-matrix-sets/list-tile-matrix-sets.ts',
    permission: 'authenticated',
    summary: 'List tile matrix sets, built-ins first (any authenticated caller; ADR 0051)',
    tags: ['tile-matrix-sets'],
    request: { query: PageQuery },
    responses: {
      200: {
        description: 'built-ins (first page only) followed by a page of custom sets',
        schema: z
          .strictObject({
            tile_matrix_sets: z.array(TileMatrixSetSummary),
            next_cursor: z.optional(z.string()),
          })
          .check(z.meta({ id: 'TileMatrixSetList' })),
      },
      400: { description: 'bad limit or cursor' },
    },
    examples: {
      response: {
        tile_matrix_sets: [
          ex.tileMatrixSets.webMercatorQuad,
          ex.tileMatrixSets.worldCRS84Quad,
          ex.tileMatrixSets.swissLV95,
        ],
      },
    },
    data: ['Query'],
  }),
);

export const getTileMatrixSet = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getTileMatrixSet',
    method: 'GET',
    path: '/api/v1/tile-matrix-sets/{tileMatrixSet}',
    handler: 'functions/tile-matrix-sets/get-tile-matrix-set.ts',
    permission: 'authenticated',
    summary: 'Read a tile matrix set (built-in or custom); ETag is the revision',
    tags: ['tile-matrix-sets'],
    request: { params: Params },
    responses: { 200: { description: 'the set', schema: TileMatrixSetRecord }, 404: notFound },
    examples: {
      params: { tileMatrixSet: 'SwissLV95' },
      response: ex.tileMatrixSet,
    },
    data: ['GetItem'],
  }),
);

export const putTileMatrixSet = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'putTileMatrixSet',
    method: 'PUT',
    path: '/api/v1/tile-matrix-sets/{tileMatrixSet}',
    handler: 'functions/tile-matrix-sets/put-tile-matrix-set.ts',
    permission: 'global',
    summary: 'Create or replace a custom tile matrix set (OGC 2D-TMS 2.0 JSON). Honours If-Match.',
    tags: ['tile-matrix-sets'],
    request: { params: Params, body: TileMatrixSetDefinition },
    responses: {
      200: { description: 'replaced; revision incremented', schema: TileMatrixSetRecord },
      201: {
        description: 'created (revision 1)',
        schema: TileMatrixSetRecord,
        headers: { Location: 'URL of the set' },
      },
      400: {
        description:
          'bad request, the definition id differs from the path, or its canonical JSON exceeds 256 KiB',
      },
      409: { description: 'built-in sets are immutable, or a concurrent change' },
      412: mismatch,
      422: { description: 'unknown CRS, duplicate tile matrix ids, or an empty bounding box' },
    },
    examples: {
      params: { tileMatrixSet: 'SwissLV95' },
      request: ex.tileMatrixSetDefinition,
      response: ex.tileMatrixSet,
    },
    data: ['GetItem', 'PutItem', 'UpdateItem'],
    // The definition is stored in one item: a body over this is 413 (ADR 0073).
    maxBodyBytes: MAX_DEFINITION_BYTES,
  }),
);

export const deleteTileMatrixSet = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteTileMatrixSet',
    method: 'DELETE',
    path: '/api/v1/tile-matrix-sets/{tileMatrixSet}',
    handler: 'functions/tile-matrix-sets/delete-tile-matrix-set.ts',
    permission: 'global',
    summary: 'Delete a custom tile matrix set. Honours If-Match.',
    tags: ['tile-matrix-sets'],
    request: { params: Params },
    responses: {
      204: { description: 'deleted' },
      404: notFound,
      409: { description: "built-in, or named by workspaces' OGC API Tiles settings (the body names them)" },
      412: mismatch,
    },
    examples: { params: { tileMatrixSet: 'SwissLV95' } },
    data: ['GetItem', 'DeleteItem', 'Query', 'BatchGetItem'],
  }),
);

export const listWorkspaceTileMatrixSets = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listWorkspaceTileMatrixSets',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/tile-matrix-sets',
    handler: 'functions/tile-matrix-sets/list-workspace-tile-matrix-sets.ts',
    permission: 'read',
    summary: "List the tile matrix sets the workspace's OGC API Tiles settings enable",
    description:
      "The sets named by the workspace's OGC API Tiles settings (`settings.tile_matrix_sets`), in their order, summarised as listTileMatrixSets does; a workspace that never saved its settings has the defaults (WebMercatorQuad, WorldCRS84Quad). `tiles_enabled` says whether Tiles is switched on (the data plane serves the sets only then). Not paged: the settings name at most 16 sets.",
    tags: ['tile-matrix-sets'],
    request: { params: z.strictObject({ workspace: IdOrName }) },
    responses: {
      200: {
        description: "the enabled sets, in the settings' order",
        schema: z
          .strictObject({ tiles_enabled: z.boolean(), tile_matrix_sets: z.array(TileMatrixSetSummary) })
          .check(z.meta({ id: 'WorkspaceTileMatrixSetList' })),
      },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: {
        tiles_enabled: true,
        tile_matrix_sets: [ex.tileMatrixSets.webMercatorQuad, ex.tileMatrixSets.swissLV95],
      },
    },
    // The settings document and each custom set: a GetItem each.
    data: ['GetItem'],
  }),
);
