import { deleteTileMatrixSet as operation } from '#api/operations/tile-matrix-sets.ts';
import { deleteTileMatrixSet } from '#domain/tile-matrix-sets.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteTileMatrixSet(tileMatrixSetRepository(), params.tileMatrixSet, ifMatch);
  return noContent();
});
