import { revokeAPIKey as operation } from '../../shared/api/operations/api-keys.ts';
import { requireApiKey, revokeApiKey } from '../../shared/domain/api-keys.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { noContent } from '../../shared/http/responses.ts';
import { apiKeyRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) => {
  const repo = apiKeyRepository();
  await revokeApiKey(repo, await requireApiKey(repo, workspace.id, params.keyId));
  return noContent();
});
