import { getAPIKey as operation } from '#api/operations/api-keys.ts';
import { getApiKey, publicApiKey } from '#domain/api-keys.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) => {
  const key = await getApiKey(
    { keys: apiKeyRepository() },
    { workspaceId: workspace.id, keyId: params.keyId },
  );
  return ok(publicApiKey(key));
});
