import { listRolePolicies as operation } from '../../shared/api/operations/roles.ts';
import { presentPolicy } from '../../shared/domain/role-policies.ts';
import { listRolePolicies } from '../../shared/domain/roles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) =>
  ok({
    policies: (await listRolePolicies({ roles: roleRepository() }, { roleId: params.roleId })).map(
      presentPolicy,
    ),
  }),
);
