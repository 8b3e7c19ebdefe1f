import { deleteWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { deleteWorkspace } from '../../shared/domain/workspaces.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { noContent } from '../../shared/http/responses.ts';
import { usageKeys } from '../../shared/platform/usage-keys.ts';
import { workspaceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, ifMatch }) => {
  await deleteWorkspace(workspaceRepository(), workspace, ifMatch, usageKeys());
  return noContent();
});
