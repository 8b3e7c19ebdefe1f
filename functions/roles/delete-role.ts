import { deleteRole as operation } from '../../shared/api/operations/roles.ts';
import { deleteRole } from '../../shared/domain/roles.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await deleteRole(roleRepository(), params.roleId, new Date(), ifMatch);
  return noContent();
});
