import { listMosaicGranules as operation } from '../../shared/api/operations/mosaics.ts';
import { listGranules, presentGranule } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ service, query }) => {
  const { generation, page } = await listGranules({ mosaics: mosaicRepository() }, { service, query });
  return ok({ generation, granules: page.items.map(presentGranule), next_cursor: page.nextCursor });
});
