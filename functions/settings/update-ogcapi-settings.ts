import { updateOGCAPISettings as operation } from '#api/operations/settings.ts';
import { updateSettings } from '#domain/settings.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { settingsRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body, ifMatch }) => {
  const settings = await updateSettings(
    { settings: settingsRepository() },
    { workspaceId: workspace.id, kind: 'ogcapi', body, ifMatch },
  );
  return ok(settings.document, { ETag: `"${settings.version}"` });
});
