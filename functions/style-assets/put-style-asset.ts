import { locationOf } from '#api/operation.ts';
import { getStyleAsset, putStyleAsset as operation } from '#api/operations/style-assets.ts';
import { assetTag, putStyleAsset } from '#domain/style-assets.ts';
import { created, ok } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { styleAssetRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, rawBody, ifMatch }) => {
  const { asset, created: isNew } = await putStyleAsset(
    styleAssetRepository(),
    workspace.id,
    params.asset,
    rawBody ?? Buffer.alloc(0),
    new Date(),
    ifMatch,
  );
  // An asset's ETag is its bytes' digest, as GET answers it (not its version).
  const etag = { ETag: assetTag(asset) };
  if (!isNew) return ok(asset, etag);
  return created(asset, locationOf(getStyleAsset, { workspace: workspace.id, asset: asset.name }), etag);
});
