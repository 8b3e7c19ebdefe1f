import { managementCatalog } from '../../shared/api/catalog.ts';
import { addRolePolicy as operation } from '../../shared/api/operations/roles.ts';
import { addRolePolicy } from '../../shared/domain/role-policies.ts';
import { created } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository, workspaceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params, body }) => {
  const policy = await addRolePolicy(
    roleRepository(),
    workspaceRepository(),
    managementCatalog(),
    params.roleId,
    body,
  );
  return created(undefined, `/api/v1/roles/${params.roleId}/policies/${policy.id}`);
});
