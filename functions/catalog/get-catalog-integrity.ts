import { getCatalogIntegrity as operation } from '#api/operations/integrity.ts';
import { checkCatalog } from '#domain/catalog-integrity.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { integrityDeps } from '#wiring/integrity.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await checkCatalog(integrityDeps(), query)),
);
