import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { EVENT_ENTITIES, EVENT_SOURCE, eventAction } from '#domain/catalog-events.ts';
import { DateTime } from './schemas.ts';

/** Every `detail-type` a catalog event can have: `<Entity> <Action>` (ADR 0094). */
export const eventDetailTypes: readonly string[] = /* @__PURE__ */ shakable(() =>
  Object.entries(EVENT_ENTITIES).flatMap(([type, entity]) =>
    [...new Set((['created', 'updated', 'deleted'] as const).map((action) => eventAction(type, action)))].map(
      (action) => `${entity} ${action}`,
    ),
  ),
);

/** The `detail` of a catalog event. */
export const CatalogEventDetailBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      event_id: z.string().check(
        z.meta({
          description: 'unique per event, the same on every redelivery (`<audit_id>:<index>`): dedupe on it',
        }),
      ),
      audit_id: z.string().check(z.meta({ description: 'the audit record the event was read from' })),
      at: DateTime,
      type: z.enum(Object.keys(EVENT_ENTITIES) as [string, ...string[]]),
      id: z
        .string()
        .check(z.meta({ description: "the entity's id (a style's or asset's name, a settings kind)" })),
      parent_id: z.optional(z.string().check(z.meta({ description: "a layer's service, a policy's role" }))),
      workspace_id: z.optional(z.string().check(z.meta({ description: 'absent for global entities' }))),
      action: z.enum(['created', 'updated', 'deleted']),
      version: z.optional(z.number().check(z.meta({ description: "the entity's version after the change" }))),
      status: z.optional(z.string().check(z.meta({ description: 'the status the change set' }))),
      principal: z.object({
        id: z.string().check(z.meta({ description: '`apikey:<id>`, `jwt:<sub>` or `system:<name>`' })),
        auth_method: z.string(),
        subject: z.optional(z.string()),
      }),
      operation: z.string().check(z.meta({ description: 'the operationId, or `workflow:<name>`' })),
      request_id: z
        .string()
        .check(z.meta({ description: 'the API request id, or the workflow run (its id)' })),
    })
    .check(z.meta({ id: 'CatalogEventDetail' })),
);

/** A catalog event as EventBridge delivers it to a rule's target (the fields GeoPlane sets). */
export const CatalogEventBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      source: z.literal(EVENT_SOURCE),
      'detail-type': z.enum(eventDetailTypes as [string, ...string[]]),
      time: z.optional(DateTime),
      detail: CatalogEventDetailBody,
    })
    .check(
      z.meta({
        id: 'CatalogEvent',
        title: 'GeoPlane catalog-change event',
        description:
          "One per entity a committed change of the catalog touched, read from the change's audit record on the table's stream (ADR 0094).",
      }),
    ),
);

/** The JSON Schema of the catalog events (docs/events/catalog-event.schema.json). */
export function catalogEventJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(CatalogEventBody, { target: 'draft-2020-12', io: 'output' }) as Record<
    string,
    unknown
  >;
}
