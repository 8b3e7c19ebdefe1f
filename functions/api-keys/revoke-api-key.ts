import { revokeAPIKey as operation } from '#api/operations/api-keys.ts';
import { revokeApiKey } from '#domain/api-keys.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await revokeApiKey(
    { keys: apiKeyRepository() },
    { workspaceId: workspace.id, keyId: params.keyId, ifMatch },
  );
  return noContent();
});
