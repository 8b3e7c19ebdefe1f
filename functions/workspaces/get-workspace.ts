import { getWorkspace as operation } from '#api/operations/workspaces.ts';
import { presentWorkspace } from '#api/present.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';

export const handler = makeHandler(operation, async ({ workspace }) => ok(presentWorkspace(workspace)));
