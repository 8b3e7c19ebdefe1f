import { getRoleDeletionPlan as operation } from '../../shared/api/operations/roles.ts';
import { presentRoleDeletionPlan } from '../../shared/api/present.ts';
import { roleDeletionPlan } from '../../shared/domain/roles.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { roleRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ params }) =>
  ok(presentRoleDeletionPlan(await roleDeletionPlan(roleRepository(), params.roleId))),
);
