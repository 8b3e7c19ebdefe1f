import { getWCSSettings as operation } from '#api/operations/settings.ts';
import { getSettings } from '#domain/settings.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { settingsRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) => {
  const settings = await getSettings(
    { settings: settingsRepository() },
    { workspaceId: workspace.id, kind: 'wcs' },
  );
  return ok(settings.document, { ETag: `"${settings.version}"` });
});
