import { getWMTSSettings as operation } from '../../shared/api/operations/settings.ts';
import { getSettings } from '../../shared/domain/settings.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { settingsRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) => {
  const settings = await getSettings(settingsRepository(), workspace.id, 'wmts');
  return ok(settings.document, { ETag: `"${settings.version}"` });
});
