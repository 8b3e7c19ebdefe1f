import { locationOf } from '#api/operation.ts';
import { getRole, createRole as operation } from '#api/operations/roles.ts';
import { presentRole } from '#api/present.ts';
import { createRole } from '#domain/roles.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ body }) => {
  const role = await createRole({ roles: roleRepository() }, { body });
  return created(presentRole(role), locationOf(getRole, { roleId: role.id }));
});
