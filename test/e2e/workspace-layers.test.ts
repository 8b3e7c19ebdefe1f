import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { bearer, createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';

/**
 * listWorkspaceLayers (ADR 0130): every service's layers of a workspace, each with its service's
 * id and name, a page at a time, filtered by a case-insensitive substring of public_id or title;
 * the same permissions as listLayers.
 */
type Listed = { id: string; public_id: string; title: string; service_id: string; service_name: string };

const postgis = () =>
  JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;

async function createService(workspace: string, name: string) {
  const res = await call('POST', `/workspaces/${workspace}/services`, {
    headers: asSuperAdmin(),
    body: { name, type: 'postgis', enabled: false, connection: postgis() },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string };
}

async function createDraft(workspace: string, service: string, publicId: string, title?: string) {
  const res = await call('POST', `/workspaces/${workspace}/services/${service}/layers`, {
    headers: asSuperAdmin(),
    body: { source_layer: publicId, public_id: publicId, enabled: false, ...(title ? { title } : {}) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string };
}

/** Every page of a listing, following next_cursor; the number of pages read beside the layers. */
async function readAll(path: string, headers = asSuperAdmin()) {
  const layers: Listed[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await call('GET', `${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`, {
      headers,
    });
    expect(res.status, res.text).toBe(200);
    layers.push(...(res.body.layers as Listed[]));
    cursor = res.body.next_cursor;
    pages += 1;
  } while (cursor && pages < 50);
  return { layers, pages };
}

describe('listWorkspaceLayers', () => {
  let ws: { id: string; name: string };
  let roads: { id: string; name: string };
  let water: { id: string; name: string };
  const published = new Map<string, string>();

  beforeAll(async () => {
    ws = await createWorkspace(uniqueName('wsl'));
    roads = await createService(ws.id, 'roads-db');
    water = await createService(ws.id, 'water-db');
    for (const id of ['motorways', 'Main-Roads', 'tracks', 'cycleways']) {
      published.set(id, (await createDraft(ws.id, roads.id, id)).id);
    }
    published.set('rivers', (await createDraft(ws.id, water.id, 'rivers', 'Rivers and ROADSIDE ditches')).id);
    published.set('lakes', (await createDraft(ws.id, water.id, 'lakes')).id);
  }, 60_000);

  it('lists every layer of every service with its service id and name, a page at a time', async () => {
    const first = await call('GET', `/workspaces/${ws.name}/layers?limit=4`, { headers: asSuperAdmin() });
    expect(first.status, first.text).toBe(200);
    expect(first.body.layers).toHaveLength(4);
    expect(first.body.next_cursor).toEqual(expect.any(String));

    const { layers, pages } = await readAll(`/workspaces/${ws.name}/layers?limit=4`);
    expect(pages).toBe(2);
    expect(layers.map((l) => l.public_id).sort()).toEqual([...published.keys()].sort());
    expect(new Set(layers.map((l) => l.id)).size).toBe(6);
    for (const layer of layers) {
      const service = ['rivers', 'lakes'].includes(layer.public_id) ? water : roads;
      expect(layer).toMatchObject({ service_id: service.id, service_name: service.name });
      expect(layer.id).toBe(published.get(layer.public_id));
    }
    // The same items as listLayers answers for each service (the same body per layer, plus the name).
    const perService = await call('GET', `/workspaces/${ws.id}/services/${water.id}/layers`, {
      headers: asSuperAdmin(),
    });
    const rivers = perService.body.layers.find((l: Listed) => l.public_id === 'rivers');
    expect(layers.find((l) => l.public_id === 'rivers')).toEqual({ ...rivers, service_name: 'water-db' });
  });

  it('filters by a case-insensitive substring of public_id or title, paging the matches', async () => {
    const road = await readAll(`/workspaces/${ws.id}/layers?q=ROAD`);
    // Main-Roads by its public id, rivers by its title ("ROADSIDE"); nothing else holds "road".
    expect(road.layers.map((l) => l.public_id).sort()).toEqual(['Main-Roads', 'rivers']);

    const ways = await readAll(`/workspaces/${ws.id}/layers?q=ways&limit=1`);
    expect(ways.layers.map((l) => l.public_id).sort()).toEqual(['cycleways', 'motorways']);
    // A filled page leaves a cursor; the last match's page may still have one (nothing is read past it).
    expect(ways.pages).toBeGreaterThanOrEqual(2);

    const none = await call('GET', `/workspaces/${ws.id}/layers?q=nothing-like-this`, {
      headers: asSuperAdmin(),
    });
    expect(none.status, none.text).toBe(200);
    expect(none.body).toEqual({ layers: [] });
  });

  it('leaves out the layers of a service being deleted, and a deleted layer', async () => {
    const other = await createWorkspace(uniqueName('wsl'));
    const keep = await createService(other.id, 'keep');
    const doomed = await createService(other.id, 'doomed');
    await createDraft(other.id, keep.id, 'kept');
    const gone = await createDraft(other.id, keep.id, 'gone');
    for (const id of ['d1', 'd2', 'd3']) await createDraft(other.id, doomed.id, id);
    const removed = await call('DELETE', `/workspaces/${other.id}/services/${keep.id}/layers/${gone.id}`, {
      headers: asSuperAdmin(),
    });
    expect(removed.status, removed.text).toBe(204);
    const started = await call('DELETE', `/workspaces/${other.id}/services/${doomed.id}?recurse=true`, {
      headers: asSuperAdmin(),
    });
    expect(started.status, started.text).toBe(202);
    // Hidden at once, whether or not the workflow has removed its layers yet.
    const { layers } = await readAll(`/workspaces/${other.id}/layers`);
    expect(layers.map((l) => l.public_id)).toEqual(['kept']);
  });

  it('refuses a bad limit, cursor or q with 400, and an unknown workspace with 404', async () => {
    expectError(await call('GET', `/workspaces/${ws.id}/layers?limit=0`, { headers: asSuperAdmin() }), 400);
    expectError(
      await call('GET', `/workspaces/${ws.id}/layers?cursor=bm90LWEtY3Vyc29y`, { headers: asSuperAdmin() }),
      400,
      'invalid_cursor',
    );
    expectError(
      await call('GET', `/workspaces/${ws.id}/layers?q=${'x'.repeat(129)}`, { headers: asSuperAdmin() }),
      400,
    );
    expectError(await call('GET', `/workspaces/${ws.id}/layers?q=`, { headers: asSuperAdmin() }), 400);
    // Another workspace's cursor (its partition) is not one of this listing's.
    const other = await createWorkspace(uniqueName('wsl'));
    const page = await call('GET', `/workspaces/${ws.id}/layers?limit=1`, { headers: asSuperAdmin() });
    expectError(
      await call('GET', `/workspaces/${other.id}/layers?cursor=${page.body.next_cursor}`, {
        headers: asSuperAdmin(),
      }),
      400,
      'invalid_cursor',
    );
    expectError(
      await call('GET', `/workspaces/${uniqueName('nope')}/layers`, { headers: asSuperAdmin() }),
      404,
      'workspace_not_found',
    );
  });

  it('answers as listLayers does: viewers read, another workspace admin and no credential are refused', async () => {
    const viewer = await createKey(ws.id, 'viewer');
    const viewerRead = await call('GET', `/workspaces/${ws.id}/layers?q=lakes`, {
      headers: withKey(viewer.key),
    });
    expect(viewerRead.status, viewerRead.text).toBe(200);
    expect(viewerRead.body.layers.map((l: Listed) => l.public_id)).toEqual(['lakes']);
    const viewerToken = bearer(await token({ workspaces: { [ws.name]: 'viewer' } }));
    expect((await call('GET', `/workspaces/${ws.name}/layers`, { headers: viewerToken })).status).toBe(200);

    const elsewhere = await createWorkspace(uniqueName('wsl'));
    const admin = await createKey(elsewhere.id, 'admin');
    const callers: [string, Record<string, string>][] = [
      ['another workspace admin key', withKey(admin.key)],
      ['another workspace admin token', bearer(await token({ workspaces: { [elsewhere.name]: 'admin' } }))],
      ['no credential', {}],
    ];
    for (const [who, headers] of callers) {
      const all = await call('GET', `/workspaces/${ws.id}/layers`, { headers });
      const one = await call('GET', `/workspaces/${ws.id}/services/${roads.id}/layers`, { headers });
      expect(all.status, `${who}: ${all.text}`).toBe(one.status);
      expect([401, 403, 404], who).toContain(all.status);
      expectError(all, one.status);
      expect(all.body.reason, who).toBe(one.body.reason);
    }
    // A workspace the caller can't see and one that doesn't exist answer alike, as for listLayers.
    const unknown = await call('GET', `/workspaces/${uniqueName('nope')}/layers`, {
      headers: withKey(admin.key),
    });
    const unknownOne = await call('GET', `/workspaces/${uniqueName('nope')}/services/x/layers`, {
      headers: withKey(admin.key),
    });
    expect(unknown.status).toBe(unknownOne.status);
  });
});
