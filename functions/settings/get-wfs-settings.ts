import { getWFSSettings as operation } from '#api/operations/settings.ts';
import { getSettings } from '#domain/settings.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { settingsRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) => {
  const settings = await getSettings(settingsRepository(), workspace.id, 'wfs');
  return ok(settings.document, { ETag: `"${settings.version}"` });
});
