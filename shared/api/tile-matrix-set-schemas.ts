/** Schemas of tile matrix sets (OGC Two Dimensional Tile Matrix Set 2.0). */
import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { DateTime, Name, Sha256Hex } from './schemas.ts';

/** A tile matrix set id (the path parameter and `id` of the definition): a name (DESIGN §5). */
export const TileMatrixSetId = Name;

const Text = (max: number) => z.string().check(z.maxLength(max));
const Crs = /* @__PURE__ */ shakable(() =>
  z.union([
    z.string().check(z.minLength(1), z.maxLength(256)),
    z.strictObject({ uri: z.string().check(z.minLength(1), z.maxLength(256)) }),
  ]),
);
const Point = /* @__PURE__ */ shakable(() => z.tuple([z.number(), z.number()]));
const Positive = /* @__PURE__ */ shakable(() => z.number().check(z.positive()));
const PositiveInt = /* @__PURE__ */ shakable(() => z.int().check(z.positive(), z.maximum(2 ** 31 - 1)));

export const TileMatrixSchema = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z
        .string()
        .check(z.regex(/^(0|[1-9][0-9]{0,5})$/, { error: 'must be a canonical non-negative integer' })),
      title: z.optional(Text(256)),
      description: z.optional(Text(4096)),
      scaleDenominator: Positive,
      cellSize: Positive,
      cornerOfOrigin: z.optional(z.enum(['topLeft', 'bottomLeft'])),
      pointOfOrigin: Point,
      tileWidth: PositiveInt,
      tileHeight: PositiveInt,
      matrixWidth: PositiveInt,
      matrixHeight: PositiveInt,
    })
    .check(z.meta({ id: 'TileMatrix' })),
);

/** An OGC Two Dimensional Tile Matrix Set 2.0 definition. */
export const TileMatrixSetDefinition = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: TileMatrixSetId,
      title: z.optional(Text(256)),
      description: z.optional(Text(4096)),
      keywords: z.optional(z.array(Text(128)).check(z.maxLength(32))),
      uri: z.optional(Text(1024)),
      crs: Crs,
      orderedAxes: z.optional(z.array(Text(16)).check(z.minLength(2), z.maxLength(2))),
      wellKnownScaleSet: z.optional(Text(1024)),
      boundingBox: z.optional(
        z.strictObject({
          crs: z.optional(Crs),
          lowerCorner: Point,
          upperCorner: Point,
          orderedAxes: z.optional(z.array(Text(16)).check(z.minLength(2), z.maxLength(2))),
        }),
      ),
      tileMatrices: z.array(TileMatrixSchema).check(z.minLength(1), z.maxLength(64)),
    })
    .check(z.meta({ id: 'TileMatrixSetDefinition' })),
);

export const TileMatrixSetRecord = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z.string(),
      built_in: z.boolean(),
      definition: TileMatrixSetDefinition,
      revision: z.int(),
      digest: Sha256Hex,
      created_at: z.optional(DateTime),
      updated_at: z.optional(DateTime),
    })
    .check(
      z.meta({ id: 'TileMatrixSetRecord', description: 'Built-ins have revision 0 and no timestamps.' }),
    ),
);

export const TileMatrixSetSummary = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      id: z.string(),
      title: z.optional(z.string()),
      uri: z.optional(z.string()),
      crs: z.string(),
      built_in: z.boolean(),
    })
    .check(z.meta({ id: 'TileMatrixSetSummary' })),
);
