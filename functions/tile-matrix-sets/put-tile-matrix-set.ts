import { locationOf } from '#api/operation.ts';
import { getTileMatrixSet, putTileMatrixSet as operation } from '#api/operations/tile-matrix-sets.ts';
import { putTileMatrixSet } from '#domain/tile-matrix-sets.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { created, ok } from '#http/responses.ts';
import { tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, body, ifMatch }) => {
  const { record, created: isNew } = await putTileMatrixSet(
    { tileMatrixSets: tileMatrixSetRepository() },
    { tileMatrixSet: params.tileMatrixSet, body, ifMatch },
  );
  const etag = { ETag: `"${record.revision}"` };
  if (!isNew) return ok(record, etag);
  const result = created(record, locationOf(getTileMatrixSet, { tileMatrixSet: record.id }));
  return { ...result, headers: { ...result.headers, ...etag } };
});
