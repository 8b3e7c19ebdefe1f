import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ImportJobBody } from '#api/import-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { ogc, publishLayer, servedWorkspace } from '../support/data-plane.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';
import { adminQuery, importsOf, pointsGeoJson, relationsOf } from '../support/imports.ts';

/**
 * Replace and append (ADR 0127): an import's rows go into a layer another import published; the
 * layer keeps its id, public id and URL; readers see one complete generation at a time; a
 * rollback restores the previous data (replace) or removes exactly the appended rows (append),
 * newest first; nothing is left in the import database afterwards.
 */
vi.setConfig({ testTimeout: 300_000 });

type Imports = ReturnType<typeof importsOf>;
const made: { imports: Imports; id: string }[] = [];

/** Row count and a checksum of a table's rows in fid order (what the layer serves). */
async function fingerprint(relation: string): Promise<{ rows: number; sum: string }> {
  const [row] = await adminQuery<{ rows: string; sum: string }>(
    `SELECT count(*)::text AS rows, md5(coalesce(string_agg(t::text, '|' ORDER BY fid), '')) AS sum FROM ${relation} t`,
  );
  return { rows: Number(row?.rows), sum: row?.sum ?? '' };
}

async function imported(imports: Imports, file: Buffer, extra: Record<string, unknown>, end = ['published']) {
  const job = await imports.uploaded(file, 'points.geojson', extra);
  made.push({ imports, id: job.id });
  const done = await imports.until(
    job.id,
    [...end, 'failed', 'awaiting_plan', 'published', 'ready_to_publish'],
    180_000,
  );
  return done.body;
}

async function layerOf(ws: string, service: string, id: string) {
  const res = await call('GET', `/workspaces/${ws}/services/${service}/layers/${id}`, {
    headers: asSuperAdmin(),
  });
  expect(res.status, res.text).toBe(200);
  return res.body as {
    id: string;
    public_id: string;
    version: number;
    source_layer: string;
    native_extent?: { max_x: number };
  };
}

async function historyText(imports: Imports, id: string): Promise<string> {
  const res = await imports.history(id, '?limit=100');
  expect(res.status, res.text).toBe(200);
  return JSON.stringify(res.body);
}

afterAll(async () => {
  // Newest first, as generations roll back.
  for (const { imports, id } of [...made].reverse()) {
    const job = (await imports.get(id)).body;
    if (job.status === 'published') {
      const res = await imports.rollback(id);
      expect(res.status, res.text).toBe(202);
      await imports.until(id, ['rolled_back', 'failed'], 180_000);
    } else if (!['cancelled', 'rolled_back', 'awaiting_upload'].includes(job.status)) {
      await imports.cancel(id);
      await imports.until(id, ['cancelled'], 180_000);
    }
  }
  for (const { id } of made) expect(await relationsOf(id), id).toEqual([]);
}, 900_000);

