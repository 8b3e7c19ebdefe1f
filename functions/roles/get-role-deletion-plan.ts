import { getRoleDeletionPlan as operation } from '#api/operations/roles.ts';
import { presentRoleDeletionPlan } from '#api/present.ts';
import { roleDeletionPlan } from '#domain/roles.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) =>
  ok(presentRoleDeletionPlan(await roleDeletionPlan({ roles: roleRepository() }, { roleId: params.roleId }))),
);
