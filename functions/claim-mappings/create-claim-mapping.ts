import { locationOf } from '#api/operation.ts';
import { deleteClaimMapping, createClaimMapping as operation } from '#api/operations/claim-mappings.ts';
import { createClaimMapping, presentClaimMapping } from '#domain/claim-mappings.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { claimMappingRepository, roleRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, body }) => {
  const mapping = await createClaimMapping(
    { mappings: claimMappingRepository(), roles: roleRepository() },
    { scope: workspace.id, body },
  );
  return created(
    presentClaimMapping(mapping),
    locationOf(deleteClaimMapping, { workspace: workspace.id, mappingId: mapping.id }),
  );
});
