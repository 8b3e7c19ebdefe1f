/** Schemas of styles and style assets. */
import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { assetContentTypes } from '#domain/style-assets.ts';
import { MAX_STYLE_TEXT_BYTES } from '#domain/styles.ts';
import { DateTime, Name, Sha256Hex, Uuid } from './schemas.ts';

/** Largest style request body (413 above it): the style must fit one DynamoDB item (ADR 0052, 0073). */
export const MAX_STYLE_BODY_BYTES = MAX_STYLE_TEXT_BYTES;

export const StyleFormat = /* @__PURE__ */ shakable(() =>
  z.enum(['sld_1.0.0', 'sld_1.1.0', 'se_1.1.0', 'mapbox']),
);

export const StyleInput = /* @__PURE__ */ shakable(() =>
  z.strictObject({
    name: Name,
    format: StyleFormat,
    body: z.union([
      z.string().check(z.minLength(1), z.maxLength(MAX_STYLE_BODY_BYTES)),
      z.record(z.string(), z.unknown()),
    ]),
    title: z.optional(z.string().check(z.maxLength(256))),
    description: z.optional(z.string().check(z.maxLength(4096))),
  }),
);

const styleFields = /* @__PURE__ */ shakable(() => ({
  id: Uuid,
  workspace_id: Uuid,
  name: z.string(),
  format: StyleFormat,
  title: z.optional(z.string()),
  description: z.optional(z.string()),
  asset_refs: z.array(z.string()),
  version: z.int(),
  created_at: DateTime,
  updated_at: DateTime,
}));

export const StyleSummary = /* @__PURE__ */ shakable(() =>
  z.strictObject(styleFields).check(z.meta({ id: 'StyleSummary' })),
);

export const StyleBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      ...styleFields,
      body: z.union([z.string(), z.record(z.string(), z.unknown())]),
    })
    .check(
      z.meta({
        id: 'Style',
        description: 'A style with its body: SLD/SE as XML text, Mapbox/MapLibre as a JSON object.',
      }),
    ),
);

export const StyleAssetBody = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: Uuid,
      workspace_id: Uuid,
      name: z.string(),
      content_type: z.enum(assetContentTypes),
      size_bytes: z.int(),
      sha256: Sha256Hex,
      version: z.int(),
      created_at: DateTime,
      updated_at: DateTime,
    })
    .check(z.meta({ id: 'StyleAsset' })),
);
