import { listWorkspaceTileMatrixSets as operation } from '#api/operations/tile-matrix-sets.ts';
import { listWorkspaceTileMatrixSets } from '#domain/settings.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { settingsRepository, tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(
    await listWorkspaceTileMatrixSets(
      { settings: settingsRepository(), tileMatrixSets: tileMatrixSetRepository() },
      workspace.id,
    ),
  ),
);
