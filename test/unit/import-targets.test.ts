import { describe, expect, it } from 'vitest';
import type { ImportJob } from '#domain/import-model.ts';
import { defaultPlan, planWithNames, validatePlan } from '#domain/import-plans.ts';
import type { Discovery, SourceLayer } from '#domain/import-sources.ts';
import { outcomeNote, resolveTargets, type TargetLookups, targetLayerPlan } from '#domain/import-targets.ts';
import type { Layer } from '#domain/layers.ts';
import { layerEntries } from '../../cli/commands/import.ts';
import { barrier } from '../support/barrier.ts';

const hex = '0123456789abcdef0123456789abcdef';
const ownerId = '01234567-89ab-cdef-0123-456789abcdef';

const source: SourceLayer = {
  name: 'points',
  fields: [
    { name: 'Name', type: 'text' },
    { name: 'rank', type: 'integer' },
    { name: 'extra', type: 'double precision' },
  ],
  geometry_type: 'Point',
  srid: 4326,
  feature_count: 10,
  bbox: null,
};
const discovery: Discovery = { format: 'geojson', size_bytes: 100, layers: [source], warnings: [] };

const layer = {
  id: 'layer-1',
  workspace_id: 'ws',
  service_id: 'svc',
  source_layer: `import_${hex}.points`,
  public_id: 'points',
  is_sql_view: false,
} as Layer;

const owner = {
  id: ownerId,
  status: 'published',
  service_id: 'svc',
  plan: {
    layers: [
      {
        source_layer: 'points',
        public_id: 'points',
        enabled: true,
        public: false,
        geometry_column: 'geom',
        fields: [
          { source: 'Name', target: 'name', include: true },
          { source: 'rank', target: 'rank', type: 'integer', include: true },
          { source: 'dropped', target: 'dropped', include: false },
        ],
      },
    ],
  },
  discovery: {
    ...discovery,
    layers: [{ ...source, fields: [...source.fields, { name: 'dropped', type: 'text' }] }],
  },
} as unknown as ImportJob;

function lookups(over: { layer?: Layer; owner?: ImportJob | undefined } = {}): TargetLookups {
  const target = over.layer ?? layer;
  const job = 'owner' in over ? over.owner : owner;
  return {
    layers: {
      findPublicId: async (_ws, id) =>
        id === target.public_id
          ? { kind: 'layer', target_id: target.id, service_id: target.service_id, member_of_count: 0 }
          : undefined,
      find: async (_ws, service, id) =>
        service === target.service_id && id === target.id ? target : undefined,
    },
    services: { list: async () => ({ items: [{ id: 'svc' } as never], nextCursor: undefined }) },
    repo: { findByService: async () => job },
  };
}

