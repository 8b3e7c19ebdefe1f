import { revokeAPIKey as operation } from '#api/operations/api-keys.ts';
import { revokeApiKey } from '#domain/api-keys.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await revokeApiKey(
    { keys: apiKeyRepository() },
    { workspaceId: workspace.id, keyId: params.keyId, ifMatch },
  );
  return noContent();
});
