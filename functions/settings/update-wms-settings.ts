import { updateWMSSettings as operation } from '#api/operations/settings.ts';
import { updateSettings } from '#domain/settings.ts';
import { ok } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { settingsRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body, ifMatch }) => {
  const settings = await updateSettings(settingsRepository(), workspace.id, 'wms', body, ifMatch);
  return ok(settings.document, { ETag: `"${settings.version}"` });
});
