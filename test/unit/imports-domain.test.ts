import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportDatabase } from '#datasources/imports/database.ts';
import { StateConflictError, UnavailableError } from '#domain/errors.ts';
import {
  type ImportEvent,
  importExecutionName,
  importFailureOf,
  isEventWorthy,
  presentEvent,
  presentImport,
  publicErrorText,
  REASON_MARK,
  taskFailureOf,
  timeOrderedId,
} from '#domain/import-model.ts';
import {
  columnName,
  defaultPlan,
  generatedName,
  type ImportQuotas,
  importLimitRefusal,
  layersWithoutCrs,
  planFootprint,
  tableNameOf,
  validatePlan,
  workspaceQuotaRefusal,
} from '#domain/import-plans.ts';
import {
  type Discovery,
  ImportInputError,
  type LayerPlan,
  type SourceLayer,
} from '#domain/import-sources.ts';
import { advance, type ImportJob } from '#domain/imports.ts';
import { handleUpload } from '#infra/local/uploads.ts';
import { LocalUploads, verifyLocalUpload } from '#platform/import-uploads.ts';
import { formBody } from '../support/imports.ts';

const discovery: Discovery = {
  format: 'geojson',
  size_bytes: 100,
  warnings: [],
  layers: [
    {
      name: 'Roads 2024',
      fields: [
        { name: 'Name', type: 'text' },
        { name: 'name', type: 'text' },
        { name: '2lanes', type: 'integer' },
        { name: 'fid', type: 'bigint' },
      ],
      geometry_type: 'LineString',
      srid: null,
      feature_count: 3,
      bbox: [0, 0, 1, 1],
    },
    { name: 'roads_2024', fields: [], geometry_type: null, srid: null, feature_count: 1, bbox: null },
  ],
};

describe('import plans', () => {
  it('the default plan makes every name usable and unique', () => {
    const plan = defaultPlan(discovery);
    expect(plan.layers.map((l) => l.public_id)).toEqual(['Roads_2024', 'roads_2024_2']);
    expect(plan.layers[0]?.fields.map((f) => f.target)).toEqual(['name', 'name_2', 'f_2lanes', 'fid_2']);
    expect(plan.layers[1]?.geometry_column).toBeUndefined();
    expect(validatePlan(plan, discovery)).toBe(plan);
  });

  it('needs source_srid only where a layer with geometry has no CRS', () => {
    const plan = defaultPlan(discovery);
    expect(layersWithoutCrs(plan, discovery)).toEqual(['Roads 2024']);
    plan.layers[0] = { ...(plan.layers[0] as (typeof plan.layers)[0]), source_srid: 25832 };
    expect(layersWithoutCrs(plan, discovery)).toEqual([]);
  });

  const base = () => defaultPlan(discovery).layers[0] as ReturnType<typeof defaultPlan>['layers'][0];
  const refused: [string, unknown, RegExp][] = [
    ['an unknown layer', { layers: [{ ...base(), source_layer: 'nope' }] }, /no layer 'nope'/],
    [
      'an unknown field',
      { layers: [{ ...base(), fields: [{ source: 'x', target: 'x', include: true }] }] },
      /no field 'x'/,
    ],
    [
      'a field twice',
      {
        layers: [
          {
            ...base(),
            fields: [
              { source: 'Name', target: 'a', include: true },
              { source: 'Name', target: 'b', include: true },
            ],
          },
        ],
      },
      /listed twice/,
    ],
    [
      'a bad column name',
      { layers: [{ ...base(), fields: [{ source: 'Name', target: 'Bad Name', include: true }] }] },
      /not a valid column/,
    ],
    [
      'fid as a column',
      { layers: [{ ...base(), fields: [{ source: 'Name', target: 'fid', include: true }] }] },
      /target 'fid' is the loader's own column/,
    ],
    [
      'a target twice',
      {
        layers: [
          {
            ...base(),
            fields: [
              { source: 'Name', target: 'a', include: true },
              { source: 'name', target: 'a', include: true },
            ],
          },
        ],
      },
      /used twice/,
    ],
    [
      'the geometry column as a target',
      { layers: [{ ...base(), fields: [{ source: 'Name', target: 'geom', include: true }] }] },
      /used twice/,
    ],
    ['a bad public id', { layers: [{ ...base(), public_id: '-x' }] }, /public_id/],
    [
      'a public id twice',
      { layers: [base(), { ...base(), source_layer: 'roads_2024', fields: [] }] },
      /public_id 'Roads_2024' is used twice/,
    ],
    ['no layer', { layers: [] }, /at least one layer/],
    ['CSV columns on a GeoJSON layer', { layers: [{ ...base(), csv: { wkt: 'Name' } }] }, /CSV layers only/],
  ];
  for (const [title, plan, message] of refused) {
    it(`refuses ${title} (400 invalid_plan)`, () => {
      expect(() => validatePlan(plan as never, discovery)).toThrow(message);
      try {
        validatePlan(plan as never, discovery);
      } catch (error) {
        expect((error as { reason: string }).reason).toBe('invalid_plan');
      }
    });
  }

  it('excluded fields need no valid target', () => {
    const plan = {
      layers: [{ ...base(), fields: [{ source: 'Name', target: 'Not Valid', include: false }] }],
    };
    expect(validatePlan(plan, discovery).layers[0]?.fields).toHaveLength(1);
  });

  it('column names', () => {
    expect(columnName('Straßen-Name')).toBe('stra_en_name');
    expect(columnName('9')).toBe('f_9');
    expect(columnName('___')).toBe('field');
    expect(columnName('x'.repeat(80))).toHaveLength(63);
  });
});

