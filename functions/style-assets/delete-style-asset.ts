import { deleteStyleAsset as operation } from '../../shared/api/operations/style-assets.ts';
import { deleteStyleAsset } from '../../shared/domain/style-assets.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { styleAssetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteStyleAsset(
    { assets: styleAssetRepository() },
    { workspaceId: workspace.id, asset: params.asset, ifMatch },
  );
  return noContent();
});
