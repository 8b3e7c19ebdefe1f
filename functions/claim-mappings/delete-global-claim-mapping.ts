import { deleteGlobalClaimMapping as operation } from '#api/operations/claim-mappings.ts';
import { deleteClaimMapping, GLOBAL_SCOPE } from '#domain/claim-mappings.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteClaimMapping(
    { mappings: claimMappingRepository() },
    { scope: GLOBAL_SCOPE, mappingId: params.mappingId, ifMatch },
  );
  return noContent();
});
