import { deleteStyleAsset as operation } from '#api/operations/style-assets.ts';
import { deleteStyleAsset } from '#domain/style-assets.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { styleAssetRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteStyleAsset(
    { assets: styleAssetRepository() },
    { workspaceId: workspace.id, asset: params.asset, ifMatch },
  );
  return noContent();
});
