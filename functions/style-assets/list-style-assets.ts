import { listStyleAssets as operation } from '#api/operations/style-assets.ts';
import { listStyleAssets } from '#domain/style-assets.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { styleAssetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listStyleAssets(
    { assets: styleAssetRepository() },
    { workspaceId: workspace.id, limit: query.limit, cursor: query.cursor },
  );
  return ok({ assets: page.items, next_cursor: page.nextCursor });
});
