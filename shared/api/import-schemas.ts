import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { NAME_PATTERN, NAME_RULE } from '#domain/identifiers.ts';
import { FIELD_TYPES, type FieldType } from '#domain/import-sources.ts';
import { IMPORT_PHASES, IMPORT_STATUSES, type ImportPhase, type ImportStatus } from '#domain/imports.ts';
import { DateTime, Name, Uuid } from './schemas.ts';

export const ImportStatusEnum = /* @__PURE__ */ shakable(() =>
  z.enum(IMPORT_STATUSES as readonly ImportStatus[] as [ImportStatus, ...ImportStatus[]]),
);
const Phase = /* @__PURE__ */ shakable(() =>
  z.enum(IMPORT_PHASES as readonly ImportPhase[] as [ImportPhase, ...ImportPhase[]]),
);
const Srid = /* @__PURE__ */ shakable(() => z.int().check(z.minimum(1), z.maximum(998999)));
const Column = /* @__PURE__ */ shakable(() => z.string().check(z.minLength(1), z.maxLength(63)));
const FieldTypeEnum = /* @__PURE__ */ shakable(() =>
  z.enum(FIELD_TYPES as readonly FieldType[] as [FieldType, ...FieldType[]]),
);
const PublicId = /* @__PURE__ */ shakable(() =>
  z.string().check(z.minLength(1), z.maxLength(64), z.regex(NAME_PATTERN, { error: NAME_RULE })),
);
const Target = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      layer: z.string().check(z.minLength(1), z.maxLength(64)),
      mode: z.enum(['replace', 'append']),
    })
    .check(
      z.meta({
        id: 'ImportTarget',
        description:
          "An existing layer (public id or id) whose data this file's layer replaces or appends to, instead of publishing a new layer (ADR 0127). Only layers an import published can be targets; the file's fields must map to the layer's columns, type for type. The layer keeps its id, public id, styles, groups, policies and URLs. The swap is one transaction; rolling the import back restores the previous data (replace) or removes exactly the appended rows (append).",
      }),
    ),
);
const Encoding = /* @__PURE__ */ shakable(() =>
  z.string().check(
    z.minLength(1),
    z.maxLength(40),
    z.regex(/^[A-Za-z0-9._:-]+$/),
    z.meta({
      description:
        "Shapefile only: the code page of the .dbf's text (e.g. 'windows-1252', 'iso-8859-2', 'utf-8'), over the .cpg file and the .dbf's language driver byte.",
    }),
  ),
);
const CsvGeometry = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    lat: z.optional(Column),
    lon: z.optional(Column),
    wkt: z.optional(Column),
  }),
);

/** Body of createImport. */
export const CreateImportInput = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    name: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
    source: z.discriminatedUnion('kind', [
      z.strictObject({
        kind: z.literal('upload'),
        filename: z
          .string()
          .check(
            z.minLength(1),
            z.maxLength(255),
            z.regex(/^[^/\\\0]+$/, { error: 'a file name, not a path' }),
          ),
        size_bytes: z.optional(z.int().check(z.minimum(0))),
      }),
      z.strictObject({
        kind: z.literal('uri'),
        uri: z.string().check(
          z.minLength(1),
          z.maxLength(2048),
          z.meta({
            description:
              "Where the file is: `s3://bucket/key` in a bucket the operator allows; an `https://` URL (ADR 0129) whose host is public or one the operator allows — plain http, credentials in the URL and private, loopback or link-local hosts (by address or by name) are a 400 `uri_not_allowed`; redirects are followed (at most 5, https only) and checked the same way, and the file is limited to the import's byte limit and a time limit; locally also a path under the import directory.",
          }),
        ),
      }),
    ]),
    service_name: z.optional(Name),
    layers: z.optional(
      z
        .array(
          z.strictObject({
            source_layer: z.optional(
              z
                .string()
                .check(
                  z.minLength(1),
                  z.maxLength(255),
                  z.meta({ description: "The file's layer (default: its first layer)." }),
                ),
            ),
            public_id: z.optional(PublicId),
            target: z.optional(Target),
          }),
        )
        .check(
          z.minLength(1),
          z.maxLength(100),
          z.meta({
            description:
              "The public ids to publish the file's layers as (the default plan takes them; other layers keep their discovered names), or a `target` layer to replace or append to (then no public_id). Discovery checks them, and service_name, against the workspace before loading: a name in use stops the import at `awaiting_plan` with `clashes` naming it and a free name proposed; with auto_publish the free name is taken and the history says so.",
          }),
        ),
    ),
    auto_publish: z.optional(z.boolean()),
  }),
);

const LayerPlanShape = /* @__PURE__ */ shakable(() => ({
  source_layer: z.string().check(z.minLength(1), z.maxLength(255)),
  public_id: z.string().check(z.minLength(1), z.maxLength(64)),
  title: z.optional(z.string().check(z.maxLength(255))),
  enabled: z._default(z.boolean(), true),
  public: z._default(z.boolean(), false),
  allowed_roles: z.optional(
    z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(50)),
  ),
  geometry_column: z.optional(Column),
  source_srid: z.optional(Srid),
  target_srid: z.optional(Srid),
  make_valid: z.optional(z.boolean()),
  csv: z.optional(CsvGeometry),
  encoding: z.optional(Encoding),
  target: z.optional(Target),
}));
const PlanFields = /* @__PURE__ */ shakable(() =>
  z
    .array(
      z.strictObject({
        source: z.string().check(z.minLength(1), z.maxLength(255)),
        target: Column,
        type: z.optional(FieldTypeEnum),
        include: z._default(z.boolean(), true),
      }),
    )
    .check(z.maxLength(1600)),
);

