import { getRole as operation } from '../../shared/api/operations/roles.ts';
import { presentRole, systemRoles } from '../../shared/api/present.ts';
import { requireCustomRole } from '../../shared/domain/roles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) => {
  const system = systemRoles.find((r) => r.id === params.roleId);
  return ok(system ?? presentRole(await requireCustomRole(roleRepository(), params.roleId)));
});
