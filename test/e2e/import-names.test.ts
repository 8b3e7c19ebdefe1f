import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ImportHistoryBody, ImportJobBody } from '#api/import-schemas.ts';
import { tableNameOf } from '#domain/import-plans.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';
import { importsOf, pointsGeoJson, relationsOf } from '../support/imports.ts';

/**
 * Names first, clashes early (ADR 0126): an import's names are checked against its workspace
 * before a row is loaded; a clash stops at `awaiting_plan` with a free name proposed (auto_publish
 * takes it and says so); a partial plan is enough; a failed publish leaves no service and its plan
 * editable; concurrent imports racing for one name never end in a dead end; nothing is left in
 * the import database after any path.
 */
vi.setConfig({ testTimeout: 300_000 });

type Imports = ReturnType<typeof importsOf>;
const file = pointsGeoJson(400);
/** Every import a test made: rolled back or cancelled at the end, then checked for leftovers. */
const made: { imports: Imports; id: string }[] = [];

async function importPoints(imports: Imports, extra: Record<string, unknown> = {}) {
  const job = await imports.uploaded(file, 'points.geojson', extra);
  made.push({ imports, id: job.id });
  return job;
}

const layersOf = async (ws: string, service: string): Promise<string[]> => {
  const res = await call('GET', `/workspaces/${ws}/services/${service}/layers`, { headers: asSuperAdmin() });
  expect(res.status, res.text).toBe(200);
  return res.body.layers.map((l: { public_id: string }) => l.public_id);
};

afterAll(async () => {
  for (const { imports, id } of made) {
    const job = (await imports.get(id)).body;
    if (job.status === 'published') await imports.rollback(id);
    else if (!['cancelled', 'rolled_back', 'awaiting_upload'].includes(job.status)) await imports.cancel(id);
  }
  for (const { imports, id } of made) {
    const end = await imports.until(id, ['rolled_back', 'cancelled', 'awaiting_upload'], 180_000);
    expect(end.body.status, JSON.stringify(end.body)).toMatch(/rolled_back|cancelled/);
    expect(await relationsOf(id), id).toEqual([]);
  }
}, 600_000);