describe('resolveTargets (ADR 0127)', () => {
  it('maps the fields whose column the layer has, with its types, and says which were left out', async () => {
    const out = await resolveTargets(
      lookups(),
      'ws',
      [
        {
          source_layer: 'points',
          enabled: true,
          public: false,
          target: { layer: 'points', mode: 'replace' },
        },
      ],
      discovery,
    );
    expect(out.layers[0]).toMatchObject({
      public_id: 'points',
      geometry_column: 'geom',
      target: { layer: 'layer-1', mode: 'replace' },
      fields: [
        { source: 'Name', target: 'name', type: 'text', include: true },
        { source: 'rank', target: 'rank', type: 'integer', include: true },
        { source: 'extra', target: 'extra', include: false },
      ],
    });
    expect(out.notes).toEqual(["Field 'extra' of 'points' has no column in layer 'points': left out."]);
    // The made plan passes the plan check as any plan.
    expect(() => validatePlan({ layers: out.layers as never }, discovery)).not.toThrow();
  });

  it("a target named at creation takes the layer's name and columns, not the file layer's", async () => {
    const named = planWithNames(defaultPlan({ ...discovery, layers: [{ ...source, name: 'more' }] }), [
      { target: { layer: 'points', mode: 'append' } },
    ]);
    expect(named.plan.layers[0]).not.toHaveProperty('public_id');
    expect(named.plan.layers[0]).not.toHaveProperty('fields');
    const out = await resolveTargets(lookups(), 'ws', named.plan.layers, {
      ...discovery,
      layers: [{ ...source, name: 'more' }],
    });
    expect(out.layers[0]).toMatchObject({
      source_layer: 'more',
      public_id: 'points',
      target: { layer: 'layer-1' },
    });
  });

  it('finds a layer by id as well as by public id', async () => {
    const out = await resolveTargets(
      lookups(),
      'ws',
      [
        {
          source_layer: 'points',
          enabled: true,
          public: false,
          target: { layer: 'layer-1', mode: 'append' },
        },
      ],
      discovery,
    );
    expect(out.layers[0]?.target).toEqual({ layer: 'layer-1', mode: 'append' });
  });

  it.each([
    ['a missing layer', { layer: { ...layer, public_id: 'other', id: 'x' } }, /has no layer 'points'/],
    [
      'a layer on another database',
      { layer: { ...layer, source_layer: 'public.places' } },
      /not published by an import/,
    ],
    ['a SQL view', { layer: { ...layer, is_sql_view: true } }, /not published by an import/],
    [
      'an import that is not published',
      { owner: { ...owner, status: 'rolling_back' } as ImportJob },
      /not published by an import/,
    ],
    ['a layer whose service no import owns', { owner: undefined }, /not published by an import/],
    [
      'a schema of another import',
      { owner: { ...owner, id: '11111111-89ab-cdef-0123-456789abcdef' } as ImportJob },
      /not published by an import/,
    ],
  ])('refuses %s (422 import_target_invalid)', async (_what, over, message) => {
    const refused = resolveTargets(
      lookups(over as never),
      'ws',
      [
        {
          source_layer: 'points',
          enabled: true,
          public: false,
          target: { layer: 'points', mode: 'replace' },
        },
      ],
      discovery,
    );
    await expect(refused).rejects.toMatchObject({
      name: 'RuleViolationError',
      reason: 'import_target_invalid',
    });
    await expect(refused).rejects.toThrow(message);
  });

  it('two plan layers can not target one layer', async () => {
    const two: Discovery = { ...discovery, layers: [source, { ...source, name: 'more' }] };
    const refused = resolveTargets(
      lookups(),
      'ws',
      [
        { source_layer: 'points', enabled: true, public: false, target: { layer: 'points', mode: 'append' } },
        { source_layer: 'more', enabled: true, public: false, target: { layer: 'layer-1', mode: 'append' } },
      ],
      two,
    );
    await expect(refused).rejects.toThrow(/layers\[0\] already targets layer 'points'/);
  });
});

describe("a plan's targets are looked up together (issue #27)", () => {
  const three: Discovery = {
    ...discovery,
    layers: ['a', 'b', 'c'].map((name) => ({ ...source, name })),
  };
  const targeting = (...refs: string[]) =>
    refs.map((ref, i) => ({
      source_layer: three.layers[i]?.name as string,
      enabled: true,
      public: false,
      target: { layer: ref, mode: 'append' as const },
    }));
  const layerNamed = (ref: string) => ({
    ...layer,
    id: `id-${ref}`,
    public_id: ref,
    source_layer: `import_${hex}.${ref}`,
  });

  it('looks every target up in one round', async () => {
    const round = barrier(3);
    const base = lookups();
    const deps: TargetLookups = {
      ...base,
      layers: {
        findPublicId: async (_ws, ref) => {
          await round.wait();
          return { kind: 'layer', target_id: `id-${ref}`, service_id: 'svc', member_of_count: 0 };
        },
        find: async (_ws, _service, id) => layerNamed(id.slice(3)),
      },
      repo: {
        findByService: async () =>
          ({
            ...owner,
            plan: {
              layers: ['a', 'b', 'c'].map((n) => ({
                ...owner.plan?.layers[0],
                source_layer: n,
                public_id: n,
              })),
            },
            discovery: three,
          }) as unknown as ImportJob,
      },
    };

    const out = await resolveTargets(deps, 'ws', targeting('a', 'b', 'c'), three);

    expect(round.started()).toBe(3);
    expect(out.layers.map((l) => l.public_id)).toEqual(['a', 'b', 'c']);
  }, 2_000);

  it("names the first layer's refusal when several are refused, whichever lookup answered first", async () => {
    const deps: TargetLookups = {
      ...lookups(),
      layers: {
        // The first layer's lookup answers last.
        findPublicId: async (_ws, ref) => {
          await new Promise((resolve) => setTimeout(resolve, ref === 'a' ? 30 : 1));
          return undefined;
        },
        find: async () => undefined,
      },
      services: { list: async () => ({ items: [], nextCursor: undefined }) },
    };

    await expect(resolveTargets(deps, 'ws', targeting('a', 'b'), three)).rejects.toThrow(
      /^layers\[0\]: the workspace has no layer 'a'/,
    );
  });

  it("finds a layer by id by asking a page's services together", async () => {
    const round = barrier(3);
    const base = lookups();
    const deps: TargetLookups = {
      ...base,
      layers: {
        findPublicId: async () => undefined,
        find: async (_ws, service, id) => {
          await round.wait();
          return service === 'svc' && id === layer.id ? layer : undefined;
        },
      },
      services: {
        list: async () => ({
          items: [{ id: 'other-1' }, { id: 'other-2' }, { id: 'svc' }] as never,
          nextCursor: undefined,
        }),
      },
    };

    const out = await resolveTargets(
      deps,
      'ws',
      targeting('layer-1').map((l) => ({ ...l, source_layer: 'points' })),
      discovery,
    );

    expect(round.started()).toBe(3);
    expect(out.layers[0]?.target).toEqual({ layer: 'layer-1', mode: 'append' });
  }, 2_000);
});

