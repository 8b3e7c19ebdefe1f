import { getAuthMe as operation } from '../../shared/api/operations/auth.ts';
import { describePrincipal } from '../../shared/auth/me.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { claimMappingRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ principal }) =>
  ok(await describePrincipal(workspaceRepository(), claimMappingRepository(), principal)),
);