describe('plan names as PostgreSQL takes them (ADR 0110)', () => {
  const layer = (
    name: string,
    fields: string[],
    geometry: SourceLayer['geometry_type'] = 'Point',
    features = 10,
  ): SourceLayer => ({
    name,
    fields: fields.map((f) => ({ name: f, type: 'text' as const })),
    geometry_type: geometry,
    srid: 4326,
    feature_count: features,
    bbox: null,
  });
  const file: Discovery = {
    format: 'shapefile',
    size_bytes: 1000,
    warnings: [],
    layers: [layer('roads', ['Name', 'kind']), layer('wells', ['depth']), layer('notes', ['text'], null)],
  };
  const planned = (source: string, over: Partial<LayerPlan> = {}): LayerPlan => ({
    source_layer: source,
    public_id: source,
    enabled: true,
    public: false,
    fields: [],
    ...over,
  });
  const refusal = (layers: LayerPlan[], discovery = file) => {
    try {
      validatePlan({ layers }, discovery);
    } catch (error) {
      return error as { reason: string; message: string };
    }
    return undefined;
  };

  it('refuses a source layer loaded twice, naming both plan layers', () => {
    const error = refusal([planned('roads'), planned('roads', { public_id: 'roads-again' })]);
    expect(error?.reason).toBe('invalid_plan');
    expect(error?.message).toMatch(/layers\[1\]: source layer 'roads' is already loaded by layers\[0\]/);
  });

  it.each(['xmin', 'xmax', 'cmin', 'cmax', 'ctid', 'tableoid', 'oid'])(
    'refuses the system column %s as a target or as the geometry column, naming the field',
    (system) => {
      const asField = refusal([
        planned('roads', { fields: [{ source: 'Name', target: system, include: true }] }),
      ]);
      expect(asField?.reason).toBe('invalid_plan');
      expect(asField?.message).toMatch(
        new RegExp(`layers\\[0\\]\\.fields\\[0\\]: target '${system}' is a PostgreSQL system column`),
      );
      const asGeometry = refusal([planned('roads', { geometry_column: system })]);
      expect(asGeometry?.message).toMatch(new RegExp(`layers\\[0\\]: geometry_column '${system}'`));
    },
  );

  it("refuses fid as the geometry column (the loader's own column)", () => {
    expect(refusal([planned('roads', { geometry_column: 'fid' })])?.message).toMatch(
      /geometry_column 'fid' is the loader's own column/,
    );
  });

  it('refuses public ids that give one table name (case, punctuation, the 63-byte cut), naming both', () => {
    const long = 'x'.repeat(63);
    for (const [a, b] of [
      ['A-b', 'a_b'],
      ['Roads', 'roads'],
      ['a.b', 'a-b'],
      [`${long}A`, `${long}B`],
      ['1a', '1A'],
    ]) {
      const error = refusal([planned('roads', { public_id: a }), planned('wells', { public_id: b })]);
      expect(error?.reason, `${a} / ${b}`).toBe('invalid_plan');
      expect(error?.message).toMatch(
        new RegExp(`clashes with public_id '${a}': both would be stored as table`),
      );
    }
  });

  it('accepts public ids whose tables differ, even where the old rule saw one (ab / ab_)', () => {
    expect(refusal([planned('roads', { public_id: 'ab' }), planned('wells', { public_id: 'ab_' })])).toBe(
      undefined,
    );
  });

  it("refuses a table named like an index PostgreSQL creates for another layer's table, in either order", () => {
    const cases: [LayerPlan, LayerPlan][] = [
      [planned('roads', { public_id: 'a' }), planned('wells', { public_id: 'a_pkey' })],
      [planned('roads', { public_id: 'a' }), planned('wells', { public_id: 'a_geom_idx' })],
      [planned('wells', { public_id: 'a_geom_idx' }), planned('roads', { public_id: 'a' })],
      [
        planned('roads', { public_id: 'a', geometry_column: 'shape' }),
        planned('wells', { public_id: 'a_shape_idx' }),
      ],
      [planned('roads', { public_id: 'A' }), planned('notes', { public_id: 'a_pkey1' })],
      [
        planned('roads', { public_id: 'x'.repeat(60), geometry_column: 'geomcolumnname' }),
        planned('wells', { public_id: `${'x'.repeat(44)}_geomcolumnname_idx` }),
      ],
    ];
    for (const [first, second] of cases) {
      const error = refusal([first, second]);
      expect(error?.reason, `${first.public_id} / ${second.public_id}`).toBe('invalid_plan');
      expect(error?.message).toMatch(/is the name PostgreSQL gives an index of table/);
    }
    // Without geometry there is no GiST index, so its name is free.
    expect(
      refusal([planned('notes', { public_id: 'a' }), planned('wells', { public_id: 'a_geom_idx' })]),
    ).toBe(undefined);
  });

  it('gives the index names PostgreSQL gives (makeObjectName, as measured on the embedded PostGIS)', () => {
    expect(generatedName('a', 'g', 'idx')).toBe('a_g_idx');
    expect(generatedName('a', undefined, 'pkey')).toBe('a_pkey');
    expect(generatedName('x'.repeat(60), undefined, 'pkey')).toBe(`${'x'.repeat(58)}_pkey`);
    expect(generatedName('x'.repeat(60), 'geomcolumnname', 'idx')).toBe(
      `${'x'.repeat(44)}_geomcolumnname_idx`,
    );
  });

  it('maps public ids to the very table names the import database uses', () => {
    const alphabet = 'aZ09_.-';
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    for (let n = 0; n < 2000; n++) {
      const length = 1 + Math.floor(random() * 66);
      let id = '';
      for (let i = 0; i < length; i++) id += alphabet[Math.floor(random() * alphabet.length)];
      expect(tableNameOf(id), id).toBe(ImportDatabase.tableName(id));
    }
  });

  it('refuses a layer with more columns than a PostgreSQL table holds', () => {
    const names = Array.from({ length: 1600 }, (_, i) => `f${i}`);
    const wide: Discovery = { ...file, layers: [layer('wide', names)] };
    const error = refusal(
      [planned('wide', { fields: names.map((n) => ({ source: n, target: n, include: true })) })],
      wide,
    );
    expect(error?.reason).toBe('invalid_plan');
    expect(error?.message).toMatch(/1602 columns; PostgreSQL takes at most 1600/);
  });

  it('suggests a default plan that passes the check: system columns renamed, index names avoided', () => {
    const discovery: Discovery = {
      ...file,
      layers: [
        layer('a', ['xmin', 'ymin', 'xmax', 'ymax', 'ctid', 'oid', 'fid', 'geom', 'tableoid']),
        layer('a_pkey', ['cmin']),
        layer('A', ['cmax']),
      ],
    };
    const plan = defaultPlan(discovery);
    const targets = plan.layers.flatMap((l) => l.fields.map((f) => f.target));
    for (const system of ['xmin', 'xmax', 'cmin', 'cmax', 'ctid', 'tableoid', 'oid', 'fid', 'geom'])
      expect(targets).not.toContain(system);
    expect(targets).toEqual(expect.arrayContaining(['ymin', 'ymax', 'xmin_2', 'ctid_2']));
    expect(plan.layers.map((l) => tableNameOf(l.public_id))).toEqual(['a', 'a_pkey_2', 'a_2']);
    expect(validatePlan(plan, discovery)).toBe(plan);
  });
});

