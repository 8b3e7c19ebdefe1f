import { listTileMatrixSets as operation } from '#api/operations/tile-matrix-sets.ts';
import { listTileMatrixSets } from '#domain/tile-matrix-sets.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(
    await listTileMatrixSets(
      { tileMatrixSets: tileMatrixSetRepository() },
      { limit: query.limit, cursor: query.cursor },
    ),
  ),
);
