import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleUpload } from '../../infra/local/uploads.ts';
import { importExecutionName, isEventWorthy, timeOrderedId } from '../../shared/domain/import-model.ts';
import { columnName, defaultPlan, layersWithoutCrs, validatePlan } from '../../shared/domain/import-plans.ts';
import type { Discovery } from '../../shared/domain/import-sources.ts';
import { advance, type ImportJob } from '../../shared/domain/imports.ts';
import { LocalUploads, verifyLocalUpload } from '../../shared/platform/import-uploads.ts';
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
      /not 'fid'/,
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
    ['a public id twice', { layers: [base(), { ...base() }] }, /used twice/],
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
