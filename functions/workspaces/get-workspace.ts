import { getWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { presentWorkspace } from '../../shared/api/present.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';

export const handler = makeHandler(operation, async ({ workspace }) => ok(presentWorkspace(workspace)));
