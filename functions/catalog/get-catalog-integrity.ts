import { getCatalogIntegrity as operation } from '#api/operations/integrity.ts';
import { checkCatalog } from '#domain/catalog-integrity.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { integrityDeps } from '#wiring/integrity.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await checkCatalog(integrityDeps(), query)),
);