describe('replace and append a published layer', () => {
  let ws: { id: string };
  let imports: Imports;
  let original: { service: string; layer: string; relation: string; public_id: string };
  let first: { rows: number; sum: string };

  beforeAll(async () => {
    ws = await createWorkspace(uniqueName('targets'));
    imports = importsOf(ws.id);
    const job = await imported(imports, pointsGeoJson(300), { auto_publish: true });
    expect(job.status, JSON.stringify(job)).toBe('published');
    const layers = await call('GET', `/workspaces/${ws.id}/services/${job.service_id}/layers`, {
      headers: asSuperAdmin(),
    });
    const layer = layers.body.layers[0];
    original = {
      service: job.service_id,
      layer: layer.id,
      relation: layer.source_layer,
      public_id: layer.public_id,
    };
    first = await fingerprint(original.relation);
    expect(first.rows).toBe(300);
  });

  it('replace swaps the rows in one transaction while readers read; the layer keeps its id, name and URL', async () => {
    const before = await layerOf(ws.id, original.service, original.layer);
    // Readers throughout: every answer is one whole generation (300 old rows or 120 new), never a mix.
    let reading = true;
    const seen = new Set<string>();
    const readers = (async () => {
      while (reading) {
        const now = await fingerprint(original.relation);
        seen.add(`${now.rows}:${now.sum}`);
        const items = await ogc(ws.id, `/collections/${original.public_id}/items?limit=1000`, asSuperAdmin());
        expect(items.status, items.text).toBe(200);
        seen.add(`items:${items.body.numberReturned}`);
      }
    })();
    const job = await imported(imports, pointsGeoJson(120, 1000), {
      auto_publish: true,
      layers: [{ target: { layer: original.public_id, mode: 'replace' } }],
    });
    reading = false;
    await readers;
    expect(job.status, JSON.stringify(job)).toBe('published');
    expect(ImportJobBody.safeParse(job).success, JSON.stringify(job)).toBe(true);
    expect(job.service_id).toBeUndefined();
    expect(job.plan.layers[0]).toMatchObject({
      public_id: original.public_id,
      target: { layer: original.layer, mode: 'replace' },
    });
    expect(Date.parse(job.rollback_until)).toBeGreaterThan(Date.now() + 24 * 3_600_000);
    const after = await fingerprint(original.relation);
    expect(after.rows).toBe(120);
    for (const state of seen) {
      expect([`300:${first.sum}`, `120:${after.sum}`, 'items:300', 'items:120'], state).toContain(state);
    }
    const layer = await layerOf(ws.id, original.service, original.layer);
    expect(layer).toMatchObject({
      id: before.id,
      public_id: before.public_id,
      source_layer: before.source_layer,
    });
    // Its source facts were read again (extent of the new points), so its version moved.
    expect(layer.version).toBeGreaterThan(before.version);
    const items = await ogc(ws.id, `/collections/${original.public_id}/items?limit=1000`, asSuperAdmin());
    expect(items.body.features.map((f: { properties: { name: string } }) => f.properties.name)).toContain(
      'P1000',
    );
    expect(await historyText(imports, job.id)).toMatch(/its 300 rows were replaced by 120/);
    // No service, no layer and no table of its own: only the previous generation, in its schema.
    expect((await relationsOf(job.id)).length).toBe(1);
  });

  it('append adds rows after the last fid; rollbacks go newest first and restore each generation exactly', async () => {
    const replaced = await fingerprint(original.relation);
    const replace = made[made.length - 1] as { id: string };
    const job = await imported(imports, pointsGeoJson(50, 5000), {
      auto_publish: true,
      layers: [{ target: { layer: original.layer, mode: 'append' } }],
    });
    expect(job.status, JSON.stringify(job)).toBe('published');
    const appended = await fingerprint(original.relation);
    expect(appended.rows).toBe(170);
    const fids = await adminQuery<{ min: string; max: string }>(
      `SELECT min(fid)::text AS min, max(fid)::text AS max FROM ${original.relation} WHERE rank >= 5000`,
    );
    expect(fids[0]).toEqual({ min: '121', max: '170' });
    expect(await historyText(imports, job.id)).toMatch(/50 rows appended \(fids 121–170; 170 rows now\)/);

    // The replace can't go back while the append that came after it stands.
    expectError(await imports.rollback(replace.id), 409, 'import_rollback_order');

    expect((await imports.rollback(job.id)).status).toBe(202);
    const undone = await imports.until(job.id, ['rolled_back', 'failed'], 180_000);
    expect(undone.body.status, undone.text).toBe('rolled_back');
    expect(await fingerprint(original.relation)).toEqual(replaced);
    expect(await historyText(imports, job.id)).toMatch(/the 50 appended rows were removed \(120 rows now\)/);

    expect((await imports.rollback(replace.id)).status).toBe(202);
    const restored = await imports.until(replace.id, ['rolled_back', 'failed'], 180_000);
    expect(restored.body.status, restored.text).toBe('rolled_back');
    expect(await fingerprint(original.relation)).toEqual(first);
    expect(await historyText(imports, replace.id)).toMatch(/its previous data was restored \(300 rows\)/);
    for (const id of [job.id, replace.id]) expect(await relationsOf(id)).toEqual([]);
    // The layer still serves, from its own import's table, under the same name.
    const items = await ogc(ws.id, `/collections/${original.public_id}/items?limit=1000`, asSuperAdmin());
    expect(items.body.numberReturned).toBe(300);
  });

  it('a plan names the columns a field must fit: a wrong type or a missing column is a 422 naming it', async () => {
    const job = await imported(
      imports,
      pointsGeoJson(10, 9000),
      { layers: [{ target: { layer: original.public_id, mode: 'append' } }] },
      ['ready_to_publish'],
    );
    expect(job.status, JSON.stringify(job)).toBe('ready_to_publish');
    const wrongType = await imports.plan(job.id, {
      layers: [
        {
          source_layer: 'points',
          target: { layer: original.public_id, mode: 'append' },
          fields: [{ source: 'name', target: 'rank', type: 'text' }],
        },
      ],
    });
    expectError(wrongType, 422, 'import_target_invalid');
    expect(wrongType.body.detail).toMatch(/column 'rank' .* is integer, but field 'name' is text/);
    const noColumn = await imports.plan(job.id, {
      layers: [
        {
          source_layer: 'points',
          target: { layer: original.public_id, mode: 'append' },
          fields: [{ source: 'name', target: 'title' }],
        },
      ],
    });
    expectError(noColumn, 422, 'import_target_invalid');
    expect(noColumn.body.detail).toMatch(
      /has no column 'title'\. Its columns: name \(text\), rank \(integer\)/,
    );
    const publicId = await imports.plan(job.id, {
      layers: [
        { source_layer: 'points', public_id: 'other', target: { layer: original.public_id, mode: 'append' } },
      ],
    });
    expectError(publicId, 422, 'import_target_invalid');
    expect((await imports.cancel(job.id)).status).toBeLessThan(300);
  });

  it('only an imported layer can be a target: another database’s layer, a missing one and an id of another workspace are refused up front', async () => {
    const { ws: other, service } = await servedWorkspace();
    const places = await publishLayer(other.id, service.id, { source_layer: 'public.places' });
    const theirs = importsOf(other.id);
    const create = (target: Record<string, unknown>) =>
      theirs.create({ source: { kind: 'upload', filename: 'p.geojson' }, layers: [{ target }] });
    expectError(await create({ layer: places.public_id, mode: 'replace' }), 422, 'import_target_invalid');
    expectError(await create({ layer: 'nowhere', mode: 'append' }), 422, 'import_target_invalid');
    // The first workspace's imported layer, by id: not a layer of this workspace.
    expectError(await create({ layer: original.layer, mode: 'replace' }), 422, 'import_target_invalid');
    expectError(
      await theirs.create({
        source: { kind: 'upload', filename: 'p.geojson' },
        layers: [{ public_id: 'x', target: { layer: places.public_id, mode: 'append' } }],
      }),
      400,
      'invalid_layer_names',
    );
  });
});