describe('import limits and the workspace quota (ADR 0110)', () => {
  const quotas: ImportQuotas = {
    maxLayers: 2,
    maxRows: 100,
    maxBytes: 1000,
    workspaceMaxRows: 150,
    workspaceMaxBytes: 3000,
  };
  const discovery: Discovery = {
    format: 'geopackage',
    size_bytes: 800,
    warnings: [],
    layers: ['a', 'b', 'c'].map((name, i) => ({
      name,
      fields: [],
      geometry_type: null,
      srid: null,
      feature_count: 40 + i * 10,
      bbox: null,
    })),
  };
  const plan = (...names: string[]) => ({
    layers: names.map((n) => ({ source_layer: n, public_id: n, enabled: true, public: false, fields: [] })),
  });

  it("a plan's footprint: its layers, the features discovery counted in them, the file's bytes", () => {
    expect(planFootprint(plan('a', 'c'), discovery)).toEqual({ layers: 2, rows: 100, bytes: 800 });
  });

  it('refuses a plan over one import’s layers, rows or bytes with its own reason (422)', () => {
    const over = (f: { layers: number; rows: number; bytes: number }) => importLimitRefusal(f, quotas);
    expect(over({ layers: 2, rows: 100, bytes: 1000 })).toBeUndefined();
    expect(over({ layers: 3, rows: 1, bytes: 1 })).toMatchObject({
      name: 'RuleViolationError',
      reason: 'import_layer_limit',
      message: expect.stringMatching(/loads 3 layers; an import loads at most 2/),
    });
    expect(over({ layers: 1, rows: 101, bytes: 1 })?.reason).toBe('import_row_limit');
    expect(over({ layers: 1, rows: 1, bytes: 1001 })?.reason).toBe('import_byte_limit');
  });

  it("refuses a reservation that takes the workspace's imports past the quota, counting only what grows", () => {
    const none = { rows: 0, bytes: 0 };
    expect(
      workspaceQuotaRefusal({ rows: 100, bytes: 0 }, none, { rows: 50, bytes: 0 }, quotas),
    ).toBeUndefined();
    expect(
      workspaceQuotaRefusal({ rows: 110, bytes: 0 }, none, { rows: 50, bytes: 0 }, quotas),
    ).toMatchObject({
      name: 'RuleViolationError',
      reason: 'workspace_import_quota',
      message: expect.stringMatching(/hold 110 of its 150 import rows; this import needs 50/),
    });
    // The import's own reservation is part of the usage: a reload of the same size always passes.
    expect(
      workspaceQuotaRefusal({ rows: 200, bytes: 0 }, { rows: 50, bytes: 0 }, { rows: 50, bytes: 0 }, quotas),
    ).toBeUndefined();
    expect(
      workspaceQuotaRefusal({ rows: 150, bytes: 0 }, { rows: 50, bytes: 0 }, { rows: 51, bytes: 0 }, quotas)
        ?.reason,
    ).toBe('workspace_import_quota');
    expect(
      workspaceQuotaRefusal({ rows: 0, bytes: 2500 }, none, { rows: 1, bytes: 600 }, quotas)?.message,
    ).toMatch(/import bytes/);
  });
});

