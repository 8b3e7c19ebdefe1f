import { listAPIKeys as operation } from '../../shared/api/operations/api-keys.ts';
import { publicApiKey } from '../../shared/domain/api-keys.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { apiKeyRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await apiKeyRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ api_keys: page.items.map(publicApiKey), next_cursor: page.nextCursor });
});