describe('targetLayerPlan: explicit fields are checked column by column', () => {
  const resolved = {
    layer,
    relation: layer.source_layer,
    columns: new Map([
      ['name', 'text'],
      ['rank', 'integer'],
    ] as const),
    geometry_column: 'geom',
  };
  const base = {
    source_layer: 'points',
    enabled: true,
    public: false,
    target: { layer: 'points', mode: 'append' as const },
  };

  it.each([
    [
      [{ source: 'extra', target: 'score', include: true }],
      /has no column 'score'\. Its columns: name \(text\), rank \(integer\)/,
    ],
    [
      [{ source: 'extra', target: 'rank', include: true }],
      /column 'rank' of layer 'points' is integer, but field 'extra' is double precision/,
    ],
    [
      [{ source: 'Name', target: 'rank', type: 'text' as const, include: true }],
      /is integer, but field 'Name' is text/,
    ],
  ])('refuses %j', (fields, message) => {
    expect(() => targetLayerPlan({ ...base, fields }, resolved, source, 'layers[0]')).toThrow(message);
  });

  it('takes a field left out whatever its column, and a matching one', () => {
    const made = targetLayerPlan(
      {
        ...base,
        fields: [
          { source: 'rank', target: 'rank', include: true },
          { source: 'extra', target: 'nowhere', include: false },
        ],
      },
      resolved,
      source,
      'layers[0]',
    );
    expect(made.layer.fields).toHaveLength(2);
  });

  it('refuses a geometry where the layer has none, another geometry column and another public id', () => {
    const flat = { ...resolved, geometry_column: undefined };
    expect(() => targetLayerPlan(base, flat, source, 'l')).toThrow(
      /has geometries, but layer 'points' has none/,
    );
    expect(() => targetLayerPlan({ ...base, geometry_column: 'shape' }, resolved, source, 'l')).toThrow(
      /geometry_column 'shape'/,
    );
    expect(() => targetLayerPlan({ ...base, public_id: 'x' }, resolved, source, 'l')).toThrow(
      /leave public_id out/,
    );
  });
});

describe('history notes and the CLI flags', () => {
  it('say what a replace and an append did, and what their rollback undid', () => {
    expect(outcomeNote({ relation: 'r', mode: 'replace', rows: 120, previous_rows: 300 }, 'points')).toBe(
      "Layer 'points': its 300 rows were replaced by 120; the previous data is kept for a rollback.",
    );
    expect(
      outcomeNote(
        { relation: 'r', mode: 'append', rows: 170, previous_rows: 120, first_fid: 121, last_fid: 170 },
        'p',
      ),
    ).toBe("Layer 'p': 50 rows appended (fids 121–170; 170 rows now).");
    expect(
      outcomeNote(
        { relation: 'r', mode: 'append', rows: 120, previous_rows: 120, first_fid: 121, last_fid: 170 },
        'p',
        true,
      ),
    ).toBe("Layer 'p': the 50 appended rows were removed (120 rows now).");
  });

  it('--layer, --replace and --append become createImport layers; a source layer named twice is a usage error', () => {
    expect(layerEntries({ layer: ['roads', 'b=bridges'], append: ['c=parcels'] })).toEqual([
      { public_id: 'roads' },
      { source_layer: 'b', public_id: 'bridges' },
      { source_layer: 'c', target: { layer: 'parcels', mode: 'append' } },
    ]);
    expect(layerEntries({ replace: ['points'] })).toEqual([{ target: { layer: 'points', mode: 'replace' } }]);
    expect(() => layerEntries({ layer: ['a'], replace: ['b'] })).toThrow(/first layer is named twice/);
    expect(() => layerEntries({ layer: ['=x'] })).toThrow(/give NAME or SOURCE_LAYER=NAME/);
    expect(() => layerEntries({ append: ['src='] })).toThrow(/give NAME or SOURCE_LAYER=NAME/);
  });
});
