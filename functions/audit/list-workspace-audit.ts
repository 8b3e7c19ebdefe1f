import { listWorkspaceAudit as operation } from '#api/operations/audit.ts';
import { listAudit } from '#domain/audit.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { auditTrail } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) =>
  ok(await listAudit({ trail: auditTrail() }, { scope: { workspaceId: workspace.id }, query })),
);
