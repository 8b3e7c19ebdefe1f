import { getAuthMe as operation } from '#api/operations/auth.ts';
import { describePrincipal } from '#auth/me.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { claimMappingRepository, workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ principal }) =>
  ok(
    await describePrincipal(
      { workspaces: workspaceRepository(), claimMappings: claimMappingRepository() },
      { principal },
    ),
  ),
);
