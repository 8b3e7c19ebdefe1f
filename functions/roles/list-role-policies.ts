import { listRolePolicies as operation } from '#api/operations/roles.ts';
import { presentPolicy } from '#domain/role-policies.ts';
import { listRolePolicies } from '#domain/roles.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) =>
  ok({
    policies: (await listRolePolicies({ roles: roleRepository() }, { roleId: params.roleId })).map(
      presentPolicy,
    ),
  }),
);
