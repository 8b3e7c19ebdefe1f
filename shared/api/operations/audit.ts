import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { AuditList, AuditQuery } from '../audit-schemas.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName } from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));

const description =
  'Newest first. Filters: `operation`, `principal` (a principal id), `outcome`, and the window `since`/`until` (inclusive). A page may hold fewer than `limit` records while `next_cursor` says more may follow. Records are kept `auditRetentionDays` (default 90).';

/** The answers both listings share. */
const recordsResponses = {
  200: { description: 'the records', schema: AuditList },
  400: { description: 'bad filter, limit or cursor' },
};

/** One page of one record: a layer updated in the demo workspace. */
const recordsExample = {
  records: [
    {
      id: '01955a7e-3f40-7b2e-9c1d-3e4f5a6b7c8d',
      at: ex.updated,
      workspace_id: ex.ids.workspace,
      operation: 'updateLayer',
      principal: { id: 'jwt:4f1c2b7e-alice', auth_method: 'jwt', subject: '4f1c2b7e-alice' },
      request_id: '9c5b1e0a-7f7e-4a55-9d0c-3f1d2e4b5a6c',
      outcome: 'succeeded',
      changes: [
        {
          type: 'layer',
          id: ex.ids.layer,
          parent_id: ex.ids.service,
          workspace_id: ex.ids.workspace,
          action: 'updated',
          version: 2,
        },
      ],
    },
  ],
};

export const listWorkspaceAudit = /* @__PURE__ */ shakable(() =>
  defineOperation({
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
      ...recordsResponses,
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      query: { outcome: 'succeeded', since: '2026-03-01T00:00:00Z' },
      response: recordsExample,
    },
    data: ['Query'],
  }),
);

export const listAuditEvents = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listAuditEvents',
    method: 'GET',
    path: '/api/v1/audit',
    handler: 'functions/audit/list-audit-events.ts',
    permission: 'global',
    summary: 'The whole audit trail, every workspace and the global entities (super_admin)',
    description,
    tags: ['audit'],
    request: { query: AuditQuery },
    responses: {
      ...recordsResponses,
    },
    examples: {
      query: { operation: 'updateLayer' },
      response: recordsExample,
    },
    data: ['Query'],
  }),
);
