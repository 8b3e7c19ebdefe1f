import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { DeletionList, DeletionOperationBody } from '../deletion-schemas.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, PageQuery, Uuid } from '../schemas.ts';

const DeletionParams = /* @__PURE__ */ shakable(() => z.strictObject({ id: Uuid }));
const notFound = { description: 'no such operation (or not one of a workspace you administer)' };

export const getDeletionOperation = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getDeletionOperation',
    method: 'GET',
    path: '/api/v1/deletions/{id}',
    handler: 'functions/deletions/get-deletion-operation.ts',
    permission: 'authenticated',
    summary: 'Read a deletion operation (status, phase, progress, plan)',
    description:
      "Visible to super_admin and to admins of the operation's workspace (a workspace's own deletion: super_admin only).",
    tags: ['deletions'],
    request: { params: DeletionParams },
    responses: { 200: { description: 'the operation', schema: DeletionOperationBody }, 404: notFound },
    examples: {
      params: { id: ex.ids.deletion },
      response: {
        ...ex.deletion,
        status: 'completed',
        phase: 'done',
        progress: { total: 3, deleted: 3 },
        completed_at: ex.updated,
      },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const listDeletionOperations = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listDeletionOperations',
    method: 'GET',
    path: '/api/v1/deletions',
    handler: 'functions/deletions/list-deletion-operations.ts',
    permission: 'authenticated',
    summary: 'List deletion operations, newest first (only those of workspaces you administer)',
    description:
      'Filters: `workspace` (id or name) and `status`. A page may hold fewer than `limit` operations while `next_cursor` says more may follow.',
    tags: ['deletions'],
    request: {
      query: z.strictObject({
        ...PageQuery.def.shape,
        workspace: z
          .optional(IdOrName)
          .check(z.meta({ description: 'Only deletions in this workspace (its id or name).' })),
        status: z
          .optional(z.enum(['pending', 'running', 'failed', 'completed']))
          .check(z.meta({ description: 'Only deletions in this status.' })),
      }),
    },
    responses: {
      200: { description: 'the operations', schema: DeletionList },
      400: { description: 'bad filter, limit or cursor' },
    },
    examples: {
      query: { status: 'failed' },
      response: {
        deletions: [
          {
            ...ex.deletion,
            status: 'failed',
            phase: 'layers',
            attempt_count: 3,
            last_error: 'the catalog store was unavailable',
          },
        ],
      },
    },
    data: ['GetItem', 'Query', 'BatchGetItem'],
  }),
);

export const retryDeletionOperation = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'retryDeletionOperation',
    method: 'POST',
    path: '/api/v1/deletions/{id}/retry',
    handler: 'functions/deletions/retry-deletion-operation.ts',
    permission: 'authenticated',
    summary: 'Resume a failed deletion where it stopped (a completed one is returned unchanged)',
    tags: ['deletions'],
    request: { params: DeletionParams },
    responses: {
      202: {
        description: 'the operation, pending again (or as it is when it is not failed)',
        schema: DeletionOperationBody,
        headers: { Location: 'URL of the operation' },
      },
      404: notFound,
      409: { description: "the service's workspace is being deleted (that deletion removes the service)" },
    },
    examples: {
      params: { id: ex.ids.deletion },
      response: { ...ex.deletion, status: 'pending', phase: 'layers', attempt_count: 4 },
    },
    data: ['GetItem', 'Query', 'UpdateItem', 'ConditionCheckItem'],
    starts: ['deletion'],
  }),
);
