import { listMosaicGranules as operation } from '../../shared/api/operations/mosaics.ts';
import { parseGranuleFilter, presentGranule, requireMosaic } from '../../shared/domain/mosaics.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { mosaicRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async (request) => {
  const { workspace, query } = request;
  const mosaic = requireMosaic(request.service);
  const filter = parseGranuleFilter(query);
  const repo = mosaicRepository();
  // One generation for the whole page: read it first, then only granules alive in it (ADR 0060).
  const { generation } = await repo.state(workspace.id, mosaic.id);
  const page = await repo.listGranules(
    workspace.id,
    mosaic.id,
    generation,
    filter,
    query.limit,
    query.cursor,
  );
  return ok({ generation, granules: page.items.map(presentGranule), next_cursor: page.nextCursor });
});
