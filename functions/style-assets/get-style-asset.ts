import { getStyleAsset as operation } from '../../shared/api/operations/style-assets.ts';
import { assetTag, readStyleAsset } from '../../shared/domain/style-assets.ts';
import { type HandlerResult, notModified, ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { styleAssetRepository } from '../../shared/wiring/repositories.ts';

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
