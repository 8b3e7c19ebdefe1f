import { removeRolePolicy as operation } from '#api/operations/roles.ts';
import { removeRolePolicy } from '#domain/role-policies.ts';
import { noContent } from '#http/responses.ts';
import { makeChangeHandler } from '#wiring/handler.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, ifMatch }) => {
  await removeRolePolicy(roleRepository(), params.roleId, params.policyId, ifMatch);
  return noContent();
});
