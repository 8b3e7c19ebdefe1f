import { managementCatalog } from '../../shared/api/catalog.ts';
import { locationOf } from '../../shared/api/operation.ts';
import { addRolePolicy as operation, removeRolePolicy } from '../../shared/api/operations/roles.ts';
import { addRolePolicy, policyTag } from '../../shared/domain/role-policies.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ params, body }) => {
  const policy = await addRolePolicy(
    roleRepository(),
    workspaceRepository(),
    managementCatalog(),
    params.roleId,
    body,
  );
  return created(undefined, locationOf(removeRolePolicy, { roleId: params.roleId, policyId: policy.id }), {
    ETag: policyTag,
  });
});
