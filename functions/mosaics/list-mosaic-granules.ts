import { listMosaicGranules as operation } from '#api/operations/mosaics.ts';
import { listGranules, presentGranule } from '#domain/mosaics.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { mosaicRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, query }) => {
  const { generation, page } = await listGranules({ mosaics: mosaicRepository() }, { service, query });
  return ok({ generation, granules: page.items.map(presentGranule), next_cursor: page.nextCursor });
});
