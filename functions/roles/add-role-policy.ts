import { managementCatalog } from '#api/catalog.ts';
import { locationOf } from '#api/operation.ts';
import { addRolePolicy as operation, removeRolePolicy } from '#api/operations/roles.ts';
import { addRolePolicy, policyTag } from '#domain/role-policies.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { roleRepository, workspaceRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ params, body }) => {
  const policy = await addRolePolicy(
    { roles: roleRepository(), workspaces: workspaceRepository(), catalog: managementCatalog() },
    { roleId: params.roleId, body },
  );
  return created(undefined, locationOf(removeRolePolicy, { roleId: params.roleId, policyId: policy.id }), {
    ETag: policyTag,
  });
});
