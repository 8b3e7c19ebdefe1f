import * as z from 'zod/mini';
import { AuditList, AuditQuery } from '../audit-schemas.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName } from '../schemas.ts';

const WorkspaceParams = z.strictObject({ workspace: IdOrName });

const description =
  'Newest first. Filters: `operation`, `principal` (a principal id), `outcome`, and the window `since`/`until` (inclusive). A page may hold fewer than `limit` records while `next_cursor` says more may follow. Records are kept `auditRetentionDays` (default 90).';

export const listWorkspaceAudit = defineOperation({
  operationId: 'listWorkspaceAudit',
  method: 'GET',
  path: '/api/v1/workspaces/{workspace}/audit',
  handler: 'functions/audit/list-workspace-audit.ts',
  permission: 'manage',
  summary: "The workspace's audit trail: every change and every refused change, with who and which request",
  description,
  tags: ['audit'],
  request: { params: WorkspaceParams, query: AuditQuery },
  responses: {
    200: { description: 'the records', schema: AuditList },
    400: { description: 'bad filter, limit or cursor' },
    404: { description: 'workspace not found' },
  },
  data: ['Query'],
});

export const listAudit = defineOperation({
  operationId: 'listAudit',
  method: 'GET',
  path: '/api/v1/audit',
  handler: 'functions/audit/list-audit.ts',
  permission: 'global',
  summary: 'The whole audit trail, every workspace and the global entities (super_admin)',
  description,
  tags: ['audit'],
  request: { query: AuditQuery },
  responses: {
    200: { description: 'the records', schema: AuditList },
    400: { description: 'bad filter, limit or cursor' },
  },
  data: ['Query'],
});
