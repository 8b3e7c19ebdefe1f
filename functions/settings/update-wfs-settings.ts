import { updateWFSSettings as operation } from '../../shared/api/operations/settings.ts';
import { updateSettings } from '../../shared/domain/settings.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { settingsRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body, ifMatch }) => {
  const settings = await updateSettings(settingsRepository(), workspace.id, 'wfs', body, ifMatch);
  return ok(settings.document, { ETag: `"${settings.version}"` });
});
