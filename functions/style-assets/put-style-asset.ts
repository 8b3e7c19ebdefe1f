import { locationOf } from '../../shared/api/operation.ts';
import { getStyleAsset, putStyleAsset as operation } from '../../shared/api/operations/style-assets.ts';
import { assetTag, putStyleAsset } from '../../shared/domain/style-assets.ts';
import { created, ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { styleAssetRepository } from '../../shared/wiring/repositories.ts';

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
