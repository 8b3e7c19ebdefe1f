import { locationOf } from '../../shared/api/operation.ts';
import { getAPIKey, createAPIKey as operation } from '../../shared/api/operations/api-keys.ts';
import { createApiKey, publicApiKey } from '../../shared/domain/api-keys.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { apiKeyRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body }) => {
  const { key, secret } = await createApiKey(apiKeyRepository(), workspace.id, body, new Date());
  return created(
    { ...publicApiKey(key), key: secret },
    locationOf(getAPIKey, { workspace: workspace.id, keyId: key.id }),
  );
});
