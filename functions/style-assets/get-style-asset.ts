import { getStyleAsset as operation } from '../../shared/api/operations/style-assets.ts';
import { assetTag, requireStyleAsset } from '../../shared/domain/style-assets.ts';
import { type HandlerResult, notModified, ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { styleAssetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(
  operation,
  async ({ workspace, params, headers }): Promise<HandlerResult> => {
    const assets = styleAssetRepository();
    const meta = await requireStyleAsset(assets, workspace.id, params.asset);
    const ifNoneMatch = headers['if-none-match']?.split(',').map((t) => t.trim().replace(/^W\//, ''));
    if (ifNoneMatch?.includes(`"${meta.sha256}"`) || ifNoneMatch?.includes('*')) {
      return notModified(`"${meta.sha256}"`);
    }
    const { asset, bytes } = await assets.read(meta);
    return ok(bytes, { 'Content-Type': asset.content_type, ETag: assetTag(asset) });
  },
);
