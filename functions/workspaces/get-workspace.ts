import { getWorkspace as operation } from '#api/operations/workspaces.ts';
import { presentWorkspace } from '#api/present.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';

export const handler = makeHandler(operation, async ({ workspace }) => ok(presentWorkspace(workspace)));
