import { deleteGlobalClaimMapping as operation } from '../../shared/api/operations/claim-mappings.ts';
import { deleteClaimMapping, GLOBAL_SCOPE } from '../../shared/domain/claim-mappings.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteClaimMapping(claimMappingRepository(), GLOBAL_SCOPE, params.mappingId, ifMatch);
  return noContent();
});
