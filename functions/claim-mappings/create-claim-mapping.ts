import { locationOf } from '../../shared/api/operation.ts';
import {
  deleteClaimMapping,
  createClaimMapping as operation,
} from '../../shared/api/operations/claim-mappings.ts';
import { createClaimMapping, presentClaimMapping } from '../../shared/domain/claim-mappings.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository, roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body }) => {
  const mapping = await createClaimMapping(claimMappingRepository(), roleRepository(), workspace.id, body);
  return created(
    presentClaimMapping(mapping),
    locationOf(deleteClaimMapping, { workspace: workspace.id, mappingId: mapping.id }),
  );
});
