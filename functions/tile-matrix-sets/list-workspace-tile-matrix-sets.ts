import { listWorkspaceTileMatrixSets as operation } from '#api/operations/tile-matrix-sets.ts';
import { listWorkspaceTileMatrixSets } from '#domain/settings.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { settingsRepository, tileMatrixSetRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(
    await listWorkspaceTileMatrixSets(
      { settings: settingsRepository(), tileMatrixSets: tileMatrixSetRepository() },
      { workspaceId: workspace.id },
    ),
  ),
);
