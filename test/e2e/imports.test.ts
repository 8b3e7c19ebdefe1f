import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { geojson as flatgeobuf } from 'flatgeobuf';
import { beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ImportHistoryBody, ImportJobBody } from '#api/import-schemas.ts';
import { zipOf } from '../fixtures/imports/zip-writer.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { importsOf, pointsGeoJson, relationsOf, upload } from '../support/imports.ts';

/**
 * The import lifecycle end to end against the local host (ADR 0083): upload → discover → stage →
 * plan → publish → rollback, both paths, history, cancel, retry and every bad input — each path
 * checked for what it leaves in the import database (nothing, unless published).
 */
vi.setConfig({ testTimeout: 180_000 });

let ws: { id: string; name: string };
let imports: ReturnType<typeof importsOf>;

beforeAll(async () => {
  ws = await createWorkspace(uniqueName('imp'));
  imports = importsOf(ws.id);
});

const statuses = (events: { status: string }[]) => events.map((e) => e.status);

describe('the plan → publish path of an upload', () => {
  let id = '';

  it('creates an import awaiting its upload, with a form-POST ticket', async () => {
    const res = await imports.create({
      name: 'towns',
      source: { kind: 'upload', filename: 'towns.geojson' },
    });
    expect(res.status, res.text).toBe(201);
    expect(ImportJobBody.safeParse(res.body).success, res.text).toBe(true);
    expect(res.body).toMatchObject({ status: 'awaiting_upload', phase: 'upload', source_kind: 'upload' });
    expect(res.headers.location).toBe(`/api/v1/workspaces/${ws.id}/imports/${res.body.id}`);
    expect(res.body.upload).toMatchObject({ method: 'POST', file_field: 'file' });
    expect(Object.keys(res.body.upload.fields)).toEqual(expect.arrayContaining(['key', 'signature']));
    id = res.body.id;
  });

  it('refuses to start before anything was uploaded (409), and writes nothing', async () => {
    expectError(await imports.start(id), 409, 'upload_missing');
    expect((await imports.get(id)).body.status).toBe('awaiting_upload');
  });

  it('refuses an upload whose signature was tampered with, or another key', async () => {
    const ticket = (await imports.get(id)).body;
    const created = await imports.create({ source: { kind: 'upload', filename: 'x.geojson' } });
    const fields = {
      ...created.body.upload.fields,
      signature: `${created.body.upload.fields.signature.slice(0, -2)}AA`,
    };
    const forged = await upload({ url: created.body.upload.url, fields }, pointsGeoJson(2), 'x.geojson');
    expect(forged.status).toBe(403);
    expect(forged.text).toMatch(/AccessDenied/);
    const otherKey = { ...created.body.upload.fields, key: `${created.body.upload.fields.key}x` };
    expect((await upload({ url: created.body.upload.url, fields: otherKey }, pointsGeoJson(2))).status).toBe(
      403,
    );
    expect(ticket.status).toBe('awaiting_upload');
  });
});

