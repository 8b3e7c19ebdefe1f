import { deleteAPIKey as operation } from '#api/operations/api-keys.ts';
import { deleteApiKey } from '#domain/api-keys.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { apiKeyRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteApiKey(apiKeyRepository(), workspace.id, params.keyId, ifMatch);
  return noContent();
});
