import { getRoleDeletionPlan as operation } from '#api/operations/roles.ts';
import { presentRoleDeletionPlan } from '#api/present.ts';
import { roleDeletionPlan } from '#domain/roles.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { roleRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) =>
  ok(presentRoleDeletionPlan(await roleDeletionPlan(roleRepository(), params.roleId))),
);
