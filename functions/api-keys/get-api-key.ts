import { getAPIKey as operation } from '#api/operations/api-keys.ts';
import { publicApiKey, requireApiKey } from '#domain/api-keys.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) => {
  const key = await requireApiKey(apiKeyRepository(), workspace.id, params.keyId);
  return ok(publicApiKey(key));
});
