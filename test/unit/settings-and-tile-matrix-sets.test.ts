import { describe, expect, it } from 'vitest';
import {
  OGCTilesSettingsSchema,
  WCSSettingsSchema,
  WFSSettingsSchema,
  WMTSSettingsSchema,
} from '#api/settings-schemas.ts';
import { TileMatrixSetDefinition } from '#api/tile-matrix-set-schemas.ts';
import { InvalidInputError, RuleViolationError } from '#domain/errors.ts';
import { customTileMatrixSets, defaultSettings, validateSettings } from '#domain/settings.ts';
import {
  builtInTileMatrixSets,
  canonicalJson,
  digestOf,
  isBuiltInTileMatrixSet,
  type TileMatrixSetRecord,
  tileMatrixSetsNamed,
  validateDefinition,
} from '#domain/tile-matrix-sets.ts';
import { barrier } from '../support/barrier.ts';

describe('tile matrix sets', () => {
  it('ships built-ins that pass their own schema and validation', () => {
    expect(builtInTileMatrixSets().map((s) => s.id)).toEqual(['WebMercatorQuad', 'WorldCRS84Quad']);
    for (const s of builtInTileMatrixSets()) {
      expect(TileMatrixSetDefinition.safeParse(s.definition).success).toBe(true);
      expect(() => validateDefinition(s.id, s.definition)).not.toThrow();
    }
    // The ids a request checks without building the sets are theirs, and nothing else is built in.
    for (const s of builtInTileMatrixSets()) expect(isBuiltInTileMatrixSet(s.id)).toBe(true);
    expect(isBuiltInTileMatrixSet('webmercatorquad')).toBe(false);
    expect(builtInTileMatrixSets()).toBe(builtInTileMatrixSets());
    const [mercator, crs84] = builtInTileMatrixSets();
    expect(mercator?.definition.tileMatrices).toHaveLength(25);
    expect(crs84?.definition.tileMatrices[0]).toMatchObject({ matrixWidth: 2, matrixHeight: 1 });
  });

  it('digests canonical JSON, independent of key order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    const def = builtInTileMatrixSets()[0]?.definition;
    if (!def) throw new Error('no built-in');
    const reordered = Object.fromEntries(Object.entries(def).reverse()) as typeof def;
    expect(digestOf(reordered)).toBe(digestOf(def));
  });

  it('refuses an id mismatch (400), an unknown CRS and duplicate matrix ids (422)', () => {
    const def = structuredClone(builtInTileMatrixSets()[0]?.definition);
    if (!def) throw new Error('no built-in');
    expect(() => validateDefinition('Other', def)).toThrow(InvalidInputError);
    expect(() => validateDefinition(def.id, { ...def, crs: 'EPSG:3857' })).toThrow(RuleViolationError);
    const dup = { ...def, tileMatrices: [def.tileMatrices[0], def.tileMatrices[0]] } as typeof def;
    expect(() => validateDefinition(def.id, dup)).toThrow(RuleViolationError);
    expect(() =>
      validateDefinition(def.id, { ...def, crs: { uri: 'urn:ogc:def:crs:EPSG::3857' } }),
    ).not.toThrow();
  });
});

describe('settings', () => {
  it('has defaults that pass their own schemas and rules', () => {
    expect(OGCTilesSettingsSchema.safeParse(defaultSettings['ogc-tiles']).success).toBe(true);
    expect(() => validateSettings('ogc-tiles', defaultSettings['ogc-tiles'])).not.toThrow();
    expect(() => validateSettings('wms', defaultSettings.wms)).not.toThrow();
    expect(() => validateSettings('ogcapi', defaultSettings.ogcapi)).not.toThrow();
    for (const [kind, schema] of [
      ['wfs', WFSSettingsSchema],
      ['wcs', WCSSettingsSchema],
      ['wmts', WMTSSettingsSchema],
    ] as const) {
      // The stored default is what the schema makes of it (no field the schema would add or drop).
      expect(schema.parse(defaultSettings[kind])).toEqual(defaultSettings[kind]);
      expect(() => validateSettings(kind, defaultSettings[kind])).not.toThrow();
    }
  });

  it('counts only custom tile matrix sets as references', () => {
    const doc = structuredClone(defaultSettings['ogc-tiles']);
    doc.settings.tile_matrix_sets = ['WebMercatorQuad', 'Mine', 'Mine', 'Other'];
    expect(customTileMatrixSets(doc)).toEqual(['Mine', 'Other']);
  });

  it.each([
    ['wms', { enabled: true, public: false, max_pixels: 4096 * 4096 + 1 }],
    ['wms', { enabled: true, public: false, extensions: ['z-order', 'z-order'] }],
    ['ogcapi', { enabled: true, public: false, limit_default: 11, limit_max: 10 }],
    ['wfs', { enabled: true, public: false, default_count: 11, max_features: 10 }],
    ['wfs', { enabled: true, public: false, count_timeout_ms: 10_001 }],
    ['wcs', { enabled: true, public: false, max_output_bytes: 10 * 1024 * 1024 + 1 }],
    ['wcs', { enabled: true, public: false, allowed_output_crs: ['EPSG:4326', 'EPSG:4326'] }],
  ] as const)('refuses %s %j', (kind, doc) => {
    expect(() => validateSettings(kind, doc as never)).toThrow(InvalidInputError);
  });
});

describe('tileMatrixSetsNamed (issue #27)', () => {
  it("reads the custom sets a workspace names in one round and keeps the settings' order", async () => {
    const ids = ['custom-a', 'WebMercatorQuad', 'custom-b', 'custom-c'];
    // Each read waits until the three custom reads have started: reads made in turn never get there.
    const round = barrier(3);
    const repo = {
      find: async (id: string) => {
        await round.wait();
        // The later ones answer first; the order must still be the settings'.
        await new Promise((resolve) => setTimeout(resolve, id === 'custom-a' ? 20 : 1));
        return id === 'custom-b' ? undefined : ({ id, built_in: false } as TileMatrixSetRecord);
      },
    };

    const sets = await tileMatrixSetsNamed(repo, ids);

    expect(round.started()).toBe(3);
    expect(sets.map((s) => s.id)).toEqual(['custom-a', 'WebMercatorQuad', 'custom-c']);
  }, 2_000);
});
