import { removeRolePolicy as operation } from '../../shared/api/operations/roles.ts';
import { removeRolePolicy } from '../../shared/domain/role-policies.ts';
import { noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await removeRolePolicy(roleRepository(), params.roleId, params.policyId, ifMatch);
  return noContent();
});
