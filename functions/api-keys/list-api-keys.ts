import { listAPIKeys as operation } from '#api/operations/api-keys.ts';
import { listApiKeys, publicApiKey } from '#domain/api-keys.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listApiKeys(
    { keys: apiKeyRepository() },
    { workspaceId: workspace.id, limit: query.limit, cursor: query.cursor },
  );
  return ok({ api_keys: page.items.map(publicApiKey), next_cursor: page.nextCursor });
});