describe('what an import failure shows a user (ADR 0110)', () => {
  const internal = [
    '10.0.0.5',
    '5432',
    'geoplane_importer',
    'import_staging_0190f7a2000070008000000000000001',
    '/var/task',
    '/tmp/geoplane-shp-',
    'node_modules',
    'ECONNREFUSED',
    'db.internal',
  ];
  const leaks = (text: string) => internal.filter((part) => text.includes(part));

  it.each([
    [
      'The import database 10.0.0.5:5432/geoplane is unavailable: connect ECONNREFUSED 10.0.0.5:5432.',
      'The import database [address] is unavailable',
    ],
    ['password authentication failed for user "geoplane_importer"', 'for user [name]'],
    [
      "Source layer 'import_0190f7a2000070008000000000000001.roads' can't be read: permission denied for schema import_staging_0190f7a2000070008000000000000001",
      "Source layer 'roads'",
    ],
    [
      "The shapefile 'roads' cannot be read: ENOENT: no such file or directory, open '/tmp/geoplane-shp-x1/roads.dbf'",
      "open 'roads.dbf'",
    ],
    [
      'could not connect to db.internal:5432 (postgres://geoplane_importer:secret@db.internal:5432/gis)',
      '[address]',
    ],
    ['boom\n    at load (/var/task/index.mjs:1:2)\n    at node_modules/pg/lib/client.js:3:4', 'boom'],
  ])('publicErrorText takes internal details out of %j', (text, kept) => {
    const shown = publicErrorText(text);
    expect(leaks(shown)).toEqual([]);
    expect(shown).toContain(kept);
    expect(shown).not.toContain('secret');
  });

  it('publicErrorText leaves what names the file alone: features, lines, CRSs, layers, fields', () => {
    for (const text of [
      "Feature 12 of layer 'roads' has longitude 500000, outside the range of EPSG:4326 (longitude -180..180).",
      'Malformed CSV: Invalid Closing Quote at line 14.',
      "layers[1].fields[0]: target 'xmin' is a PostgreSQL system column.",
      'The zip entry "data/roads.shp" is a symbolic link; links are not accepted.',
    ])
      expect(publicErrorText(text)).toBe(text);
  });

  it('keeps a bad file’s message and code, and never an outage’s or an internal error’s text', () => {
    expect(importFailureOf(new ImportInputError('malformed_json', 'Malformed JSON in feature 3.'))).toEqual({
      reason: 'malformed_json',
      message: 'Malformed JSON in feature 3.',
    });
    const outage = importFailureOf(
      new UnavailableError(
        'import_database_unavailable',
        'The import database 10.0.0.5:5432/geoplane is down.',
      ),
    );
    expect(outage.reason).toBe('import_database_unavailable');
    expect(leaks(outage.message)).toEqual([]);
    expect(outage.detail).toContain('10.0.0.5:5432');
    const driver = importFailureOf(
      Object.assign(new Error('relation "import_staging_x.roads" does not exist'), { code: '42P01' }),
    );
    expect(driver).toMatchObject({ reason: 'internal_error' });
    expect(driver.message).not.toContain('relation');
    expect(
      importFailureOf(new StateConflictError('import_superseded', 'Run 3 was superseded by run 4.')).reason,
    ).toBe('import_superseded');
  });

  it("reads the recorder's {Error, Cause}: a carried reason, an outage, a timeout, else internal — never the cause's text", () => {
    const lambda = (type: string, message: string) =>
      JSON.stringify({ errorType: type, errorMessage: message, trace: ['at x (/var/task/index.mjs:1:1)'] });
    const carried = taskFailureOf({
      Error: 'TransientError',
      Cause: lambda('TransientError', `${REASON_MARK}import_database_unavailable`),
    });
    expect(carried.reason).toBe('import_database_unavailable');
    const raw = taskFailureOf({
      Error: 'TransientError',
      Cause: lambda(
        'TransientError',
        'The import database 10.0.0.5:5432/geoplane is unavailable: connect ECONNREFUSED',
      ),
    });
    expect(raw.reason).toBe('dependency_unavailable');
    expect(leaks(raw.message)).toEqual([]);
    expect(raw.detail).toContain('10.0.0.5:5432');
    expect(
      taskFailureOf({ Error: 'States.Timeout', Cause: 'Task timed out after 900.00 seconds' }).reason,
    ).toBe('import_step_timeout');
    const other = taskFailureOf({
      Error: 'error',
      Cause: 'permission denied for schema import_staging_0190f7a2000070008000000000000001',
    });
    expect(other.reason).toBe('internal_error');
    expect(leaks(other.message)).toEqual([]);
    expect(taskFailureOf(undefined).reason).toBe('internal_error');
  });

  it("shows a job's and an event's stored error through the same filter (jobs failed before it)", () => {
    const stored =
      'TransientError: The import database 10.0.0.5:5432/geoplane is unavailable: connect ECONNREFUSED 10.0.0.5:5432';
    const job = {
      id: timeOrderedId(),
      status: 'failed',
      error_message: stored,
      error_reason: 'import_database_unavailable',
      version: 1,
    } as unknown as ImportJob;
    const shown = presentImport(job);
    expect(leaks(shown.error_message as string).filter((p) => p !== 'ECONNREFUSED')).toEqual([]);
    expect(shown.error_reason).toBe('import_database_unavailable');
    const event = { id: 'e', error_message: stored } as unknown as ImportEvent;
    expect(presentEvent(event).error_message).not.toContain('10.0.0.5');
  });
});

