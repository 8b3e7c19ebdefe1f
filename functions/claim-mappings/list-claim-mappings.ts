import { listClaimMappings as operation } from '#api/operations/claim-mappings.ts';
import { listClaimMappings, presentClaimMapping } from '#domain/claim-mappings.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listClaimMappings(
    { mappings: claimMappingRepository() },
    { scope: workspace.id, limit: query.limit, cursor: query.cursor },
  );
  return ok({ claim_mappings: page.items.map(presentClaimMapping), next_cursor: page.nextCursor });
});
