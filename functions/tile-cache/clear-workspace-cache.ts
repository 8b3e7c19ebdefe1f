import { clearWorkspaceCache as operation } from '../../shared/api/operations/tile-cache.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { clearWorkspaceCachesHere } from '../../shared/wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ workspace }) =>
  ok(await clearWorkspaceCachesHere(workspace.id)),
);
