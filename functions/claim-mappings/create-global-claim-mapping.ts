import { locationOf } from '#api/operation.ts';
import {
  deleteGlobalClaimMapping,
  createGlobalClaimMapping as operation,
} from '#api/operations/claim-mappings.ts';
import { createClaimMapping, GLOBAL_SCOPE, presentClaimMapping } from '#domain/claim-mappings.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { claimMappingRepository, roleRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ body }) => {
  const mapping = await createClaimMapping(
    { mappings: claimMappingRepository(), roles: roleRepository() },
    { scope: GLOBAL_SCOPE, body },
  );
  return created(
    presentClaimMapping(mapping),
    locationOf(deleteGlobalClaimMapping, { mappingId: mapping.id }),
  );
});
