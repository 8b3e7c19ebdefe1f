import { getAuthMe as operation } from '../../shared/api/operations/auth.ts';
import { describePrincipal } from '../../shared/auth/me.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { claimMappingRepository, workspaceRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ principal }) =>
  ok(await describePrincipal(workspaceRepository(), claimMappingRepository(), principal)),
);
