import { repairCatalogIntegrity as operation } from '../../shared/api/operations/integrity.ts';
import { repairCatalog } from '../../shared/domain/catalog-integrity.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { integrityDeps } from '../../shared/wiring/integrity.ts';

export const handler = makeChangeHandler(operation, async ({ query }) =>
  ok(await repairCatalog(integrityDeps(), { ...query, confirm: query.confirm === true })),
);
