import { getAPIKey as operation } from '../../shared/api/operations/api-keys.ts';
import { publicApiKey, requireApiKey } from '../../shared/domain/api-keys.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { apiKeyRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) => {
  const key = await requireApiKey(apiKeyRepository(), workspace.id, params.keyId);
  return ok(publicApiKey(key));
});
