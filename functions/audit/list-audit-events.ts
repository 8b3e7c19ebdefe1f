import { listAuditEvents as operation } from '#api/operations/audit.ts';
import { listAudit } from '#domain/audit.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { auditTrail } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await listAudit(auditTrail(), 'all', query)),
);
