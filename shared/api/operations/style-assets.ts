import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { assetContentTypes, MAX_ASSET_BYTES } from '#domain/style-assets.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, Name, PageQuery } from '../schemas.ts';
import { StyleAssetBody } from '../style-schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const AssetParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName, asset: Name }));
const notFound = { description: 'workspace or style asset not found' };

export const putStyleAsset = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'putStyleAsset',
    method: 'PUT',
    path: '/api/v1/workspaces/{workspace}/style-assets/{asset}',
    handler: 'functions/style-assets/put-style-asset.ts',
    permission: 'write',
    summary:
      'Upload a graphic (raw bytes: PNG, JPEG, GIF or SVG, sniffed from the content), creating or replacing it',
    description:
      'The request body is the raw image (any Content-Type; image/* and application/octet-stream are binary media types). At most 512 KiB. SVG must parse and may contain no scripts, event handlers, external references or DTD.',
    tags: ['style-assets'],
    request: { params: AssetParams },
    responses: {
      200: { description: 'replaced', schema: StyleAssetBody },
      201: { description: 'created', schema: StyleAssetBody, headers: { Location: 'URL of the asset' } },
      400: { description: 'empty body, not PNG/JPEG/GIF/SVG, or an unsafe SVG' },
      404: { description: 'workspace not found' },
      409: { description: 'a concurrent upload of the same asset' },
    },
    examples: {
      params: { workspace: 'roads-demo', asset: 'marker' },
      response: { ...ex.styleAsset, version: 2, updated_at: ex.updated },
    },
    data: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
    rawBody: true,
    requestMediaTypes: [...assetContentTypes, 'application/octet-stream'],
    maxBodyBytes: MAX_ASSET_BYTES,
  }),
);

export const getStyleAsset = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getStyleAsset',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/style-assets/{asset}',
    handler: 'functions/style-assets/get-style-asset.ts',
    permission: 'read',
    summary:
      'Download a graphic: its bytes with the stored Content-Type and ETag "<sha256>" (If-None-Match → 304)',
    tags: ['style-assets'],
    request: { params: AssetParams },
    responses: {
      200: {
        description: 'the bytes (image/png, image/jpeg, image/gif or image/svg+xml)',
        headers: { ETag: 'quoted SHA-256 hex of the bytes' },
        mediaTypes: assetContentTypes,
      },
      304: { description: 'If-None-Match matches the ETag' },
      404: notFound,
    },
    examples: { params: { workspace: 'roads-demo', asset: 'marker' } },
    data: ['GetItem', 'BatchGetItem'],
  }),
);

export const listStyleAssets = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listStyleAssets',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/style-assets',
    handler: 'functions/style-assets/list-style-assets.ts',
    permission: 'read',
    summary: 'List style assets (metadata), by name',
    tags: ['style-assets'],
    request: { params: WorkspaceParams, query: PageQuery },
    responses: {
      200: {
        description: 'a page of assets',
        schema: z
          .strictObject({ assets: z.array(StyleAssetBody), next_cursor: z.optional(z.string()) })
          .check(z.meta({ id: 'StyleAssetList' })),
      },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: { assets: [ex.styleAsset] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const deleteStyleAsset = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteStyleAsset',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/style-assets/{asset}',
    handler: 'functions/style-assets/delete-style-asset.ts',
    permission: 'write',
    summary: 'Delete a style asset (409 naming a style that references it)',
    tags: ['style-assets'],
    request: { params: AssetParams },
    responses: {
      204: { description: 'deleted' },
      404: { description: 'style asset not found' },
      409: { description: 'asset is referenced (the body names one referencing style)' },
    },
    examples: { params: { workspace: 'roads-demo', asset: 'marker' } },
    data: ['GetItem', 'DeleteItem', 'Query'],
  }),
);
