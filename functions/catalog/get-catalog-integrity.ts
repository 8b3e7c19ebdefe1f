import { getCatalogIntegrity as operation } from '../../shared/api/operations/integrity.ts';
import { checkCatalog } from '../../shared/domain/catalog-integrity.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { integrityDeps } from '../../shared/wiring/integrity.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await checkCatalog(integrityDeps(), query)),
);
