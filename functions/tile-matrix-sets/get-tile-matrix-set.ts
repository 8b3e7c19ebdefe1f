import { getTileMatrixSet as operation } from '#api/operations/tile-matrix-sets.ts';
import { requireTileMatrixSet } from '#domain/tile-matrix-sets.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) => {
  const set = await requireTileMatrixSet(tileMatrixSetRepository(), params.tileMatrixSet);
  return ok(set, { ETag: `"${set.revision}"` });
});
