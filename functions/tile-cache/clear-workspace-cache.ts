import { clearWorkspaceCache as operation } from '#api/operations/tile-cache.ts';
import { clearWorkspaceCaches } from '#domain/tile-cache.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { cacheClearDeps } from '#wiring/tile-cache.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace }) =>
  ok(await clearWorkspaceCaches(cacheClearDeps(), { workspaceId: workspace.id })),
);
