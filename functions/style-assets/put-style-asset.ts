import { locationOf } from '#api/operation.ts';
import { getStyleAsset, putStyleAsset as operation } from '#api/operations/style-assets.ts';
import { assetTag, putStyleAsset } from '#domain/style-assets.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { created, ok } from '#http/responses.ts';
import { styleAssetRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, rawBody, ifMatch }) => {
  const { asset, created: isNew } = await putStyleAsset(
    { assets: styleAssetRepository() },
    { workspaceId: workspace.id, asset: params.asset, bytes: rawBody ?? Buffer.alloc(0), ifMatch },
  );
  // An asset's ETag is its bytes' digest, as GET answers it (not its version).
  const etag = { ETag: assetTag(asset) };
  if (!isNew) return ok(asset, etag);
  return created(asset, locationOf(getStyleAsset, { workspace: workspace.id, asset: asset.name }), etag);
});
