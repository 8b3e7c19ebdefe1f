import { deleteClaimMapping as operation } from '#api/operations/claim-mappings.ts';
import { deleteClaimMapping } from '#domain/claim-mappings.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, ifMatch }) => {
  await deleteClaimMapping(
    { mappings: claimMappingRepository() },
    { scope: workspace.id, mappingId: params.mappingId, ifMatch },
  );
  return noContent();
});
