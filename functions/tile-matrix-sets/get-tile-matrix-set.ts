import { getTileMatrixSet as operation } from '#api/operations/tile-matrix-sets.ts';
import { getTileMatrixSet } from '#domain/tile-matrix-sets.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) => {
  const set = await getTileMatrixSet(
    { tileMatrixSets: tileMatrixSetRepository() },
    { tileMatrixSet: params.tileMatrixSet },
  );
  return ok(set, { ETag: `"${set.revision}"` });
});
