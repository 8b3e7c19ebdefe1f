import { getWorkspaceDeletionPlan as operation } from '../../shared/api/operations/workspaces.ts';
import { workspaceDeletionPlan } from '../../shared/domain/deletions.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace }) =>
  ok(await workspaceDeletionPlan(deletionRepository(), workspace)),
);
