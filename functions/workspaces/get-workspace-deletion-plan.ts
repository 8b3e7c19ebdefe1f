import { getWorkspaceDeletionPlan as operation } from '#api/operations/workspaces.ts';
import { workspaceDeletionPlan } from '#domain/deletions.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { deletionRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(await workspaceDeletionPlan({ deletions: deletionRepository() }, { workspace })),
);
