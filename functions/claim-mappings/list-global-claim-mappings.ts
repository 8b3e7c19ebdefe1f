import { listGlobalClaimMappings as operation } from '../../shared/api/operations/claim-mappings.ts';
import { GLOBAL_SCOPE, presentClaimMapping } from '../../shared/domain/claim-mappings.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await claimMappingRepository().list(GLOBAL_SCOPE, query.limit, query.cursor);
  return ok({ claim_mappings: page.items.map(presentClaimMapping), next_cursor: page.nextCursor });
});
