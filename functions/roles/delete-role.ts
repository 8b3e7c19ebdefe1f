import { deleteRole as operation } from '../../shared/api/operations/roles.ts';
import { deleteRole } from '../../shared/domain/roles.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { noContent } from '../../shared/http/responses.ts';
import { roleRepository } from '../../shared/store/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) => {
  await deleteRole(roleRepository(), params.roleId);
  return noContent();
});
