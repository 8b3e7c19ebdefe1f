import { getClaimMapping as operation } from '#api/operations/claim-mappings.ts';
import { getClaimMapping, presentClaimMapping } from '#domain/claim-mappings.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { claimMappingRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, params }) =>
  ok(presentClaimMapping(await getClaimMapping(claimMappingRepository(), workspace.id, params.mappingId))),
);