/** A layer of a stored plan (fields filled in). */
export const LayerPlanBody = /* @__PURE__ */ shakable(() =>
  z.strictObject({ ...LayerPlanShape, fields: PlanFields }),
);

/** The plan as the import holds it. */
export const ImportPlanBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ layers: z.array(LayerPlanBody).check(z.minLength(1), z.maxLength(100)) })
    .check(z.meta({ id: 'ImportPlan' })),
);

/** Body of setImportPlan: layers may leave `fields` out ("as discovered"); the service may be renamed. */
export const ImportPlanInputBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      service_name: z.optional(
        Name.check(
          z.meta({ description: 'The name of the service the publish creates (default: as created).' }),
        ),
      ),
      layers: z
        .array(
          z.strictObject({
            ...LayerPlanShape,
            public_id: z.optional(
              LayerPlanShape.public_id.check(
                z.meta({
                  description: 'Required, except for a layer with a `target` (it keeps its public id).',
                }),
              ),
            ),
            fields: z.optional(
              PlanFields.check(
                z.meta({
                  description:
                    "Omitted: every field as discovered (the default plan's mapping); geometry_column and csv likewise.",
                }),
              ),
            ),
          }),
        )
        .check(z.minLength(1), z.maxLength(100)),
    })
    .check(z.meta({ id: 'ImportPlanInput' })),
);

const NameClashBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      kind: z.enum(['public_id', 'service_name']),
      name: z.string(),
      proposed: z.string(),
      source_layer: z.optional(z.string()),
      renamed: z.optional(z.boolean()),
    })
    .check(
      z.meta({
        id: 'ImportNameClash',
        description:
          'A name the import would publish that the workspace already uses, with a free name proposed; `renamed`: auto_publish took the proposal.',
      }),
    ),
);

const DiscoveryBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      format: z.string(),
      size_bytes: z.int(),
      layers: z.array(
        z.object({
          name: z.string(),
          fields: z.array(z.object({ name: z.string(), type: z.string() })),
          geometry_type: z.nullable(z.string()),
          srid: z.nullable(z.int()),
          feature_count: z.int(),
          bbox: z.nullable(z.array(z.number())),
          csv: z.optional(CsvGeometry),
        }),
      ),
      warnings: z.array(z.string()),
    })
    .check(z.meta({ id: 'ImportDiscovery' })),
);

export const ImportJobBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      id: Uuid,
      workspace_id: z.string(),
      name: z.string(),
      source_kind: z.enum(['upload', 'uri']),
      source_filename: z.optional(z.string()),
      source_uri: z.optional(z.string()),
      status: ImportStatusEnum,
      phase: Phase,
      plan: z.optional(ImportPlanBody),
      discovery: z.optional(DiscoveryBody),
      service_name: z.string(),
      requested_layers: z.optional(
        z.array(
          z.object({
            source_layer: z.optional(z.string()),
            public_id: z.optional(z.string()),
            target: z.optional(Target),
          }),
        ),
      ),
      clashes: z.optional(z.array(NameClashBody)),
      service_id: z.optional(z.string()),
      rollback_operation_id: z.optional(z.string()),
      rollback_until: z.optional(
        DateTime.check(
          z.meta({
            description:
              "An import that replaced a layer's data: until when the previous data is kept, so a rollback can restore it (ADR 0127).",
          }),
        ),
      ),
      auto_publish: z.boolean(),
      processed_bytes: z.int(),
      processed_features: z.int(),
      processed_layers: z.int(),
      total_layers: z.int(),
      retry_count: z.int(),
      warnings: z.optional(z.array(z.string())),
      error_message: z.optional(
        z.string().check(
          z.meta({
            description: 'Why the import failed, for a user: never an internal detail of the service.',
          }),
        ),
      ),
      error_reason: z.optional(
        z.string().check(
          z.meta({
            description:
              'Stable snake_case code of the failure: a problem of the file or plan (malformed_json, invalid_plan, import_row_limit, workspace_import_quota, …), or of the service (import_database_unavailable, internal_error, …).',
          }),
        ),
      ),
      upload: z.optional(
        z.object({
          url: z.string(),
          method: z.literal('POST'),
          fields: z.record(z.string(), z.string()),
          file_field: z.literal('file'),
          expires_at: DateTime,
          max_bytes: z.int(),
        }),
      ),
      version: z
        .int()
        .check(
          z.meta({ description: 'Bumped on every transition; the ETag (If-Match on plan and cancel).' }),
        ),
      created_by: z.string(),
      created_at: DateTime,
      updated_at: DateTime,
      started_at: z.optional(DateTime),
      completed_at: z.optional(DateTime),
    })
    .check(z.meta({ id: 'ImportJob' })),
);

export const ImportEventBody = /* @__PURE__ */ shakable(() =>
  z
    .object({
      id: z.string(),
      import_id: Uuid,
      status: ImportStatusEnum,
      phase: Phase,
      created_at: DateTime,
      processed_bytes: z.int(),
      processed_features: z.int(),
      processed_layers: z.int(),
      warnings: z.optional(z.array(z.string())),
      clashes: z.optional(z.array(NameClashBody)),
      error_message: z.optional(z.string()),
      error_reason: z.optional(z.string()),
    })
    .check(z.meta({ id: 'ImportEvent' })),
);

export const ImportHistoryBody = /* @__PURE__ */ shakable(() =>
  z
    .object({ events: z.array(ImportEventBody), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'ImportHistory' })),
);

export const ImportList = /* @__PURE__ */ shakable(() =>
  z
    .object({ imports: z.array(ImportJobBody), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'ImportList' })),
);

export const FeatureCollectionBody = /* @__PURE__ */ shakable(() =>
  z
    .object({ type: z.literal('FeatureCollection'), features: z.array(z.unknown()) })
    .check(z.meta({ id: 'FeatureCollection' })),
);
