import { locationOf } from '#api/operation.ts';
import { getAPIKey, createAPIKey as operation } from '#api/operations/api-keys.ts';
import { createApiKey, publicApiKey } from '#domain/api-keys.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, body }) => {
  const { key, secret } = await createApiKey(
    { keys: apiKeyRepository() },
    { workspaceId: workspace.id, body, now: new Date() },
  );
  return created(
    { ...publicApiKey(key), key: secret },
    locationOf(getAPIKey, { workspace: workspace.id, keyId: key.id }),
  );
});
