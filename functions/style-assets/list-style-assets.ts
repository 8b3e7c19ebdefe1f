import { listStyleAssets as operation } from '../../shared/api/operations/style-assets.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { styleAssetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await styleAssetRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ assets: page.items, next_cursor: page.nextCursor });
});
