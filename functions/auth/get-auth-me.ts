import { getAuthMe as operation } from '#api/operations/auth.ts';
import { describePrincipal } from '#auth/me.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { claimMappingRepository, workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ principal }) =>
  ok(await describePrincipal(workspaceRepository(), claimMappingRepository(), principal)),
);
