import { deleteGlobalClaimMapping as operation } from '#api/operations/claim-mappings.ts';
import { deleteClaimMapping, GLOBAL_SCOPE } from '#domain/claim-mappings.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteClaimMapping(claimMappingRepository(), GLOBAL_SCOPE, params.mappingId, ifMatch);
  return noContent();
});
