import { createAPIKey as operation } from '../../shared/api/operations/api-keys.ts';
import { createApiKey, publicApiKey } from '../../shared/domain/api-keys.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { created } from '../../shared/http/responses.ts';
import { apiKeyRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, body }) => {
  const { key, secret } = await createApiKey(
    apiKeyRepository(),
    workspace.id,
    body,
    new Date(),
    workspace.usage_key,
  );
  return created(
    { ...publicApiKey(key), key: secret },
    `/api/v1/workspaces/${workspace.id}/apikeys/${key.id}`,
  );
});
