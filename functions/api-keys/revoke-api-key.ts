import { revokeAPIKey as operation } from '../../shared/api/operations/api-keys.ts';
import { revokeApiKey } from '../../shared/domain/api-keys.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { apiKeyRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await revokeApiKey(
    { keys: apiKeyRepository() },
    { workspaceId: workspace.id, keyId: params.keyId, ifMatch },
  );
  return noContent();
});
