import { listRoles as operation } from '#api/operations/roles.ts';
import { presentRole, systemRoles } from '#api/present.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await roleRepository().list(query.limit, query.cursor);
  const custom = page.items.map(presentRole);
  // The built-ins lead the first page.
  return ok({ roles: query.cursor ? custom : [...systemRoles, ...custom], next_cursor: page.nextCursor });
});
