import { listTileMatrixSets as operation } from '../../shared/api/operations/tile-matrix-sets.ts';
import { listTileMatrixSets } from '../../shared/domain/tile-matrix-sets.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { tileMatrixSetRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await listTileMatrixSets(tileMatrixSetRepository(), query.limit ?? 100, query.cursor)),
);
