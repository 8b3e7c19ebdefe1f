import { deleteRole as operation } from '#api/operations/roles.ts';
import { deleteRole } from '#domain/roles.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteRole(roleRepository(), params.roleId, new Date(), ifMatch);
  return noContent();
});
