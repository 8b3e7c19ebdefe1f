import { getTileMatrixSet as operation } from '../../shared/api/operations/tile-matrix-sets.ts';
import { requireTileMatrixSet } from '../../shared/domain/tile-matrix-sets.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { tileMatrixSetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) => {
  const set = await requireTileMatrixSet(tileMatrixSetRepository(), params.tileMatrixSet);
  return ok(set, { ETag: `"${set.revision}"` });
});
