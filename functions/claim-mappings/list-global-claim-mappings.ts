import { listGlobalClaimMappings as operation } from '#api/operations/claim-mappings.ts';
import { GLOBAL_SCOPE, listClaimMappings, presentClaimMapping } from '#domain/claim-mappings.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await listClaimMappings(
    { mappings: claimMappingRepository() },
    { scope: GLOBAL_SCOPE, limit: query.limit, cursor: query.cursor },
  );
  return ok({ claim_mappings: page.items.map(presentClaimMapping), next_cursor: page.nextCursor });
});
