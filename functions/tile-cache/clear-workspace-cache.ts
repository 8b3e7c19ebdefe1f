import { clearWorkspaceCache as operation } from '#api/operations/tile-cache.ts';
import { ok } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { clearWorkspaceCachesHere } from '#wiring/tile-cache.ts';

export const handler = makeChangeHandler(operation, async ({ workspace }) =>
  ok(await clearWorkspaceCachesHere(workspace.id)),
);
