import { deleteClaimMapping as operation } from '#api/operations/claim-mappings.ts';
import { deleteClaimMapping } from '#domain/claim-mappings.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteClaimMapping(claimMappingRepository(), workspace.id, params.mappingId, ifMatch);
  return noContent();
});
