import { listWorkspaceRoles as operation } from '../../shared/api/operations/roles.ts';
import { presentWorkspaceRoles } from '../../shared/api/present.ts';
import { listWorkspaceRoles } from '../../shared/domain/roles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(presentWorkspaceRoles(await listWorkspaceRoles(roleRepository(), query.limit, query.cursor))),
);
