import { listTileMatrixSets as operation } from '../../shared/api/operations/tile-matrix-sets.ts';
import { listTileMatrixSets } from '../../shared/domain/tile-matrix-sets.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { tileMatrixSetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await listTileMatrixSets(tileMatrixSetRepository(), query.limit, query.cursor)),
);
