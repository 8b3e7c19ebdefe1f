import { getRole as operation } from '#api/operations/roles.ts';
import { presentRole, systemRoles } from '#api/present.ts';
import { getCustomRole } from '#domain/roles.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) => {
  const system = systemRoles.find((r) => r.id === params.roleId);
  return ok(
    system ?? presentRole(await getCustomRole({ roles: roleRepository() }, { roleId: params.roleId })),
  );
});
