import { locationOf } from '../../shared/api/operation.ts';
import { getRole, createRole as operation } from '../../shared/api/operations/roles.ts';
import { presentRole } from '../../shared/api/present.ts';
import { createRole } from '../../shared/domain/roles.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ body }) => {
  const role = await createRole(roleRepository(), body);
  return created(presentRole(role), locationOf(getRole, { roleId: role.id }));
});
