import { locationOf } from '../../shared/api/operation.ts';
import {
  getTileMatrixSet,
  putTileMatrixSet as operation,
} from '../../shared/api/operations/tile-matrix-sets.ts';
import { putTileMatrixSet } from '../../shared/domain/tile-matrix-sets.ts';
import { created, ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { tileMatrixSetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, body, ifMatch }) => {
  const { record, created: isNew } = await putTileMatrixSet(
    tileMatrixSetRepository(),
    params.tileMatrixSet,
    body,
    ifMatch,
  );
  const etag = { ETag: `"${record.revision}"` };
  if (!isNew) return ok(record, etag);
  const result = created(record, locationOf(getTileMatrixSet, { tileMatrixSet: record.id }));
  return { ...result, headers: { ...result.headers, ...etag } };
});
