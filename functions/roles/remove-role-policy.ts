import { removeRolePolicy as operation } from '#api/operations/roles.ts';
import { removeRolePolicy } from '#domain/role-policies.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { noContent } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await removeRolePolicy(
    { roles: roleRepository() },
    { roleId: params.roleId, policyId: params.policyId, ifMatch },
  );
  return noContent();
});
