import { deleteTileMatrixSet as operation } from '../../shared/api/operations/tile-matrix-sets.ts';
import { deleteTileMatrixSet } from '../../shared/domain/tile-matrix-sets.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { tileMatrixSetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteTileMatrixSet(tileMatrixSetRepository(), params.tileMatrixSet, ifMatch);
  return noContent();
});
