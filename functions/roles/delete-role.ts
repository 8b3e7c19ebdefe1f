import { deleteRole as operation } from '#api/operations/roles.ts';
import { deleteRole } from '#domain/roles.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteRole({ roles: roleRepository() }, { roleId: params.roleId, ifMatch });
  return noContent();
});
