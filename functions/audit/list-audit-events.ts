import { listAuditEvents as operation } from '../../shared/api/operations/audit.ts';
import { listAudit } from '../../shared/domain/audit.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { auditTrail } from '../../shared/wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ query }) =>
  ok(await listAudit(auditTrail(), 'all', query)),
);
