import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { uniqueName } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';
import { importsOf, pointsGeoJson, type Ticket, upload } from '../support/imports.ts';

/**
 * Where the local host keeps uploads and for how long (issue #22, ADR 0106): what startImport saw
 * is what every load reads, and an upload goes once its import is published or cancelled.
 */
vi.setConfig({ testTimeout: 180_000 });

let imports: ReturnType<typeof importsOf>;

beforeAll(async () => {
  imports = importsOf((await createWorkspace(uniqueName('upl'))).id);
});

/** The files the host's upload store holds for an import. */
function storedFor(importId: string): string[] {
  const store = join(inject('host').dataDir, 'imports');
  return readdirSync(store, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(store.length + 1))
    .filter((path) => path.includes(importId));
}

let imported = 0;

async function uploadedAndStarted(file: Buffer): Promise<{ id: string; ticket: Ticket }> {
  // Each import names its layer: an earlier one of this file may hold `points` (ADR 0126 would stop
  // this one at awaiting_plan with the clash).
  imported += 1;
  const created = await imports.create({
    source: { kind: 'upload', filename: 'points.geojson' },
    layers: [{ public_id: `points_${imported}` }],
  });
  expect(created.status, created.text).toBe(201);
  expect((await upload(created.body.upload, file)).status).toBe(204);
  const started = await imports.start(created.body.id);
  expect(started.status, started.text).toBe(202);
  return { id: created.body.id, ticket: created.body.upload };
}

describe('an upload sealed when its import starts', () => {
  let id = '';

  it('loads the file as it was at the start, even after the form was POSTed again and the plan changed', async () => {
    const started = await uploadedAndStarted(pointsGeoJson(5));
    id = started.id;
    const ready = await imports.until(id, ['ready_to_publish', 'failed']);
    expect(ready.body.status, ready.text).toBe('ready_to_publish');
    expect(ready.body.discovery.layers[0].feature_count).toBe(5);
    // The form is valid for an hour: a second file replaces the form's object, not the import's.
    expect((await upload(started.ticket, pointsGeoJson(9))).status).toBe(204);
    const plan = ready.body.plan;
    plan.layers[0].title = 'Points again';
    const put = await imports.plan(id, plan);
    expect(put.status, put.text).toBe(200);
    const again = await imports.until(id, ['ready_to_publish', 'failed']);
    expect(again.body.status, again.text).toBe('ready_to_publish');
    expect(again.body.processed_features).toBe(5);
  });

  it('is removed, with the form’s object, once the import is published', async () => {
    expect(storedFor(id)).not.toEqual([]);
    expect((await imports.publish(id)).status).toBe(202);
    const published = await imports.until(id, ['published', 'failed']);
    expect(published.body.status, published.text).toBe('published');
    await expect.poll(() => storedFor(id)).toEqual([]);
  });

  it('is removed once a started import is cancelled', async () => {
    const started = await uploadedAndStarted(pointsGeoJson(3));
    const ready = await imports.until(started.id, ['ready_to_publish', 'failed']);
    expect(ready.body.status, ready.text).toBe('ready_to_publish');
    expect(storedFor(started.id)).not.toEqual([]);
    const cancel = await imports.cancel(started.id);
    expect([202, 204]).toContain(cancel.status);
    const cancelled = await imports.until(started.id, ['cancelled', 'failed']);
    expect(cancelled.body.status, cancelled.text).toBe('cancelled');
    await expect.poll(() => storedFor(started.id)).toEqual([]);
  });
});
