import { listGlobalClaimMappings as operation } from '#api/operations/claim-mappings.ts';
import { GLOBAL_SCOPE, presentClaimMapping } from '#domain/claim-mappings.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await claimMappingRepository().list(GLOBAL_SCOPE, query.limit, query.cursor);
  return ok({ claim_mappings: page.items.map(presentClaimMapping), next_cursor: page.nextCursor });
});
