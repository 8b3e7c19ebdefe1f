import { getClaimMapping as operation } from '../../shared/api/operations/claim-mappings.ts';
import { getClaimMapping, presentClaimMapping } from '../../shared/domain/claim-mappings.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentClaimMapping(await getClaimMapping(claimMappingRepository(), workspace.id, params.mappingId))),
);
