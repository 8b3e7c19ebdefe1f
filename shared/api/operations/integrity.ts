import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName } from '../schemas.ts';

const checks = [
  'workspace_name_marker',
  'service_name_marker',
  'public_id_marker',
  'claim_mapping_marker',
  'layer_service',
  'layer_style',
  'layer_role',
  'claim_mapping_role',
  'group_member',
  'summary_counters',
  'service_layer_count',
  'style_layer_refs',
  'claim_mapping_count',
  'role_refs',
  'tile_cache_usage',
  'layer_source',
  'import_schema',
] as const;
const Check = /* @__PURE__ */ shakable(() => z.enum(checks));
const Kind = /* @__PURE__ */ shakable(() =>
  z.enum([
    'dangling_reference',
    'orphaned_marker',
    'counter_mismatch',
    'missing_source_table',
    'orphaned_import_schema',
  ]),
);
const Entity = /* @__PURE__ */ shakable(() =>
  z.strictObject({ type: z.string(), id: z.string(), parent_id: z.optional(z.string()) }),
);

const Finding = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z.string(),
      kind: Kind,
      check: Check,
      workspace_id: z.optional(z.string()),
      entity: Entity,
      detail: z.string(),
      repair: z.string(),
      repairable: z.boolean(),
    })
    .check(z.meta({ id: 'IntegrityFinding' })),
);

const IntegrityReport = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      checked_at: z.string(),
      workspace_id: z.optional(z.string()),
      complete: z.boolean(),
      counts: z.strictObject({
        workspaces: z.number(),
        items: z.number(),
        layers_probed: z.number(),
        import_schemas: z.number(),
      }),
      findings: z.array(Finding),
      unchecked: z.array(
        z.strictObject({
          check: z.optional(Check),
          workspace_id: z.optional(z.string()),
          entity: z.optional(Entity),
          reason: z.string(),
        }),
      ),
    })
    .check(z.meta({ id: 'IntegrityReport' })),
);

const RepairReport = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      dry_run: z.boolean(),
      report: IntegrityReport,
      repairs: z.array(
        z.strictObject({
          finding_id: z.string(),
          check: Check,
          outcome: z.enum(['repaired', 'would_repair', 'changed_meanwhile', 'not_repairable', 'failed']),
          detail: z.optional(z.string()),
        }),
      ),
    })
    .check(z.meta({ id: 'IntegrityRepairReport' })),
);

const Scope = /* @__PURE__ */ shakable(() => ({
  workspace: z
    .optional(IdOrName)
    .check(z.meta({ description: 'Check one workspace (its id or name) instead of the whole catalog.' })),
  check: z.optional(Check).check(z.meta({ description: 'Report (and repair) only this check’s findings.' })),
}));

const exampleFinding = {
  id: '3f9a1c0e5b7d2a4c6e8f0a1b',
  kind: 'orphaned_marker' as const,
  check: 'public_id_marker' as const,
  workspace_id: '6a1d3b2e-9c1f-4a57-8e0b-2f4c8d1e7a90',
  entity: { type: 'public_id', id: 'roads' },
  detail:
    "The public id 'roads' is held for layer 2b7e4f60-1c3d-4e5f-8a9b-0c1d2e3f4a5b, which does not exist.",
  repair: 'Frees the public id (deletes the marker while it still names that target).',
  repairable: true,
};
const exampleReport = {
  checked_at: '2026-11-28T12:00:00.000Z',
  workspace_id: '6a1d3b2e-9c1f-4a57-8e0b-2f4c8d1e7a90',
  complete: true,
  counts: { workspaces: 1, items: 38, layers_probed: 2, import_schemas: 0 },
  findings: [exampleFinding],
  unchecked: [
    {
      check: 'role_refs' as const,
      reason: 'needs the whole catalog (every workspace’s mappings, layers and imports)',
    },
    {
      check: 'import_schema' as const,
      reason: 'needs the whole catalog (every workspace’s mappings, layers and imports)',
    },
  ],
};

