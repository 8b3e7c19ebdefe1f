import { locationOf } from '../../shared/api/operation.ts';
import {
  deleteGlobalClaimMapping,
  createGlobalClaimMapping as operation,
} from '../../shared/api/operations/claim-mappings.ts';
import { createClaimMapping, GLOBAL_SCOPE, presentClaimMapping } from '../../shared/domain/claim-mappings.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository, roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ body }) => {
  const mapping = await createClaimMapping(claimMappingRepository(), roleRepository(), GLOBAL_SCOPE, body);
  return created(
    presentClaimMapping(mapping),
    locationOf(deleteGlobalClaimMapping, { mappingId: mapping.id }),
  );
});
