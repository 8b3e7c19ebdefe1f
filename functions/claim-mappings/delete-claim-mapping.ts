import { deleteClaimMapping as operation } from '../../shared/api/operations/claim-mappings.ts';
import { deleteClaimMapping } from '../../shared/domain/claim-mappings.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteClaimMapping(claimMappingRepository(), workspace.id, params.mappingId, ifMatch);
  return noContent();
});