describe('both paths', () => {
  it('plan → publish: upload, stage, preview, publish, layers served, history, rollback to nothing', async () => {
    const file = pointsGeoJson(1500);
    const created = await imports.create({
      name: 'towns',
      source: { kind: 'upload', filename: 'towns.geojson', size_bytes: file.length },
    });
    expect(created.status, created.text).toBe(201);
    const sent = await upload(created.body.upload, file, 'towns.geojson');
    expect(sent.status, sent.text).toBe(204);
    const started = await imports.start(created.body.id);
    expect(started.status, started.text).toBe(202);
    expect(['queued', 'running', 'ready_to_publish']).toContain(started.body.status);
    expect((await imports.start(created.body.id)).status).toBe(202);

    const ready = await imports.until(created.body.id, ['ready_to_publish', 'failed']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    expect(ready.body.processed_features).toBe(1500);
    expect(ready.body.discovery.layers[0]).toMatchObject({
      name: 'towns',
      geometry_type: 'Point',
      srid: 4326,
      feature_count: 1500,
    });
    expect(ready.body.plan.layers[0]).toMatchObject({ source_layer: 'towns', public_id: 'towns' });
    const staged = await relationsOf(created.body.id);
    expect(staged.some((r) => r.startsWith('import_staging_'))).toBe(true);

    const preview = await imports.preview(created.body.id, '?limit=5');
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.type).toBe('FeatureCollection');
    expect(preview.body.features).toHaveLength(5);
    expect(preview.body.features[0].geometry.type).toBe('Point');
    expect(preview.body.features[0].properties).toMatchObject({
      name: expect.any(String),
      rank: expect.any(Number),
    });

    const published = await imports.publish(created.body.id);
    expect(published.status, published.text).toBe(202);
    const done = await imports.until(created.body.id, ['published', 'failed']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    expect(done.body.service_id).toBeTruthy();
    const service = await call('GET', `/workspaces/${ws.id}/services/${done.body.service_id}`, {
      headers: asSuperAdmin(),
    });
    expect(service.status).toBe(200);
    expect(service.body.name).toBe(done.body.service_name);
    const layers = await call('GET', `/workspaces/${ws.id}/services/${done.body.service_id}/layers`, {
      headers: asSuperAdmin(),
    });
    expect(layers.body.layers.map((l: { public_id: string }) => l.public_id)).toEqual(['towns']);
    expect(layers.body.layers[0].geometry_type).toMatch(/POINT/i);
    expect(await relationsOf(created.body.id)).toEqual([
      `import_${created.body.id.replaceAll('-', '')}.towns`,
    ]);

    const history = await imports.history(created.body.id);
    expect(history.status).toBe(200);
    expect(ImportHistoryBody.safeParse(history.body).success, history.text).toBe(true);
    const seen = statuses(history.body.events);
    expect(seen[0]).toBe('awaiting_upload');
    for (const s of ['queued', 'running', 'ready_to_publish', 'publishing', 'published'])
      expect(seen).toContain(s);
    expect(seen.indexOf('ready_to_publish')).toBeLessThan(seen.indexOf('published'));
    const times = history.body.events.map((e: { created_at: string }) => e.created_at);
    expect([...times].sort()).toEqual(times);
    const last = history.body.events.at(-1);
    expect(last).toMatchObject({ import_id: created.body.id, status: 'published', processed_features: 1500 });

    const rolled = await imports.rollback(created.body.id);
    expect(rolled.status, rolled.text).toBe(202);
    expect(rolled.body.status).toBe('rolling_back');
    // The answer names the service's deletion operation, readable at once.
    expect(rolled.body.rollback_operation_id).toMatch(/^[0-9a-f-]{36}$/);
    const op = await call('GET', `/deletions/${rolled.body.rollback_operation_id}`, {
      headers: asSuperAdmin(),
    });
    expect(op.status, op.text).toBe(200);
    expect(op.body.target_id).toBe(done.body.service_id);
    const again = await imports.rollback(created.body.id);
    expect([202, 409]).toContain(again.status);
    const end = await imports.until(created.body.id, ['rolled_back', 'failed'], 120_000);
    expect(end.body.status, JSON.stringify(end.body)).toBe('rolled_back');
    expect(end.body.rollback_operation_id).toBe(rolled.body.rollback_operation_id);
    expect(
      (
        await call('GET', `/workspaces/${ws.id}/services/${done.body.service_id}`, {
          headers: asSuperAdmin(),
        })
      ).status,
    ).toBe(404);
    expect(await relationsOf(created.body.id)).toEqual([]);
    const after = statuses((await imports.history(created.body.id)).body.events);
    expect(after.slice(-2)).toEqual(['rolling_back', 'rolled_back']);
    expectError(await imports.rollback(created.body.id), 409, 'import_state_conflict');
  });

  it('auto_publish from an allowed local URI goes straight to published', async () => {
    const dir = join(inject('host').dataDir, 'import-sources');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${uniqueName('roads')}.geojson`);
    writeFileSync(path, pointsGeoJson(300));
    const res = await imports.create({
      source: { kind: 'uri', uri: path },
      auto_publish: true,
      service_name: uniqueName('auto'),
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.status).toBe('queued');
    const done = await imports.until(res.body.id, ['published', 'failed']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    const seen = statuses((await imports.history(res.body.id)).body.events);
    expect(seen).not.toContain('ready_to_publish');
    expect(seen.at(-1)).toBe('published');
  });
});

describe('what a published import owns goes only with its rollback', () => {
  it('deleteService of its service and a recursive deleteWorkspace answer 409 until it is rolled back', async () => {
    const own = await createWorkspace(uniqueName('owned'));
    const api = importsOf(own.id);
    const job = await api.uploaded(pointsGeoJson(10), 'owned.geojson', { auto_publish: true });
    const done = await api.until(job.id, ['published', 'failed']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    const svc = `/workspaces/${own.id}/services/${done.body.service_id}`;
    expectError(
      await call('DELETE', `${svc}?recurse=true`, { headers: asSuperAdmin() }),
      409,
      'service_owned_by_import',
    );
    expectError(
      await call('DELETE', `/workspaces/${own.id}?recurse=true`, { headers: asSuperAdmin() }),
      409,
      'workspace_has_imports',
    );
    expect((await call('GET', svc, { headers: asSuperAdmin() })).status).toBe(200);
    expect((await api.rollback(job.id)).status).toBe(202);
    expect((await api.until(job.id, ['rolled_back', 'failed'], 120_000)).body.status).toBe('rolled_back');
    const gone = await call('DELETE', `/workspaces/${own.id}?recurse=true`, { headers: asSuperAdmin() });
    expect(gone.status, gone.text).toBe(202);
  });
});

describe('every format through the API', () => {
  const fixtures = join(import.meta.dirname, '../fixtures/imports');
  const feature = (i: number) => ({
    type: 'Feature',
    properties: { id: i, name: `n${i}` },
    geometry: { type: 'Point', coordinates: [i / 10, i / 20] },
  });
  const roads = () =>
    zipOf(
      readdirSync(join(fixtures, 'shp'))
        .filter((f) => f.startsWith('roads.'))
        .map((f) => ({ name: `data/${f}`, data: readFileSync(join(fixtures, 'shp', f)) })),
    );
  const cases: [string, string, () => Buffer | Uint8Array, number][] = [
    [
      'newline-delimited GeoJSON',
      'p.geojsonl',
      () => Buffer.from(`${[1, 2, 3].map((i) => JSON.stringify(feature(i))).join('\n')}\n`),
      3,
    ],
    [
      'GeoJSON text sequences',
      'p.geojsons',
      () => Buffer.from([1, 2].map((i) => `\x1e${JSON.stringify(feature(i))}\n`).join('')),
      2,
    ],
    ['CSV with lat/lon', 'p.csv', () => Buffer.from('name;lat;lon\na;48.1;11.5\nb;48.2;11.6\n'), 2],
    ['a zipped Shapefile', 'roads.zip', roads, -1],
    ['a GeoPackage', 'sample.gpkg', () => readFileSync(join(fixtures, 'sample.gpkg')), -1],
    [
      'FlatGeobuf',
      'p.fgb',
      () =>
        flatgeobuf.serialize(
          { type: 'FeatureCollection', features: [1, 2, 3, 4].map(feature) } as never,
          4326,
        ),
      4,
    ],
  ];
  for (const [title, filename, bytes, count] of cases) {
    it(`${title} stages, publishes and rolls back`, async () => {
      const job = await imports.uploaded(Buffer.from(bytes()), filename, { auto_publish: true });
      const done = await imports.until(job.id, ['published', 'failed', 'awaiting_plan']);
      expect(done.body.status, JSON.stringify(done.body)).toBe('published');
      const layers = done.body.discovery.layers as { feature_count: number }[];
      const total = layers.reduce((n, l) => n + l.feature_count, 0);
      if (count >= 0) expect(total).toBe(count);
      expect(total).toBeGreaterThan(0);
      expect(done.body.processed_features).toBe(total);
      const listed = await call('GET', `/workspaces/${ws.id}/services/${done.body.service_id}/layers`, {
        headers: asSuperAdmin(),
      });
      expect(listed.body.layers).toHaveLength(done.body.plan.layers.length);
      expect((await imports.rollback(job.id)).status).toBe(202);
      expect((await imports.until(job.id, ['rolled_back', 'failed'], 120_000)).body.status).toBe(
        'rolled_back',
      );
      expect(await relationsOf(job.id)).toEqual([]);
    });
  }

  const hostile: [string, () => Buffer, RegExp][] = [
    ['a zip entry with ../', () => zipOf([{ name: '../evil.shp', data: 'x' }]), /\.\.\/|unsafe/i],
    ['an absolute zip entry', () => zipOf([{ name: '/etc/evil.shp', data: 'x' }]), /unsafe|absolute/i],
    [
      'a zip bomb',
      () => zipOf([{ name: 'bomb.shp', data: Buffer.alloc(20 * 1024 * 1024) }]),
      /ratio|limit|bomb/i,
    ],
    [
      'a zip without a shapefile',
      () => zipOf([{ name: 'x.vrt', data: '<OGRVRTDataSource/>' }]),
      /shapefile|\.shp|unsupported/i,
    ],
  ];
  for (const [title, bytes, message] of hostile) {
    it(`refuses ${title}: failed, nothing left behind`, async () => {
      const job = await imports.uploaded(bytes(), 'hostile.zip');
      const res = await imports.until(job.id, ['failed', 'ready_to_publish', 'awaiting_plan']);
      expect(res.body.status, JSON.stringify(res.body)).toBe('failed');
      expect(res.body.error_message).toMatch(message);
      expect(await relationsOf(job.id)).toEqual([]);
    });
  }
});

describe('URIs that are not allowed → 400, nothing created', () => {
  for (const uri of [
    'http://example.com/a.geojson',
    '/etc/passwd',
    'file:///etc/hosts',
    's3://not-allowed-bucket/a.geojson',
    '../a.geojson',
  ]) {
    it(uri, async () => {
      const before = (await imports.api('GET', '')).body.imports.length;
      const res = await imports.create({ source: { kind: 'uri', uri } });
      expect(res.status, res.text).toBe(400);
      expectError(res, 400);
      expect((await imports.api('GET', '')).body.imports.length).toBe(before);
    });
  }
  it('a declared size over the limit', async () => {
    expectError(
      await imports.create({
        source: { kind: 'upload', filename: 'big.geojson', size_bytes: 50 * 1024 ** 3 },
      }),
      400,
      'file_too_large',
    );
  });
});

describe('bad files end failed with a message a user can act on, and leave nothing behind', () => {
  const truncated = Buffer.concat([
    pointsGeoJson(50).subarray(0, -40),
    Buffer.from(',{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[1,'),
  ]);
  const cases: [string, string, Buffer, RegExp][] = [
    ['malformed JSON mid-file', 'm.geojson', truncated, /feature/i],
    ['an empty file', 'e.geojson', Buffer.from('   '), /empty|whitespace/i],
    [
      'a VRT disguised as GeoJSON',
      'v.geojson',
      Buffer.from(
        '<OGRVRTDataSource><OGRVRTLayer name="x"><SrcDataSource>/etc/passwd</SrcDataSource></OGRVRTLayer></OGRVRTDataSource>',
      ),
      /vrt|xml|not supported|unsupported/i,
    ],
    [
      'mixed geometry types',
      'x.geojson',
      Buffer.from(
        JSON.stringify({
          type: 'FeatureCollection',
          features: [
            { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [1, 2] } },
            {
              type: 'Feature',
              properties: {},
              geometry: {
                type: 'Polygon',
                coordinates: [
                  [
                    [0, 0],
                    [1, 0],
                    [1, 1],
                    [0, 0],
                  ],
                ],
              },
            },
          ],
        }),
      ),
      /mixed|Point.*Polygon|Polygon.*Point/i,
    ],
    [
      'coordinates out of range',
      'r.geojson',
      Buffer.from(
        JSON.stringify({
          type: 'FeatureCollection',
          features: [
            { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [500000, 6000000] } },
          ],
        }),
      ),
      /range/i,
    ],
    [
      'non-UTF-8 text',
      'latin.csv',
      Buffer.concat([
        Buffer.from('name,lat,lon\n'),
        Buffer.from([0x4d, 0xfc, 0x6e, 0x63, 0x68, 0x65, 0x6e]),
        Buffer.from(',48.1,11.5\n'),
      ]),
      /utf-?8|encoding/i,
    ],
  ];
  for (const [title, filename, file, message] of cases) {
    it(title, async () => {
      const job = await imports.uploaded(file, filename);
      const res = await imports.until(job.id, ['failed', 'ready_to_publish', 'awaiting_plan']);
      expect(res.body.status, JSON.stringify(res.body)).toBe('failed');
      expect(res.body.error_message).toMatch(message);
      // The file's problem as a stable code beside the message (ADR 0110).
      expect(res.body.error_reason).toMatch(/^[a-z][a-z0-9_]+$/);
      expect(res.body.error_reason).not.toBe('internal_error');
      expect(await relationsOf(job.id)).toEqual([]);
      expect((await imports.history(job.id)).body.events.at(-1)).toMatchObject({
        status: 'failed',
        error_reason: res.body.error_reason,
      });
    });
  }

  it('invalid geometries are reported (not fatal); make_valid in the plan repairs them', async () => {
    const bowtie = {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 1],
          [1, 0],
          [0, 1],
          [0, 0],
        ],
      ],
    };
    const square = {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
          [0, 0],
        ],
      ],
    };
    const file = Buffer.from(
      JSON.stringify({
        type: 'FeatureCollection',
        features: [
          { type: 'Feature', properties: { n: 1 }, geometry: square },
          { type: 'Feature', properties: { n: 2 }, geometry: bowtie },
        ],
      }),
    );
    const job = await imports.uploaded(file, 'parcels.geojson');
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    expect((ready.body.warnings ?? []).join(' ')).toMatch(/invalid/i);
    const plan = ready.body.plan;
    plan.layers[0].make_valid = true;
    const put = await imports.plan(job.id, plan);
    expect(put.status, put.text).toBe(200);
    expect(put.body.status).toBe('queued');
    const again = await imports.until(job.id, ['ready_to_publish', 'failed']);
    expect(again.body.status).toBe('ready_to_publish');
    expect((again.body.warnings ?? []).join(' ')).toMatch(/repaired/i);
    expect((again.body.warnings ?? []).join(' ')).not.toMatch(/set make_valid/i);
    expect((await imports.cancel(job.id)).status).toBe(202);
    expect((await imports.until(job.id, ['cancelled'])).body.status).toBe('cancelled');
    expect(await relationsOf(job.id)).toEqual([]);
  });

  it('an unknown CRS waits for a plan with source_srid, then loads', async () => {
    const csv = Buffer.from('id,wkt\n1,POINT(500000 5400000)\n2,POINT(501000 5401000)\n');
    const job = await imports.uploaded(csv, 'utm.csv');
    const waiting = await imports.until(job.id, ['awaiting_plan', 'failed', 'ready_to_publish']);
    expect(waiting.body.status, JSON.stringify(waiting.body)).toBe('awaiting_plan');
    expect((waiting.body.warnings ?? []).join(' ')).toMatch(/source_srid/);
    expectError(await imports.publish(job.id), 409, 'import_state_conflict');
    const plan = waiting.body.plan;
    plan.layers[0].source_srid = 32632;
    plan.layers[0].target_srid = 4326;
    expectError(
      await imports.plan(job.id, { layers: [{ ...plan.layers[0], source_layer: 'nope' }] }),
      400,
      'invalid_plan',
    );
    const put = await imports.plan(job.id, plan);
    expect(put.status, put.text).toBe(200);
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    const preview = await imports.preview(job.id);
    const [lon, lat] = preview.body.features[0].geometry.coordinates;
    expect(lon).toBeGreaterThan(8);
    expect(lon).toBeLessThan(10);
    expect(lat).toBeGreaterThan(48);
    expect(lat).toBeLessThan(49.5);
    await imports.cancel(job.id);
    expect((await imports.until(job.id, ['cancelled'])).body.status).toBe('cancelled');
  });
});

describe('every name the plan turns into a PostgreSQL identifier is checked up front (ADR 0110)', () => {
  const fixtures = join(import.meta.dirname, '../fixtures/imports');
  const twoLayers = () =>
    zipOf(
      readdirSync(join(fixtures, 'shp'))
        .filter((f) => f.startsWith('roads.') || f.startsWith('wells.'))
        .map((f) => ({ name: f, data: readFileSync(join(fixtures, 'shp', f)) })),
    );

  it('a file whose fields are named like system columns loads: the default plan renames them', async () => {
    const file = Buffer.from(
      JSON.stringify({
        type: 'FeatureCollection',
        features: [1, 2].map((i) => ({
          type: 'Feature',
          properties: { xmin: i, ymin: i, ctid: `c${i}`, tableoid: i, fid: i },
          geometry: { type: 'Point', coordinates: [i, i] },
        })),
      }),
    );
    const job = await imports.uploaded(file, 'bbox.geojson');
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    const targets = ready.body.plan.layers[0].fields.map((f: { target: string }) => f.target);
    expect(targets).toEqual(['xmin_2', 'ymin', 'ctid_2', 'tableoid_2', 'fid_2']);
    const preview = await imports.preview(job.id, '?limit=1');
    expect(preview.body.features[0].properties).toMatchObject({ xmin_2: 1, ctid_2: 'c1' });
    await imports.cancel(job.id);
    expect((await imports.until(job.id, ['cancelled'])).body.status).toBe('cancelled');
  });

  it('refuses (400 invalid_plan, naming the layer or field) what PostgreSQL would refuse or fold together', async () => {
    const job = await imports.uploaded(twoLayers(), 'roads-and-wells.zip');
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed', 'awaiting_plan']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    const [roads, wells] = ready.body.plan.layers;
    const field = roads.fields[0];
    const cases: [string, unknown[], RegExp][] = [
      [
        'a system column as a target',
        [{ ...roads, fields: [{ ...field, target: 'xmin' }] }, wells],
        /layers\[0\]\.fields\[0\]: target 'xmin' is a PostgreSQL system column/,
      ],
      [
        'a system column as the geometry column',
        [{ ...roads, geometry_column: 'ctid' }, wells],
        /geometry_column 'ctid'/,
      ],
      ['fid as the geometry column', [{ ...roads, geometry_column: 'fid' }, wells], /geometry_column 'fid'/],
      [
        'the same source layer twice',
        [roads, { ...roads, public_id: 'roads-2' }],
        /source layer 'roads' is already loaded by layers\[0\]/,
      ],
      [
        "a table named like the other table's primary key index",
        [
          { ...roads, public_id: 'roads' },
          { ...wells, public_id: 'roads_pkey' },
        ],
        /table roads_pkey is the name PostgreSQL gives an index of table roads/,
      ],
      [
        'public ids that fold into one table',
        [
          { ...roads, public_id: 'Net-Work' },
          { ...wells, public_id: 'net_work' },
        ],
        /clashes with public_id 'Net-Work': both would be stored as table net_work/,
      ],
    ];
    for (const [title, layers, detail] of cases) {
      const res = await imports.plan(job.id, { layers });
      expectError(res, 400, 'invalid_plan');
      expect(res.body.detail, title).toMatch(detail);
    }
    const after = await imports.get(job.id);
    expect(after.body).toMatchObject({ status: 'ready_to_publish', version: ready.body.version });
    await imports.cancel(job.id);
    expect((await imports.until(job.id, ['cancelled'])).body.status).toBe('cancelled');
  });
});

describe('rollback only from published: 409 with the standard body from every other status', () => {
  it('awaiting_upload, ready_to_publish, failed, cancelled', async () => {
    const waiting = await imports.create({ source: { kind: 'upload', filename: 'a.geojson' } });
    expectError(await imports.rollback(waiting.body.id), 409, 'import_state_conflict');

    const ready = await imports.uploaded(pointsGeoJson(10), 'b.geojson');
    expect((await imports.until(ready.id, ['ready_to_publish'])).body.status).toBe('ready_to_publish');
    expectError(await imports.rollback(ready.id), 409, 'import_state_conflict');

    const failed = await imports.uploaded(
      Buffer.from('{"type":"FeatureCollection","features":[{'),
      'c.geojson',
    );
    expect((await imports.until(failed.id, ['failed'])).body.status).toBe('failed');
    expectError(await imports.rollback(failed.id), 409, 'import_state_conflict');

    expect((await imports.cancel(waiting.body.id)).status).toBe(204);
    expect((await imports.get(waiting.body.id)).body.status).toBe('cancelled');
    expectError(await imports.rollback(waiting.body.id), 409, 'import_state_conflict');
    await imports.cancel(ready.id);
  });
});

describe('cancel and retry', () => {
  it('cancel: at once while awaiting the upload (204), staged data dropped later (202), refused once published', async () => {
    const waiting = await imports.create({ source: { kind: 'upload', filename: 'a.geojson' } });
    expect((await imports.cancel(waiting.body.id)).status).toBe(204);
    expect((await imports.cancel(waiting.body.id)).status).toBe(204);
    expectError(await imports.start(waiting.body.id), 409);

    const staged = await imports.uploaded(pointsGeoJson(20), 's.geojson');
    expect((await imports.until(staged.id, ['ready_to_publish'])).body.status).toBe('ready_to_publish');
    const cancelling = await imports.cancel(staged.id);
    expect(cancelling.status).toBe(202);
    expect(cancelling.body.status).toBe('cancelling');
    expect((await imports.until(staged.id, ['cancelled'])).body.status).toBe('cancelled');
    expect(await relationsOf(staged.id)).toEqual([]);

    const published = await imports.uploaded(pointsGeoJson(20), 'p.geojson', { auto_publish: true });
    expect((await imports.until(published.id, ['published', 'failed'])).body.status).toBe('published');
    expectError(await imports.cancel(published.id), 409, 'import_state_conflict');
    await imports.rollback(published.id);
    expect((await imports.until(published.id, ['rolled_back', 'failed'], 120_000)).body.status).toBe(
      'rolled_back',
    );
  });

  it('cancel while a load runs: the load stops, the staging is dropped and never comes back', async () => {
    const job = await imports.uploaded(pointsGeoJson(60_000), 'busy.geojson');
    // Cancel as soon as the first chunks are in (or once staged, on a fast machine): both end cancelled.
    const end = Date.now() + 60_000;
    let seen = (await imports.get(job.id)).body;
    while (seen.processed_features === 0 && seen.status !== 'ready_to_publish' && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
      seen = (await imports.get(job.id)).body;
    }
    expect(['running', 'ready_to_publish']).toContain(seen.status);
    const cancelled = await imports.cancel(job.id);
    expect(cancelled.status, cancelled.text).toBe(202);
    expect((await imports.until(job.id, ['cancelled', 'failed'])).body.status).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await relationsOf(job.id)).toEqual([]);
  });

  it('retry: from failed only; a failed load runs again (retry_count + 1)', async () => {
    const job = await imports.uploaded(
      Buffer.from('{"type":"FeatureCollection","features":[{"type":"Feature",'),
      'bad.geojson',
    );
    expect((await imports.until(job.id, ['failed'])).body.status).toBe('failed');
    const retried = await imports.retry(job.id);
    expect(retried.status, retried.text).toBe(202);
    expect(retried.body.retry_count).toBe(1);
    const again = await imports.until(job.id, ['failed'], 60_000);
    expect(again.body.status).toBe('failed');
    expect(again.body.retry_count).toBe(1);
    const ready = await imports.uploaded(pointsGeoJson(5), 'ok.geojson');
    await imports.until(ready.id, ['ready_to_publish']);
    expectError(await imports.retry(ready.id), 409, 'import_state_conflict');
    await imports.cancel(ready.id);
  });
});

describe('getImportHistory (4.14)', () => {
  it('pages oldest first with limit and cursor; 404 for unknown or foreign imports; 400 for a bad limit', async () => {
    const job = await imports.uploaded(pointsGeoJson(3), 'h.geojson');
    await imports.until(job.id, ['ready_to_publish']);
    const all = (await imports.history(job.id)).body.events;
    expect(all.length).toBeGreaterThanOrEqual(4);
    const first = await imports.history(job.id, '?limit=2');
    expect(first.body.events).toHaveLength(2);
    expect(first.body.next_cursor).toBeTruthy();
    const second = await imports.history(
      job.id,
      `?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    expect([...first.body.events, ...second.body.events].map((e: { id: string }) => e.id)).toEqual(
      all.slice(0, 4).map((e: { id: string }) => e.id),
    );
    expectError(await imports.history(job.id, '?limit=0'), 400);
    expectError(await imports.history(job.id, '?limit=1001'), 400);
    expectError(await imports.history('0190f7a2-0000-7000-8000-000000000000'), 404, 'import_not_found');
    const other = await createWorkspace(uniqueName('other'));
    expectError(await importsOf(other.id).history(job.id), 404, 'import_not_found');
    expectError(await importsOf(other.id).rollback(job.id), 404, 'import_not_found');
    await imports.cancel(job.id);
  });

  it('viewers read the history; editors import; only admins roll back or cancel', async () => {
    const viewer = await createKey(ws.id, 'viewer');
    const editor = await createKey(ws.id, 'editor');
    const job = await imports.uploaded(pointsGeoJson(3), 'v.geojson');
    expect((await importsOf(ws.id, withKey(viewer.key)).history(job.id)).status).toBe(200);
    expectError(
      await importsOf(ws.id, withKey(viewer.key)).create({ source: { kind: 'upload', filename: 'a.csv' } }),
      403,
    );
    expect(
      (await importsOf(ws.id, withKey(editor.key)).create({ source: { kind: 'upload', filename: 'a.csv' } }))
        .status,
    ).toBe(201);
    expectError(await importsOf(ws.id, withKey(editor.key)).rollback(job.id), 403);
    expectError(await importsOf(ws.id, withKey(editor.key)).cancel(job.id), 403);
    await imports.until(job.id, ['ready_to_publish']);
    await imports.cancel(job.id);
  });
});
