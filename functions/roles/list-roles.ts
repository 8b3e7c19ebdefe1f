import { listRoles as operation } from '#api/operations/roles.ts';
import { presentRole, systemRoles } from '#api/present.ts';
import { listRoles } from '#domain/roles.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await listRoles({ roles: roleRepository() }, { limit: query.limit, cursor: query.cursor });
  const custom = page.items.map(presentRole);
  // The built-ins lead the first page.
  return ok({ roles: query.cursor ? custom : [...systemRoles, ...custom], next_cursor: page.nextCursor });
});