describe('import jobs', () => {
  const job = {
    id: timeOrderedId(),
    workspace_id: 'w',
    status: 'failed',
    phase: 'transform',
    error_message: 'boom',
    version: 3,
    run: 2,
    updated_at: '2026-01-01T00:00:00.000Z',
  } as unknown as ImportJob;

  it('ids are UUIDv7: ordered by creation time', () => {
    const a = timeOrderedId(1_000_000);
    const b = timeOrderedId(2_000_000);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).toBe(true);
  });

  it('a transition bumps the version, clears the error unless failing, drops undefined fields', () => {
    const next = advance(
      job,
      { status: 'queued', run: 3, reload: undefined },
      new Date('2026-02-02T00:00:00Z'),
    );
    expect(next).toMatchObject({
      status: 'queued',
      version: 4,
      run: 3,
      updated_at: '2026-02-02T00:00:00.000Z',
    });
    expect('error_message' in next).toBe(false);
    expect('reload' in next).toBe(false);
    expect('error_reason' in advance({ ...job, error_reason: 'malformed_json' }, { status: 'queued' })).toBe(
      false,
    );
    expect(advance(job, { status: 'failed' }).error_message).toBe('boom');
  });

  it('history events for status, phase or error changes only', () => {
    expect(isEventWorthy(undefined, job)).toBe(true);
    expect(isEventWorthy(job, { ...job, processed_features: 5 })).toBe(false);
    expect(isEventWorthy(job, { ...job, phase: 'publish' })).toBe(true);
    expect(isEventWorthy(job, { ...job, error_message: 'other' })).toBe(true);
    expect(importExecutionName(job)).toBe(`import-${job.id}-2`);
  });
});

