import { getTileMatrixSet as operation } from '../../shared/api/operations/tile-matrix-sets.ts';
import { requireTileMatrixSet } from '../../shared/domain/tile-matrix-sets.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { tileMatrixSetRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) => {
  const set = await requireTileMatrixSet(tileMatrixSetRepository(), params.tileMatrixSet);
  return ok(set, { ETag: `"${set.revision}"` });
});
