import { repairCatalogIntegrity as operation } from '#api/operations/integrity.ts';
import { repairCatalog } from '#domain/catalog-integrity.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { integrityDeps } from '#wiring/integrity.ts';

export const handler = makeIdempotentHandler(operation, async ({ query }) =>
  ok(await repairCatalog(integrityDeps(), { ...query, confirm: query.confirm === true })),
);