describe('local uploads (the S3 presigned-POST stand-in)', () => {
  const secret = Buffer.alloc(32, 7);
  let dir = '';
  let server: Server;
  let url = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'geoplane-uploads-'));
    server = createServer((req, res) => void handleUpload(req, res, { secret, dir }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/local-uploads`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  function post(fields: Record<string, string>, file: Buffer): Promise<{ status: number; text: string }> {
    const { body, contentType } = formBody(fields, file, 'f.geojson');
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { 'Content-Type': contentType } }, (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const files = () => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());

  it('stores a signed upload within its limit (204), byte for byte', async () => {
    const ticket = await new LocalUploads(secret, url, dir).ticket(
      'uploads/w/i/f.geojson',
      1000,
      new Date(Date.now() + 60_000),
    );
    const file = Buffer.from('{"type":"FeatureCollection","features":[]}');
    const res = await post(ticket.fields, file);
    expect(res.status, res.text).toBe(204);
    expect(readFileSync(join(dir, 'uploads/w/i/f.geojson'))).toEqual(file);
    expect(await new LocalUploads(secret, url, dir).size('uploads/w/i/f.geojson')).toBe(file.length);
  });

  it('cuts off a file over the signed size and keeps nothing (400 EntityTooLarge)', async () => {
    const ticket = await new LocalUploads(secret, url, dir).ticket(
      'uploads/w/big/f.geojson',
      100,
      new Date(Date.now() + 60_000),
    );
    const res = await post(ticket.fields, Buffer.alloc(5000, 32));
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/EntityTooLarge/);
    expect(files().some((f) => f.parentPath?.includes('big') || f.path?.includes('big'))).toBe(false);
  });

  it('refuses an expired ticket (403), an empty file (400), a forged signature (403), a form without file (400)', async () => {
    const uploads = new LocalUploads(secret, url, dir);
    const expired = await uploads.ticket('uploads/w/old/f.geojson', 100, new Date(Date.now() - 1000));
    const old = await post(expired.fields, Buffer.from('{}'));
    expect(old.status).toBe(403);
    expect(old.text).toMatch(/expired/);
    const fresh = await uploads.ticket('uploads/w/e/f.geojson', 100, new Date(Date.now() + 60_000));
    expect((await post(fresh.fields, Buffer.alloc(0))).status).toBe(400);
    const forged = await new LocalUploads(Buffer.alloc(32, 8), url, dir).ticket(
      'uploads/w/x/f.geojson',
      100,
      new Date(Date.now() + 60_000),
    );
    expect((await post(forged.fields, Buffer.from('{}'))).status).toBe(403);
    expect(verifyLocalUpload(secret, { ...fresh.fields, key: 'uploads/../../etc/passwd' })).toHaveProperty(
      'refused',
    );
    expect(verifyLocalUpload(secret, { key: 'a' })).toHaveProperty('refused');
  });
});
