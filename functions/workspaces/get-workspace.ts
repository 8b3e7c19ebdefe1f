import { getWorkspace as operation } from '../../shared/api/operations/workspaces.ts';
import { presentWorkspace } from '../../shared/api/present.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';

export const handler = makeHandler(operation, async ({ workspace }) => ok(presentWorkspace(workspace)));
