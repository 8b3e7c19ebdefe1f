import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { DateTime, ErrorBody, Uuid } from './schemas.ts';

const PlanEntry = /* @__PURE__ */ shakable(() =>
  z.object({
    id: z.string(),
    public_id: z.optional(z.string()),
    name: z.optional(z.string()),
    service_id: z.optional(z.string()),
  }),
);

const PlanSection = /* @__PURE__ */ shakable(() =>
  z
    .object({ count: z.int(), items: z.array(PlanEntry), truncated: z.boolean() })
    .check(z.meta({ description: 'The exact count and the first 100 entries.' })),
);

export const DeletionPlanBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      target: z.object({
        scope: z.enum(['service', 'workspace']),
        id: z.string(),
        name: z.string(),
        type: z.optional(z.string()),
      }),
      layers: PlanSection,
      layer_groups: PlanSection,
      mosaic_granules: z.int(),
      style_references: z.array(z.object({ style: z.string(), references: z.int() })),
      role_references: z.array(z.object({ role_id: z.string(), references: z.int() })),
      workspace_items: z.optional(z.record(z.string(), z.int())),
      total: z.int(),
    })
    .check(
      z.meta({
        id: 'DeletionPlan',
        description:
          'Everything a recursive deletion removes: layers, the transitive closure of layer groups containing them, mosaic granules, and the style and role references it releases.',
      }),
    ),
);

export const DeletionOperationBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      id: Uuid,
      scope: z.enum(['service', 'workspace']),
      workspace_id: z.string(),
      target_id: z.string(),
      target_name: z.string(),
      status: z.enum(['pending', 'running', 'failed', 'completed']),
      phase: z.string(),
      plan: z.nullable(DeletionPlanBody),
      progress: z.object({ total: z.int(), deleted: z.int() }),
      attempt_count: z.int(),
      last_error: z.optional(z.string()),
      created_at: DateTime,
      updated_at: DateTime,
      completed_at: z.optional(DateTime),
    })
    .check(z.meta({ id: 'DeletionOperation' })),
);

export const DeletionConflictBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      ...ErrorBody.def.shape,
      recurse_required: z.literal(true),
      plan: DeletionPlanBody,
    })
    .check(
      z.meta({ id: 'DeletionConflict', description: 'The standard error body with the deletion plan.' }),
    ),
);

export const DeletionList = /* @__PURE__ */ shakable(() =>
  z
    .object({ deletions: z.array(DeletionOperationBody), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'DeletionList' })),
);

/** `recurse`: true/false/1/0, any case; anything else is a 400. */
export const RecurseFlag = /* @__PURE__ */ shakable(() =>
  z.optional(
    z.pipe(
      z.string().check(z.regex(/^(true|false|1|0)$/i, 'recurse must be true, false, 1 or 0')),
      z.transform((v: string) => v === '1' || v.toLowerCase() === 'true'),
    ),
  ),
);
