import { getClaimMapping as operation } from '#api/operations/claim-mappings.ts';
import { getClaimMapping, presentClaimMapping } from '#domain/claim-mappings.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(
    presentClaimMapping(
      await getClaimMapping(
        { mappings: claimMappingRepository() },
        { scope: workspace.id, mappingId: params.mappingId },
      ),
    ),
  ),
);
