import { listRoles as operation } from '../../shared/api/operations/roles.ts';
import { presentRole, systemRoles } from '../../shared/api/present.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) => {
  const page = await roleRepository().list(query.limit, query.cursor);
  const custom = page.items.map(presentRole);
  // The built-ins lead the first page.
  return ok({ roles: query.cursor ? custom : [...systemRoles, ...custom], next_cursor: page.nextCursor });
});
