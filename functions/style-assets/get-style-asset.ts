import { getStyleAsset as operation } from '#api/operations/style-assets.ts';
import { assetTag, readStyleAsset } from '#domain/style-assets.ts';
import { makeHandler } from '#entry/handler.ts';
import { type HandlerResult, notModified, ok } from '#http/responses.ts';
import { styleAssetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(
  operation,
  async ({ workspace, params, headers }): Promise<HandlerResult> => {
    const read = await readStyleAsset(
      { assets: styleAssetRepository() },
      { workspaceId: workspace.id, asset: params.asset, ifNoneMatch: headers['if-none-match'] },
    );
    if ('notModified' in read) return notModified(read.notModified);
    return ok(read.bytes, { 'Content-Type': read.asset.content_type, ETag: assetTag(read.asset) });
  },
);
