import { deleteTileMatrixSet as operation } from '#api/operations/tile-matrix-sets.ts';
import { deleteTileMatrixSet } from '#domain/tile-matrix-sets.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteTileMatrixSet(
    { tileMatrixSets: tileMatrixSetRepository() },
    { tileMatrixSet: params.tileMatrixSet, ifMatch },
  );
  return noContent();
});
