import { getWorkspaceSummary as operation } from '../../shared/api/operations/workspaces.ts';
import { workspaceSummary } from '../../shared/domain/workspace-summary.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(await workspaceSummary({ workspaces: workspaceRepository() }, { workspace })),
);