const what =
  'Dangling references (layers of missing services, styles or roles; mappings to missing roles; group members), orphaned markers (service names, public ids, claim mappings; a workspace name unclaimed), counters that disagree with the items (workspace summary, service layer counts, styles’ and roles’ reference counts, claim mapping counts; a workspace’s tile cache usage against the tiles its store holds), enabled layers whose source table is gone, and import schemas without their job.';

export const getCatalogIntegrity = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getCatalogIntegrity',
    method: 'GET',
    path: '/api/v1/catalog/integrity',
    handler: 'functions/catalog/get-catalog-integrity.ts',
    permission: 'global',
    summary: 'Check the catalog’s integrity (nothing is changed)',
    description: `${what} Reads every workspace's partition once (strongly consistent) and each service's database once, within a 20 s budget: a catalog too big for it answers \`complete: false\` and lists what it did not read — check one workspace at a time with \`workspace\`. What could not be looked at (a database that is down, a disabled service) is listed under \`unchecked\`, never reported as damage. Roles' counts and import schemas are checked only over the whole catalog. super_admin only (ADR 0138).`,
    tags: ['catalog'],
    request: { query: z.strictObject(Scope) },
    responses: {
      200: { description: 'what the check found', schema: IntegrityReport },
      400: { description: 'a malformed workspace' },
      404: { description: 'workspace not found' },
    },
    examples: { query: { workspace: 'roads-demo' }, response: exampleReport },
    data: ['Query', 'GetItem'],
    secrets: ['decrypt'],
    importDatabase: true,
    postgres: true,
    listsTileStore: true,
  }),
);

export const repairCatalogIntegrity = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'repairCatalogIntegrity',
    method: 'POST',
    path: '/api/v1/catalog/integrity/repair',
    handler: 'functions/catalog/repair-catalog-integrity.ts',
    permission: 'global',
    summary: 'Repair what the integrity check finds (a dry run without confirm=true)',
    description:
      'Checks as getCatalogIntegrity does, then — only with `confirm=true` — repairs each repairable finding in a transaction conditioned on the damage still being as found (`changed_meanwhile` otherwise: check again). Without `confirm` it changes nothing and says what it would repair. References and markers are repaired first; when any was, the catalog is checked again and counters are repaired from that second walk. Findings whose repair would change who may read or sign in (a role in `allowed_roles`, a mapping to a missing role) or what a group draws are reported, never repaired. Every repair writes an audit record (`integrity_repair`, naming the check and the items it changed) and so a catalog event. A confirmed repair of the whole catalog needs a complete check (409 `integrity_check_incomplete` otherwise: repair one workspace at a time). super_admin only (ADR 0138).',
    tags: ['catalog'],
    request: {
      query: z.strictObject({
        ...Scope,
        confirm: z
          .optional(
            z.pipe(
              z.string().check(z.regex(/^(true|false)$/, 'confirm must be true or false')),
              z.transform((v: string) => v === 'true'),
            ),
          )
          .check(
            z.meta({ description: '`true` repairs; absent or `false` is a dry run that changes nothing.' }),
          ),
      }),
    },
    responses: {
      200: { description: 'the repairs (or, without confirm, what would be repaired)', schema: RepairReport },
      400: { description: 'a malformed workspace or confirm' },
      404: { description: 'workspace not found' },
      409: { description: 'the whole-catalog check did not finish within its budget' },
    },
    examples: {
      query: { workspace: 'roads-demo', confirm: 'true' },
      response: {
        dry_run: false,
        report: exampleReport,
        repairs: [{ finding_id: exampleFinding.id, check: 'public_id_marker', outcome: 'repaired' }],
      },
    },
    data: ['Query', 'GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem', 'PutAuditRecord'],
    secrets: ['decrypt'],
    importDatabase: true,
    postgres: true,
    listsTileStore: true,
  }),
);