describe('a second import of a layer named like a published one', () => {
  let ws: { id: string };
  let imports: Imports;
  let firstService = '';

  beforeAll(async () => {
    ws = await createWorkspace(uniqueName('names'));
    imports = importsOf(ws.id);
    const first = await importPoints(imports, { auto_publish: true });
    const done = await imports.until(first.id, ['published', 'failed', 'awaiting_plan']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    firstService = done.body.service_id;
    expect(await layersOf(ws.id, firstService)).toEqual(['points']);
  });

  it('stops at awaiting_plan before loading a row, naming the clash and a free name; a partial plan publishes it', async () => {
    const job = await importPoints(imports);
    const waiting = await imports.until(job.id, ['awaiting_plan', 'ready_to_publish', 'failed']);
    expect(waiting.body.status, JSON.stringify(waiting.body)).toBe('awaiting_plan');
    expect(ImportJobBody.safeParse(waiting.body).success, waiting.text).toBe(true);
    expect(waiting.body.clashes).toEqual([
      { kind: 'public_id', name: 'points', proposed: 'points_2', source_layer: 'points' },
    ]);
    expect(waiting.body.warnings.join(' ')).toMatch(/public_id 'points'.*'points_2'/);
    // Nothing loaded: no row counted, no staging schema.
    expect(waiting.body.processed_features).toBe(0);
    expect(await relationsOf(job.id)).toEqual([]);

    // The proposal is free now, but the taken name is refused up front.
    const taken = await imports.plan(job.id, { layers: [{ source_layer: 'points', public_id: 'points' }] });
    expectError(taken, 409, 'public_id_taken');
    expect(taken.body.clashes[0]).toMatchObject({ name: 'points', proposed: 'points_2' });

    const planned = await imports.plan(job.id, {
      layers: [{ source_layer: 'points', public_id: 'points_2' }],
    });
    expect(planned.status, planned.text).toBe(200);
    expect(planned.body.clashes).toBeUndefined();
    // Omitted fields are the discovered ones, mapped as the default plan maps them.
    expect(planned.body.plan.layers[0].fields.map((f: { target: string }) => f.target)).toEqual([
      'name',
      'rank',
      'score',
      'ok',
    ]);
    expect(planned.body.plan.layers[0].geometry_column).toBe('geom');
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    expect(ready.body.processed_features).toBe(400);
    expect((await imports.publish(job.id)).status).toBe(202);
    const done = await imports.until(job.id, ['published', 'failed']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    expect(await layersOf(ws.id, done.body.service_id)).toEqual(['points_2']);
  });

  it('auto_publish takes a free name itself, and the history says so', async () => {
    const job = await importPoints(imports, { auto_publish: true });
    const done = await imports.until(job.id, ['published', 'failed', 'awaiting_plan']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    const [publicId] = await layersOf(ws.id, done.body.service_id);
    expect(publicId).toMatch(/^points_\d+$/);
    expect(done.body.clashes).toEqual([
      expect.objectContaining({ kind: 'public_id', name: 'points', proposed: publicId, renamed: true }),
    ]);
    const history = await imports.history(job.id);
    expect(ImportHistoryBody.safeParse(history.body).success, history.text).toBe(true);
    const said = history.body.events.flatMap((e: { warnings?: string[] }) => e.warnings ?? []).join(' ');
    expect(said).toContain(`auto_publish publishes it as '${publicId}'`);
    expect(history.body.events.some((e: { clashes?: unknown[] }) => e.clashes?.length)).toBe(true);
  });

  it('names given at createImport: the layer and the service are published under them', async () => {
    const serviceName = uniqueName('named');
    const job = await importPoints(imports, {
      service_name: serviceName,
      layers: [{ public_id: uniqueName('mine') }],
    });
    const created = (await imports.get(job.id)).body;
    expect(created.requested_layers).toHaveLength(1);
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed', 'awaiting_plan']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    expect(ready.body.plan.layers[0].public_id).toBe(created.requested_layers[0].public_id);
    expect((await imports.publish(job.id)).status).toBe(202);
    const done = await imports.until(job.id, ['published', 'failed']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    expect(done.body.service_name).toBe(serviceName);
    expect(await layersOf(ws.id, serviceName)).toEqual([created.requested_layers[0].public_id]);
    // A public id named twice is refused before anything is created.
    expectError(
      await imports.create({
        source: { kind: 'upload', filename: 'x.geojson' },
        layers: [{ public_id: 'a' }, { source_layer: 'x', public_id: 'a' }],
      }),
      400,
      'invalid_layer_names',
    );
  });

  it('a publish that fails (the name taken after the plan) leaves no service, the plan editable, and a retry publishes', async () => {
    const serviceName = uniqueName('late');
    const wanted = uniqueName('late');
    const job = await importPoints(imports, { service_name: serviceName, layers: [{ public_id: wanted }] });
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed', 'awaiting_plan']);
    expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');

    // Someone publishes a layer with that public id meanwhile (on the first import's service).
    const hex = made[0]?.id.replaceAll('-', '');
    const layer = await call('POST', `/workspaces/${ws.id}/services/${firstService}/layers`, {
      headers: asSuperAdmin(),
      body: { source_layer: `import_${hex}.points`, public_id: wanted },
    });
    expect(layer.status, layer.text).toBe(201);

    expect((await imports.publish(job.id)).status).toBe(202);
    const failed = await imports.until(job.id, ['failed', 'published']);
    expect(failed.body.status, JSON.stringify(failed.body)).toBe('failed');
    expect(failed.body).toMatchObject({ phase: 'publish', error_reason: 'public_id_taken' });
    expect(failed.body.error_message).toContain(`'${wanted}_2'`);
    expect(failed.body.clashes[0]).toMatchObject({ name: wanted, proposed: `${wanted}_2` });
    expect(failed.body.service_id).toBeUndefined();
    const service = await call('GET', `/workspaces/${ws.id}/services/${serviceName}`, {
      headers: asSuperAdmin(),
    });
    expect(service.status, service.text).toBe(404);

    // The plan is editable again, and the retry loads and publishes under the new name.
    const planned = await imports.plan(job.id, {
      layers: [{ source_layer: 'points', public_id: `${wanted}_2` }],
    });
    expect(planned.status, planned.text).toBe(200);
    expect(planned.body.status).toBe('failed');
    expect((await imports.retry(job.id)).status).toBe(202);
    const again = await imports.until(job.id, ['ready_to_publish', 'failed', 'published']);
    expect(again.body.status, JSON.stringify(again.body)).toBe('ready_to_publish');
    expect((await imports.publish(job.id)).status).toBe(202);
    const done = await imports.until(job.id, ['published', 'failed']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    expect(await layersOf(ws.id, serviceName)).toEqual([`${wanted}_2`]);
    // Only the published tables are left; the first load's are gone.
    const hexB = job.id.replaceAll('-', '');
    expect(await relationsOf(job.id)).toEqual([`import_${hexB}.${tableNameOf(`${wanted}_2`)}`]);
  });
});

describe('two imports racing for one name', () => {
  it('with auto_publish both end published under different names', async () => {
    const ws = await createWorkspace(uniqueName('race'));
    const imports = importsOf(ws.id);
    const [a, b] = await Promise.all([
      importPoints(imports, { auto_publish: true }),
      importPoints(imports, { auto_publish: true }),
    ]);
    const ends = await Promise.all([a, b].map((j) => imports.until(j.id, ['published', 'failed'], 240_000)));
    for (const end of ends) expect(end.body.status, JSON.stringify(end.body)).toBe('published');
    const ids = await Promise.all(ends.map((e) => layersOf(ws.id, e.body.service_id)));
    expect(ids.flat().sort()).toEqual(['points', 'points_2']);
  });

  it('without auto_publish the loser fails with the clash, no service, and publishes after a plan change', async () => {
    const ws = await createWorkspace(uniqueName('race'));
    const imports = importsOf(ws.id);
    const jobs = await Promise.all([importPoints(imports), importPoints(imports)]);
    for (const j of jobs) {
      const ready = await imports.until(j.id, ['ready_to_publish', 'failed', 'awaiting_plan']);
      expect(ready.body.status, JSON.stringify(ready.body)).toBe('ready_to_publish');
    }
    await Promise.all(jobs.map((j) => imports.publish(j.id)));
    const ends = await Promise.all(jobs.map((j) => imports.until(j.id, ['published', 'failed'], 240_000)));
    const statuses = ends.map((e) => e.body.status).sort();
    expect(statuses, JSON.stringify(ends.map((e) => e.body))).toEqual(['failed', 'published']);
    const loser = ends.find((e) => e.body.status === 'failed')?.body;
    expect(loser).toMatchObject({ phase: 'publish', error_reason: 'public_id_taken' });
    expect(loser.service_id).toBeUndefined();
    expect(
      (await call('GET', `/workspaces/${ws.id}/services/${loser.service_name}`, { headers: asSuperAdmin() }))
        .status,
    ).toBe(404);
    const proposed = loser.clashes[0].proposed;
    expect(
      (await imports.plan(loser.id, { layers: [{ source_layer: 'points', public_id: proposed }] })).status,
    ).toBe(200);
    expect((await imports.retry(loser.id)).status).toBe(202);
    expect((await imports.until(loser.id, ['ready_to_publish', 'failed'])).body.status).toBe(
      'ready_to_publish',
    );
    expect((await imports.publish(loser.id)).status).toBe(202);
    const done = await imports.until(loser.id, ['published', 'failed']);
    expect(done.body.status, JSON.stringify(done.body)).toBe('published');
  });
});
