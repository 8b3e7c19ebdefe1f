import { listWorkspaceTileMatrixSets as operation } from '../../shared/api/operations/tile-matrix-sets.ts';
import { listWorkspaceTileMatrixSets } from '../../shared/domain/settings.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { settingsRepository, tileMatrixSetRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(
    await listWorkspaceTileMatrixSets(
      { settings: settingsRepository(), tileMatrixSets: tileMatrixSetRepository() },
      workspace.id,
    ),
  ),
);
