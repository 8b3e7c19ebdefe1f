import { listStyleAssets as operation } from '#api/operations/style-assets.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { styleAssetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await styleAssetRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ assets: page.items, next_cursor: page.nextCursor });
});
