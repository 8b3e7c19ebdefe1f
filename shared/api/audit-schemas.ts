import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { DateTime, PageQuery } from './schemas.ts';

/** One entity a change touched (ADR 0094). */
export const AuditChangeBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      type: z.string().check(z.meta({ description: 'the entity: workspace, service, layer, style, …' })),
      id: z.string(),
      parent_id: z.optional(
        z.string().check(z.meta({ description: "the layer's service, the policy's role" })),
      ),
      workspace_id: z.optional(z.string()),
      action: z.enum(['created', 'updated', 'deleted']),
      version: z.optional(z.number().check(z.meta({ description: 'the version after the change' }))),
      status: z.optional(z.string().check(z.meta({ description: 'the status the change set' }))),
    })
    .check(z.meta({ id: 'AuditChange' })),
);

/** One audit record: who did what to which entities, in which request, with what outcome. */
export const AuditRecordBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      id: z.string(),
      at: DateTime,
      workspace_id: z.optional(z.string()),
      operation: z.string().check(z.meta({ description: 'the operationId, or `workflow:<name>`' })),
      principal: z.object({
        id: z.string().check(z.meta({ description: '`apikey:<id>`, `jwt:<sub>` or `system…`' })),
        auth_method: z.string(),
        subject: z.optional(z.string()),
      }),
      request_id: z.string(),
      outcome: z.enum(['succeeded', 'refused']),
      status: z.optional(z.number().check(z.meta({ description: 'the HTTP status of a refused request' }))),
      reason: z.optional(z.string().check(z.meta({ description: 'the error reason of a refused request' }))),
      changes: z.array(AuditChangeBody),
      count: z.optional(
        z.number().check(
          z.meta({
            description:
              'refused: how many refusals of this kind (caller, operation, workspace, status, reason) this record counts; one record per kind and minute (ADR 0109)',
          }),
        ),
      ),
      last_at: z.optional(
        DateTime.check(z.meta({ description: 'refused: the time of the last refusal counted' })),
      ),
      last_request_id: z.optional(
        z.string().check(z.meta({ description: 'refused: the request id of the last refusal counted' })),
      ),
    })
    .check(z.meta({ id: 'AuditRecord' })),
);

export const AuditList = /* @__PURE__ */ shakable(() =>
  z
    .object({ records: z.array(AuditRecordBody), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'AuditList' })),
);

/** The audit listings' filters: operation, principal, outcome and a time window. */
export const AuditQuery = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    ...PageQuery.def.shape,
    operation: z
      .optional(z.string().check(z.regex(/^[A-Za-z][A-Za-z0-9:_-]{0,99}$/)))
      .check(z.meta({ description: 'Only records of this operationId (e.g. `createLayer`).' })),
    principal: z
      .optional(z.string().check(z.minLength(1), z.maxLength(300)))
      .check(z.meta({ description: 'Only records of this principal (as `principal` in the records).' })),
    outcome: z
      .optional(z.enum(['succeeded', 'refused']))
      .check(z.meta({ description: 'Only changes made (`succeeded`) or requests refused (`refused`).' })),
    since: z
      .optional(DateTime)
      .check(z.meta({ description: 'Only records at or after this RFC 3339 time.' })),
    until: z.optional(DateTime).check(z.meta({ description: 'Only records before this RFC 3339 time.' })),
  }),
);
