import { listAPIKeys as operation } from '#api/operations/api-keys.ts';
import { publicApiKey } from '#domain/api-keys.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await apiKeyRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ api_keys: page.items.map(publicApiKey), next_cursor: page.nextCursor });
});
