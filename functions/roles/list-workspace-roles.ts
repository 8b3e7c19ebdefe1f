import { listWorkspaceRoles as operation } from '#api/operations/roles.ts';
import { presentWorkspaceRoles } from '#api/present.ts';
import { listWorkspaceRoles } from '#domain/roles.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(
    presentWorkspaceRoles(
      await listWorkspaceRoles({ roles: roleRepository() }, { limit: query.limit, cursor: query.cursor }),
    ),
  ),
);
