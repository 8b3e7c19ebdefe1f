import { describe, expect, it } from 'vitest';
import { CatalogEventBody } from '#api/event-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createKey, createWorkspace, withKey } from '../support/fixtures.ts';

/** A feed event as the local host serves it. */
interface FeedEvent {
  id: string;
  source: string;
  'detail-type': string;
  detail: Record<string, any>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every event of the local feed from `cursor` on, and the cursor after them. */
async function readFeed(cursor = '0'): Promise<{ events: FeedEvent[]; cursor: string }> {
  const events: FeedEvent[] = [];
  let at = cursor;
  for (;;) {
    const res = await call('GET', `/events?limit=1000&cursor=${at}`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(200);
    events.push(...res.body.events);
    if (res.body.next_cursor === at) return { events, cursor: at };
    at = res.body.next_cursor;
  }
}

/** Waits until the feed holds events of every request id in `ids` (and then a little longer, for strays). */
async function eventsOf(from: string, ids: Set<string>, expected: number): Promise<FeedEvent[]> {
  const deadline = Date.now() + 20_000;
  let mine: FeedEvent[] = [];
  while (Date.now() < deadline) {
    const { events } = await readFeed(from);
    mine = events.filter((e) => ids.has(e.detail.request_id));
    if (mine.length >= expected) break;
    await sleep(100);
  }
  await sleep(500);
  const { events } = await readFeed(from);
  return events.filter((e) => ids.has(e.detail.request_id));
}

/** A small seeded generator, so a failing sequence can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('catalog-change events (local feed of the change stream)', () => {
  it('is super_admin only and refuses a bad cursor', async () => {
    const ws = await createWorkspace();
    const admin = await createKey(ws.id, 'admin');
    expect((await call('GET', '/events', { headers: withKey(admin.key) })).status).toBe(403);
    expect((await call('GET', '/events?cursor=abc', { headers: asSuperAdmin() })).status).toBe(400);
  });

  it('emits exactly one event per committed change and none for a refused one, over a random sequence', async () => {
    const seed = Number(process.env.EVENTS_SEED ?? Date.now() % 100000);
    const rand = random(seed);
    const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)] as T;
    const { cursor: start } = await readFeed();
    const ws = await createWorkspace();
    const workspaces = [{ id: ws.id, version: 1 }];
    const keys: { ws: string; id: string; revoked: boolean }[] = [];
    const roles: string[] = [];
    /** Per request id: the detail-types it must have produced (empty: refused). */
    const expected = new Map<string, string[]>();
    const versions = new Map<string, number>();
    const record = (res: { headers: Record<string, string> }, types: string[]) =>
      expected.set(res.headers['x-amzn-requestid'] as string, types);

    const steps: Record<string, () => Promise<void>> = {
      async createWorkspace() {
        const res = await call('POST', '/workspaces', {
          headers: asSuperAdmin(),
          body: { name: uniqueName() },
        });
        expect(res.status).toBe(201);
        workspaces.push({ id: res.body.id, version: 1 });
        record(res, ['Workspace Created']);
        versions.set(res.headers['x-amzn-requestid'] as string, 1);
      },
      async updateWorkspace() {
        const target = pick(workspaces);
        const res = await call('PUT', `/workspaces/${target.id}`, {
          headers: { ...asSuperAdmin(), 'If-Match': `"${target.version}"` },
          body: { description: `d${rand()}` },
        });
        expect(res.status).toBe(200);
        target.version++;
        record(res, ['Workspace Updated']);
        versions.set(res.headers['x-amzn-requestid'] as string, target.version);
      },
      async staleUpdate() {
        const target = pick(workspaces);
        const res = await call('PUT', `/workspaces/${target.id}`, {
          headers: { ...asSuperAdmin(), 'If-Match': `"${target.version + 5}"` },
          body: { description: 'stale' },
        });
        expect(res.status).toBe(412);
        record(res, []);
      },
      async createKey() {
        const target = pick(workspaces);
        const res = await call('POST', `/workspaces/${target.id}/apikeys`, {
          headers: asSuperAdmin(),
          body: { name: 'k', role_id: pick(['viewer', 'editor', 'admin']) },
        });
        expect(res.status).toBe(201);
        keys.push({ ws: target.id, id: res.body.id, revoked: false });
        record(res, ['API Key Created']);
      },
      async badKey() {
        const target = pick(workspaces);
        const res = await call('POST', `/workspaces/${target.id}/apikeys`, {
          headers: asSuperAdmin(),
          body: { name: 'k', role_id: 'no-such-role' },
        });
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        record(res, []);
      },
      async revokeKey() {
        const live = keys.filter((k) => !k.revoked);
        if (live.length === 0) return steps.createKey?.();
        const key = pick(live);
        const res = await call('DELETE', `/workspaces/${key.ws}/apikeys/${key.id}`, {
          headers: asSuperAdmin(),
        });
        expect(res.status).toBe(204);
        key.revoked = true;
        record(res, ['API Key Updated']);
      },
      async createRole() {
        const id = `r-${Math.floor(rand() * 1e9).toString(36)}`;
        const res = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id } });
        expect(res.status).toBe(201);
        roles.push(id);
        record(res, ['Role Created']);
      },
      async duplicateRole() {
        if (roles.length === 0) return steps.createRole?.();
        const res = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: pick(roles) } });
        expect(res.status).toBe(409);
        record(res, []);
      },
      async forbidden() {
        const viewer = await createKey(pick(workspaces).id, 'viewer');
        keys.push({ ws: '', id: viewer.id, revoked: true });
        const res = await call('PUT', `/workspaces/${workspaces[0]?.id}`, {
          headers: withKey(viewer.key),
          body: { description: 'nope' },
        });
        expect(res.status).toBe(403);
        record(res, []);
      },
    };
    const names = Object.keys(steps);
    for (let i = 0; i < 40; i++) await steps[pick(names)]?.();

    const ids = new Set(expected.keys());
    const total = [...expected.values()].reduce((n, types) => n + types.length, 0);
    const events = await eventsOf(start, ids, total);
    const byRequest = new Map<string, FeedEvent[]>();
    for (const e of events)
      byRequest.set(e.detail.request_id, [...(byRequest.get(e.detail.request_id) ?? []), e]);
    for (const [requestId, types] of expected) {
      const got = byRequest.get(requestId) ?? [];
      expect(
        got.map((e) => e['detail-type']),
        `seed ${seed}, request ${requestId}`,
      ).toEqual(types);
      for (const e of got) {
        // Each event has the documented shape (docs/events/catalog-event.schema.json).
        expect(CatalogEventBody.safeParse(e).error, JSON.stringify(e)).toBeUndefined();
        expect(e.source).toBe('geoplane');
        expect(e.detail.principal.id).toMatch(/^apikey:/);
        const version = versions.get(requestId);
        if (version !== undefined) expect(e.detail.version).toBe(version);
      }
    }
    // Unique event ids: nothing delivered twice.
    expect(new Set(events.map((e) => e.detail.event_id)).size).toBe(events.length);
  }, 120_000);

  it('names each kind of entity in its detail-type: styles, settings, tile matrix sets, claim mappings, role policies', async () => {
    const ws = await createWorkspace();
    const { cursor } = await readFeed();
    const su = asSuperAdmin();
    const expected = new Map<string, string[]>();
    const expect1 = (
      res: { status: number; text: string; headers: Record<string, string> },
      ok: number,
      types: string[],
    ) => {
      expect(res.status, res.text).toBe(ok);
      expected.set(res.headers['x-amzn-requestid'] as string, types);
    };
    const style = { version: 8, sources: {}, layers: [{ id: 'bg', type: 'background' }] };
    expect1(
      await call('POST', `/workspaces/${ws.id}/styles`, {
        headers: su,
        body: { name: 'st', format: 'mapbox', body: style },
      }),
      201,
      ['Style Created'],
    );
    expect1(
      await call('PUT', `/workspaces/${ws.id}/settings/wms`, {
        headers: su,
        body: { enabled: true, title: 'Maps' },
      }),
      200,
      // The first settings document of a kind is created (defaults until then).
      ['Settings Created'],
    );
    const mapping = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: su,
      body: { claim_name: 'groups', claim_value: `g-${ws.id}`, role_id: 'viewer' },
    });
    expect1(mapping, 201, ['Claim Mapping Created']);
    expect1(
      await call('DELETE', `/workspaces/${ws.id}/claim-mappings/${mapping.body.id}`, { headers: su }),
      204,
      ['Claim Mapping Deleted'],
    );
    const tms = `t${ws.id.slice(0, 8)}`;
    const level = {
      id: '0',
      scaleDenominator: 559082264.0287178,
      cellSize: 156543.03392804097,
      cornerOfOrigin: 'topLeft',
      pointOfOrigin: [-20037508.3427892, 20037508.3427892],
      tileWidth: 256,
      tileHeight: 256,
      matrixWidth: 1,
      matrixHeight: 1,
    };
    expect1(
      await call('PUT', `/tile-matrix-sets/${tms}`, {
        headers: su,
        body: {
          id: tms,
          title: 't',
          crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
          tileMatrices: [level],
        },
      }),
      201,
      ['Tile Matrix Set Created'],
    );
    const role = `r-${ws.id.slice(0, 8)}`;
    expect1(await call('POST', '/roles', { headers: su, body: { id: role } }), 201, ['Role Created']);
    expect1(
      await call('POST', `/roles/${role}/policies`, {
        headers: su,
        body: { workspace: ws.id, service: 'management', operation: 'getWorkspace', action: 'read' },
      }),
      201,
      ['Role Policy Created'],
    );
    const events = await eventsOf(cursor, new Set(expected.keys()), expected.size);
    for (const [requestId, types] of expected) {
      const got = events.filter((e) => e.detail.request_id === requestId);
      expect(
        got.map((e) => e['detail-type']),
        requestId,
      ).toEqual(types);
      for (const e of got) expect(CatalogEventBody.safeParse(e).error).toBeUndefined();
    }
  });

  it('reports a recursive deletion: its start by the caller, then the workflow removing the workspace', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'viewer');
    const { cursor } = await readFeed();
    const res = await call('DELETE', `/workspaces/${ws.id}?recurse=true`, { headers: asSuperAdmin() });
    expect(res.status, res.text).toBe(202);
    const requestId = res.headers['x-amzn-requestid'] as string;
    const started = await eventsOf(cursor, new Set([requestId]), 2);
    expect(started.map((e) => e['detail-type']).sort()).toEqual(['Deletion Created', 'Workspace Updated']);
    expect(started.find((e) => e.detail.type === 'workspace')?.detail).toMatchObject({
      id: ws.id,
      status: 'deleting',
    });
    // The workflow's changes are the system's, under the deletion's id.
    const deletionId = res.body.id as string;
    const done = await eventsOf(cursor, new Set([deletionId]), 3);
    const types = done.map((e) => e['detail-type']);
    // Dependents go in batches and are reported by the deletion itself (its plan and progress), ADR 0094.
    expect(types.filter((t) => t === 'Workspace Deleted')).toHaveLength(1);
    expect(done.filter((e) => e.detail.type === 'deletion').map((e) => e.detail.status)).toContain(
      'completed',
    );
    expect(done.some((e) => e.detail.id === key.id)).toBe(false);
    for (const e of done) {
      expect(e.detail.principal.id).toBe('system:deletion');
      expect(e.detail.operation).toBe('workflow:deletion');
    }
  });
});
