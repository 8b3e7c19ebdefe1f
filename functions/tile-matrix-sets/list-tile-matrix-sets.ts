import { listTileMatrixSets as operation } from '#api/operations/tile-matrix-sets.ts';
import { listTileMatrixSets } from '#domain/tile-matrix-sets.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await listTileMatrixSets(tileMatrixSetRepository(), query.limit, query.cursor)),
);
