import { listClaimMappings as operation } from '../../shared/api/operations/claim-mappings.ts';
import { presentClaimMapping } from '../../shared/domain/claim-mappings.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await claimMappingRepository().list(workspace.id, query.limit, query.cursor);
  return ok({ claim_mappings: page.items.map(presentClaimMapping), next_cursor: page.nextCursor });
});
