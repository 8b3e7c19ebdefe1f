import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { localIssuer } from '#infra/local/files.ts';
import { type ApiResponse, agentFor, asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { bearer, createKey, createWorkspace, expectError, token, withKey } from '../support/fixtures.ts';

/** The embedded PostGIS of the shared test host (written by its bootstrap). */
let postgis: { host: string; port: number; database: string; user: string; password?: string };

beforeAll(() => {
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
});

const N = 20;

/** Sends exactly these headers (the test client would add a Content-Type to a body). */
function rawCall(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<ApiResponse> {
  const host = inject('host');
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(host.url + path),
      { method, agent: agentFor(host.dataDir), headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = String(v);
          resolve({
            status: res.statusCode ?? 0,
            headers: out,
            text,
            body: text ? JSON.parse(text) : undefined,
            cookies: [],
          });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** `n` copies of a request sent at once. */
function together<T>(n: number, send: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => send(i)));
}

/** No error body may quote a JavaScript built-in (`function Object() { [native code] }`). */
function expectNoNativeCode(res: { text: string }) {
  expect(res.text).not.toMatch(/native code|function |\[object /);
}

async function tokenWith(claims: Record<string, unknown>) {
  const issuer = await localIssuer(inject('host').dataDir);
  return bearer(await issuer.sign(claims, uniqueName('sub')));
}

function tileMatrixSet(id: string, title: string) {
  return {
    id,
    title,
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    tileMatrices: [
      {
        id: '0',
        scaleDenominator: 559082264.0287178,
        cellSize: 156543.03392804097,
        pointOfOrigin: [-20037508.3427892, 20037508.3427892],
        tileWidth: 256,
        tileHeight: 256,
        matrixWidth: 1,
        matrixHeight: 1,
      },
    ],
  };
}

const sld = (title: string) => `<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc">
  <NamedLayer><Name>${title}</Name><UserStyle><FeatureTypeStyle><Rule>
    <PointSymbolizer><Graphic><Mark><WellKnownName>circle</WellKnownName></Mark><Size>8</Size></Graphic></PointSymbolizer>
  </Rule></FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>`;

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

async function serviceIn(wsId: string, name = 'pg', enabled = true) {
  const res = await call('POST', `/workspaces/${wsId}/services`, {
    headers: asSuperAdmin(),
    body: { name, type: 'postgis', enabled, connection: postgis },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; version: number };
}

async function draftLayer(wsId: string, serviceId: string, sourceLayer = 'places') {
  const res = await call('POST', `/workspaces/${wsId}/services/${serviceId}/layers`, {
    headers: asSuperAdmin(),
    body: { source_layer: sourceLayer, enabled: false },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; public_id: string; version: number };
}

/**
 * 20 concurrent PUTs without If-Match all succeed (last writer wins, each on its own version);
 * the final version counts every one of them.
 */
function expectLastWriterWins(
  results: { status: number; text: string; headers: Record<string, string> }[],
  first: number,
) {
  for (const r of results) expect(r.status, r.text).toBe(200);
  const versions = results.map((r) => Number(r.headers.etag?.replaceAll('"', ''))).sort((a, b) => a - b);
  expect(versions).toEqual(Array.from({ length: results.length }, (_, i) => first + 1 + i));
}

/** Of concurrent PUTs that all name the same (then current) version, one wins and the rest get 412. */
function expectOneWinnerRestPreconditionFailed(
  results: { status: number; body: unknown; headers: Record<string, string> }[],
) {
  expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  for (const r of results.filter((x) => x.status !== 200)) expectError(r, 412, 'version_mismatch');
}

describe('last writer wins: concurrent PUTs without If-Match all succeed; with If-Match the 412 stays', () => {
  it(`updateWorkspace: ${N} concurrent PUTs without If-Match → all 200, versions 2…${N + 1}`, async () => {
    // Prepare
    const ws = await createWorkspace();
    // Act
    const results = await together(N, (i) =>
      call('PUT', `/workspaces/${ws.id}`, { headers: asSuperAdmin(), body: { description: `writer ${i}` } }),
    );
    const final = await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    // Assess
    expectLastWriterWins(results, 1);
    expect(final.body.version).toBe(N + 1);
    const last = results.find((r) => r.headers.etag === `"${N + 1}"`);
    expect(final.body.description).toBe(last?.body.description);
  });

  it('updateWorkspace: concurrent PUTs with the current If-Match → one 200, the rest 412 (never 409)', async () => {
    const ws = await createWorkspace();
    const results = await together(N, (i) =>
      call('PUT', `/workspaces/${ws.id}`, {
        headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
        body: { description: `writer ${i}` },
      }),
    );
    expectOneWinnerRestPreconditionFailed(results);
    const final = await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    expect(final.body.version).toBe(2);
  });

  it('updateWorkspace: a stale If-Match is 412 and changes nothing', async () => {
    const ws = await createWorkspace(uniqueName(), 'kept');
    await call('PUT', `/workspaces/${ws.id}`, { headers: asSuperAdmin(), body: { description: 'v2' } });
    const stale = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { description: 'stale' },
    });
    expectError(stale, 412, 'version_mismatch');
    const final = await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    expect(final.body).toMatchObject({ version: 2, description: 'v2' });
  });

  it('updateWorkspace: concurrent renames and description changes without If-Match all succeed', async () => {
    const ws = await createWorkspace();
    const names = Array.from({ length: 6 }, () => uniqueName('rn'));
    const results = await together(12, (i) =>
      call('PUT', `/workspaces/${ws.id}`, {
        headers: asSuperAdmin(),
        body: i % 2 ? { name: names[i % names.length] } : { description: `d${i}` },
      }),
    );
    expectLastWriterWins(results, 1);
    const final = await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    // The name marker follows the final name: the workspace resolves by it, and by no other.
    expect((await call('GET', `/workspaces/${final.body.name}`, { headers: asSuperAdmin() })).status).toBe(
      200,
    );
    for (const n of names.filter((x) => x !== final.body.name)) {
      expect((await call('GET', `/workspaces/${n}`, { headers: asSuperAdmin() })).status).toBe(404);
    }
  });

  it(`updateWMSSettings: ${N} concurrent PUTs without If-Match → all 200`, async () => {
    const ws = await createWorkspace();
    const results = await together(N, (i) =>
      call('PUT', `/workspaces/${ws.id}/settings/wms`, {
        headers: asSuperAdmin(),
        body: { enabled: true, title: `writer ${i}`, max_width: 2048 },
      }),
    );
    expectLastWriterWins(results, 0);
    const stale = await call('PUT', `/workspaces/${ws.id}/settings/wms`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { enabled: true, title: 'stale', max_width: 2048 },
    });
    expectError(stale, 412, 'version_mismatch');
  });

  it(`putTileMatrixSet: ${N} concurrent PUTs of an existing set without If-Match → all 200`, async () => {
    const id = uniqueName('tms');
    const first = await call('PUT', `/tile-matrix-sets/${id}`, {
      headers: asSuperAdmin(),
      body: tileMatrixSet(id, 'v1'),
    });
    expect(first.status, first.text).toBe(201);
    const results = await together(N, (i) =>
      call('PUT', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin(), body: tileMatrixSet(id, `w${i}`) }),
    );
    expectLastWriterWins(results, 1);
    const stale = await call('PUT', `/tile-matrix-sets/${id}`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: tileMatrixSet(id, 'stale'),
    });
    expectError(stale, 412, 'version_mismatch');
  });

  it('putTileMatrixSet: concurrent first PUTs of a new set → one 201, the rest 200', async () => {
    const id = uniqueName('tms');
    const results = await together(10, (i) =>
      call('PUT', `/tile-matrix-sets/${id}`, { headers: asSuperAdmin(), body: tileMatrixSet(id, `w${i}`) }),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, results.map((r) => r.text).join('\n')).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200, 200, 201,
    ]);
  });

  it(`updateLayer and updateLayerGroup: ${N} concurrent PUTs without If-Match → all 200`, async () => {
    const ws = await createWorkspace();
    const service = await serviceIn(ws.id);
    const layer = await draftLayer(ws.id, service.id);
    const group = await call('POST', `/workspaces/${ws.id}/layer-groups`, {
      headers: asSuperAdmin(),
      body: { public_id: 'grp', members: [{ resource: layer.public_id }] },
    });
    expect(group.status, group.text).toBe(201);
    const layerPath = `/workspaces/${ws.id}/services/${service.id}/layers/${layer.id}`;
    const groupPath = `/workspaces/${ws.id}/layer-groups/${group.body.id}`;
    const [layers, groups] = await Promise.all([
      together(N, (i) =>
        call('PUT', layerPath, { headers: asSuperAdmin(), body: { title: `t${i}`, enabled: false } }),
      ),
      together(N, (i) =>
        call('PUT', groupPath, {
          headers: asSuperAdmin(),
          body: { public_id: 'grp', title: `g${i}`, members: [{ resource: layer.public_id }] },
        }),
      ),
    ]);
    expectLastWriterWins(layers, 1);
    expectLastWriterWins(groups, 1);
    const stale = await call('PUT', layerPath, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { title: 'stale', enabled: false },
    });
    expectError(stale, 412, 'version_mismatch');
  });

  it(`updateService, updateStyle and putStyleAsset: ${N} concurrent PUTs without If-Match → all 200`, async () => {
    const ws = await createWorkspace();
    const service = await serviceIn(ws.id, 'svc', false);
    const style = await call('POST', `/workspaces/${ws.id}/styles`, {
      headers: asSuperAdmin(),
      body: { name: 'st', format: 'sld_1.0.0', body: sld('first') },
    });
    expect(style.status, style.text).toBe(201);
    const asset = `/workspaces/${ws.id}/style-assets/icon.png`;
    const uploaded = await call('PUT', asset, {
      headers: { ...asSuperAdmin(), 'Content-Type': 'image/png' },
      body: PNG,
    });
    expect(uploaded.status, uploaded.text).toBe(201);
    const [services, styles, assets] = await Promise.all([
      together(N, () =>
        call('PUT', `/workspaces/${ws.id}/services/${service.id}`, {
          headers: asSuperAdmin(),
          body: { name: 'svc', type: 'postgis', enabled: false, connection: postgis },
        }),
      ),
      together(N, (i) =>
        call('PUT', `/workspaces/${ws.id}/styles/st`, {
          headers: asSuperAdmin(),
          body: { name: 'st', format: 'sld_1.0.0', body: sld(`w${i}`) },
        }),
      ),
      together(N, () =>
        call('PUT', asset, { headers: { ...asSuperAdmin(), 'Content-Type': 'image/png' }, body: PNG }),
      ),
    ]);
    expectLastWriterWins(services, 1);
    expectLastWriterWins(styles, 1);
    // An asset's ETag is the digest of its bytes (ADR 0087): every upload applied, one after another.
    for (const r of assets) expect(r.status, r.text).toBe(200);
    for (const r of assets) expect(r.headers.etag).toBe(uploaded.headers.etag);
    const listed = await call('GET', `/workspaces/${ws.id}/style-assets`, { headers: asSuperAdmin() });
    const icon = (listed.body.assets ?? listed.body.style_assets ?? []).find(
      (a: { name: string }) => a.name === 'icon.png',
    );
    expect(icon?.version, listed.text).toBe(1 + N);
    const stale = await call('PUT', `/workspaces/${ws.id}/styles/st`, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { name: 'st', format: 'sld_1.0.0', body: sld('stale') },
    });
    expectError(stale, 412, 'version_mismatch');
  });
});

const jsonRoutes = routes.filter((op) => op.request.body !== undefined);

/** A concrete path of a route: every `{param}` filled with a value its schema accepts. */
function concretePath(path: string): string {
  return path
    .replace('/api/v1', '')
    .replace(/\{([^}]+)\}/g, (_m, name: string) =>
      name === 'mappingId' || name === 'id' ? '00000000-0000-4000-8000-000000000000' : `x-${name}`,
    );
}

describe('415: JSON routes take application/json or +json (charset utf-8 only)', () => {
  it.each([
    ['text/plain'],
    ['text/plain; charset=utf-8'],
    ['application/x-www-form-urlencoded'],
    ['multipart/form-data; boundary=----x'],
    ['application/xml'],
    ['text/json'],
    ['application/jsonx'],
    ['application/json-seq'],
    ['application/json; charset=iso-8859-1'],
    ['application/json; charset=utf-16'],
    ['application/json; charset=utf-8; extra=1'],
    ['application/problem+xml'],
    ['image/png'],
    ['application/octet-stream'],
    ['*/*'],
    ['application/*'],
    ['application/json, text/plain'],
    ['garbage'],
  ])('createWorkspace with %j is 415 with the standard body, and creates nothing', async (type) => {
    // Prepare
    const name = uniqueName('ct');
    // Act
    const res = await call('POST', '/workspaces', {
      headers: { ...asSuperAdmin(), 'Content-Type': type },
      body: JSON.stringify({ name }),
    });
    const after = await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() });
    // Assess
    expectError(res, 415, 'unsupported_media_type');
    expect(res.body.message).toBe('Unsupported Media Type');
    expect(after.status).toBe(404);
  });

  it('a body without a Content-Type is 415; an empty body without one is 400 body_required', async () => {
    const name = uniqueName('ct');
    const payload = JSON.stringify({ name });
    const missing = await rawCall(
      'POST',
      '/workspaces',
      { ...asSuperAdmin(), 'Content-Length': String(Buffer.byteLength(payload)) },
      payload,
    );
    expectError(missing, 415, 'unsupported_media_type');
    const blank = await rawCall(
      'POST',
      '/workspaces',
      { ...asSuperAdmin(), 'Content-Type': '', 'Content-Length': String(Buffer.byteLength(payload)) },
      payload,
    );
    expectError(blank, 415, 'unsupported_media_type');
    expect((await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() })).status).toBe(404);
    const empty = await rawCall('POST', '/workspaces', asSuperAdmin());
    expectError(empty, 400, 'body_required');
  });

  it.each([
    ['application/json'],
    ['APPLICATION/JSON'],
    ['application/json; charset=utf-8'],
    ['application/json;charset=UTF-8'],
    ['application/json; charset="utf-8"'],
    ['application/merge-patch+json'],
    ['application/vnd.geoplane.workspace+json; charset=utf-8'],
  ])('createWorkspace with %j is accepted (201)', async (type) => {
    const name = uniqueName('ct');
    const res = await call('POST', '/workspaces', {
      headers: { ...asSuperAdmin(), 'Content-Type': type },
      body: JSON.stringify({ name }),
    });
    expect(res.status, res.text).toBe(201);
  });

  it('a form-encoded PUT changes nothing (415)', async () => {
    const ws = await createWorkspace(uniqueName(), 'kept');
    const res = await call('PUT', `/workspaces/${ws.id}`, {
      headers: { ...asSuperAdmin(), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify({ description: 'changed' }),
    });
    expectError(res, 415, 'unsupported_media_type');
    const final = await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
    expect(final.body).toMatchObject({ version: 1, description: 'kept' });
  });

  it.each(jsonRoutes.map((op) => [op.operationId, op] as const))(
    '%s refuses text/plain with 415',
    async (_id, op) => {
      const res = await call(op.method, concretePath(op.path), {
        headers: { ...asSuperAdmin(), 'Content-Type': 'text/plain' },
        body: '{}',
      });
      expectError(res, 415, 'unsupported_media_type');
    },
  );

  it('putStyleAsset keeps taking raw bytes (image/png and application/octet-stream)', async () => {
    const ws = await createWorkspace();
    const png = await call('PUT', `/workspaces/${ws.id}/style-assets/a.png`, {
      headers: { ...asSuperAdmin(), 'Content-Type': 'image/png' },
      body: PNG,
    });
    const octets = await call('PUT', `/workspaces/${ws.id}/style-assets/b.png`, {
      headers: { ...asSuperAdmin(), 'Content-Type': 'application/octet-stream' },
      body: PNG,
    });
    expect(png.status, png.text).toBe(201);
    expect(octets.status, octets.text).toBe(201);
  });

  it('the OpenAPI document lists 415 on every operation that takes a JSON body', async () => {
    const doc = await call('GET', '/openapi.json');
    for (const op of jsonRoutes) {
      const entry = doc.body.paths[op.path][op.method.toLowerCase()];
      expect(entry.responses['415'], op.operationId).toBeDefined();
      expect(Object.keys(entry.requestBody.content)).toContain('application/json');
    }
  });
});

const builtInNames = [
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'toLocaleString',
];

describe('names that are Object.prototype members are ordinary names', () => {
  describe.each(builtInNames)('a workspace named %s', (name) => {
    let ws: { id: string; name: string };
    let other: { id: string; name: string };

    beforeAll(async () => {
      const res = await call('POST', '/workspaces', { headers: asSuperAdmin(), body: { name } });
      expect(res.status, res.text).toBe(201);
      ws = res.body;
      other = await createWorkspace();
    });

    it('is read and updated by super_admin by name and by id (200)', async () => {
      const byName = await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() });
      const byId = await call('GET', `/workspaces/${ws.id}`, { headers: asSuperAdmin() });
      const put = await call('PUT', `/workspaces/${name}`, {
        headers: asSuperAdmin(),
        body: { description: 'ok' },
      });
      expect(byName.status, byName.text).toBe(200);
      expect(byName.body.id).toBe(ws.id);
      expect(byId.status).toBe(200);
      expect(put.status, put.text).toBe(200);
    });

    it('answers 403 no_workspace_access to an API key of another workspace', async () => {
      const outsider = await createKey(other.id, 'admin');
      const res = await call('GET', `/workspaces/${name}`, { headers: withKey(outsider.key) });
      expectError(res, 403, 'no_workspace_access');
      expectNoNativeCode(res);
      const services = await call('GET', `/workspaces/${name}/services`, { headers: withKey(outsider.key) });
      expectError(services, 403, 'no_workspace_access');
      expectNoNativeCode(services);
    });

    it('answers 403 no_workspace_access to a token with roles elsewhere only, and to one with none', async () => {
      for (const jwt of [
        await token({ workspaces: { [other.name]: 'admin' } }),
        await token({}),
        await token({ workspaces: { [other.id]: 'viewer' } }),
      ]) {
        const res = await call('GET', `/workspaces/${name}/styles`, { headers: bearer(jwt) });
        expectError(res, 403, 'no_workspace_access');
        expectNoNativeCode(res);
      }
    });

    it('grants what its own roles say: a token role by name, a key of the workspace', async () => {
      const viewer = await token({ workspaces: { [name]: 'viewer' } });
      const read = await call('GET', `/workspaces/${name}/styles`, { headers: bearer(viewer) });
      const write = await call('PUT', `/workspaces/${name}`, {
        headers: bearer(viewer),
        body: { description: 'no' },
      });
      const editor = await createKey(ws.id, 'editor');
      const keyRead = await call('GET', `/workspaces/${name}`, { headers: withKey(editor.key) });
      const keyManage = await call('PUT', `/workspaces/${name}`, {
        headers: withKey(editor.key),
        body: { description: 'no' },
      });
      expect(read.status, read.text).toBe(200);
      expectError(write, 403, 'insufficient_role');
      expect(write.body.detail).toContain("'viewer'");
      expect(keyRead.status, keyRead.text).toBe(200);
      expectError(keyManage, 403, 'insufficient_role');
      expect(keyManage.body.detail).toContain("'editor'");
    });

    it('lists it in GET /auth/me for a token that names it, with the right role', async () => {
      const jwt = await token({ workspaces: { [name]: 'editor' } });
      const me = await call('GET', '/auth/me', { headers: bearer(jwt) });
      expect(me.status, me.text).toBe(200);
      expect(me.body.workspaces).toEqual([{ id: ws.id, name, role: 'editor' }]);
      expect(me.body.global_role).toBeNull();
    });
  });

  it.each(builtInNames)(
    'services, styles, layer groups and assets named %s are created, read and missing ones are 404',
    async (name) => {
      const ws = await createWorkspace();
      const editor = await createKey(ws.id, 'editor');
      const service = await serviceIn(ws.id, name, false);
      const style = await call('POST', `/workspaces/${ws.id}/styles`, {
        headers: withKey(editor.key),
        body: { name, format: 'sld_1.0.0', body: sld(name) },
      });
      const asset = await call('PUT', `/workspaces/${ws.id}/style-assets/${name}`, {
        headers: { ...withKey(editor.key), 'Content-Type': 'image/png' },
        body: PNG,
      });
      expect(style.status, style.text).toBe(201);
      expect(asset.status, asset.text).toBe(201);
      expect(
        (await call('GET', `/workspaces/${ws.id}/services/${name}`, { headers: withKey(editor.key) })).body
          .id,
      ).toBe(service.id);
      expect(
        (await call('GET', `/workspaces/${ws.id}/styles/${name}`, { headers: withKey(editor.key) })).status,
      ).toBe(200);
      // Names nobody created resolve to nothing, whatever Object.prototype holds.
      for (const missing of builtInNames.filter((n) => n !== name)) {
        for (const path of [
          `/workspaces/${ws.id}/services/${missing}`,
          `/workspaces/${ws.id}/styles/${missing}`,
          `/workspaces/${ws.id}/style-assets/${missing}`,
          `/workspaces/${ws.id}/layer-groups/${missing}`,
          `/tile-matrix-sets/${missing}`,
          // (a role `constructor` is created by a later test)
          ...(missing === 'constructor' ? [] : [`/roles/${missing}`]),
        ]) {
          const res = await call('GET', path, { headers: asSuperAdmin() });
          expectError(res, 404);
          expectNoNativeCode(res);
        }
      }
    },
  );

  it('a workspace that does not exist, named like a built-in, is 403 for others and 404 for super_admin', async () => {
    const ws = await createWorkspace();
    const key = await createKey(ws.id, 'admin');
    for (const name of ['propertyIsEnumerable', '__proto__', 'prototype']) {
      const res = await call('GET', `/workspaces/${name}`, { headers: withKey(key.key) });
      expectError(res, 403, 'no_workspace_access');
      expectNoNativeCode(res);
      expectError(await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() }), 404);
    }
  });
});

describe('roles and claim mappings keyed by built-in names', () => {
  it('a custom role "constructor" ranks below a built-in role of the same priority, and grants its policies', async () => {
    // Prepare: role `constructor` (no policies yet) and `viewer` both mapped from the same claim.
    const ws = await createWorkspace();
    const created = await call('POST', '/roles', { headers: asSuperAdmin(), body: { id: 'constructor' } });
    expect(created.status, created.text).toBe(201);
    const group = uniqueName('grp');
    for (const role_id of ['constructor', 'viewer']) {
      const res = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
        headers: asSuperAdmin(),
        body: { claim_name: 'groups', claim_value: group, role_id },
      });
      expect(res.status, res.text).toBe(201);
    }
    const caller = await tokenWith({ groups: [group] });
    // Act
    const read = await call('GET', `/workspaces/${ws.id}/styles`, { headers: caller });
    const me = await call('GET', '/auth/me', { headers: caller });
    // Assess: the stronger built-in wins the tie (DESIGN §6), never the prototype's `constructor`.
    expect(read.status, read.text).toBe(200);
    expect(me.body.workspaces).toEqual([{ id: ws.id, name: ws.name, role: 'viewer' }]);

    // A higher priority makes `constructor` the role; it grants exactly its policies.
    const high = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: { claim_name: 'team', claim_value: group, role_id: 'constructor', priority: 10 },
    });
    expect(high.status, high.text).toBe(201);
    const member = await tokenWith({ groups: [group], team: group });
    const refused = await call('GET', `/workspaces/${ws.id}/styles`, { headers: member });
    expectError(refused, 403, 'insufficient_role');
    expect(refused.body.detail).toContain("'constructor'");
    const policy = await call('POST', '/roles/constructor/policies', {
      headers: asSuperAdmin(),
      body: { workspace: ws.id, service: 'management', operation: 'listStyles', action: 'read' },
    });
    expect(policy.status, policy.text).toBe(201);
    expect((await call('GET', `/workspaces/${ws.id}/styles`, { headers: member })).status).toBe(200);
  });

  it.each([['constructor'], ['toString'], ['valueOf'], ['hasOwnProperty'], ['__proto__'], ['prototype']])(
    'a claim mapping on the claim %j matches only a token that carries it',
    async (claim) => {
      const ws = await createWorkspace();
      const value = uniqueName('v');
      const res = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
        headers: asSuperAdmin(),
        body: { claim_name: claim, claim_value: value, role_id: 'viewer' },
      });
      expect(res.status, res.text).toBe(201);
      const carrying = await tokenWith({ [claim]: value });
      const nested = await tokenWith({ realm_access: { [claim]: [value] } });
      const without = await tokenWith({ other: value });
      const inherited = await tokenWith({ other: value, [claim === '__proto__' ? 'x' : claim]: 'nope' });
      expect((await call('GET', `/workspaces/${ws.id}/styles`, { headers: carrying })).status).toBe(200);
      for (const caller of [nested, without, inherited]) {
        const refused = await call('GET', `/workspaces/${ws.id}/styles`, { headers: caller });
        expectError(refused, 403, 'no_workspace_access');
        expectNoNativeCode(refused);
      }
    },
  );

  it.each([
    ['realm_access.constructor', { realm_access: { roles: ['a'] } }],
    ['realm_access.__proto__', { realm_access: { roles: ['a'] } }],
    ['constructor.name', {}],
    ['__proto__.toString', {}],
    ['toString.name', {}],
    ['groups.length', { groups: ['a'] }],
  ])('a dotted claim path %j never walks into inherited members', async (path, claims) => {
    const ws = await createWorkspace();
    // The values an inherited walk would find: the built-ins' names and their text.
    for (const value of [
      'Object',
      'toString',
      'function Object() { [native code] }',
      '1',
      '[object Object]',
    ]) {
      const res = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
        headers: asSuperAdmin(),
        body: { claim_name: path, claim_value: value, role_id: 'viewer' },
      });
      expect(res.status, res.text).toBe(201);
    }
    const caller = await tokenWith(claims);
    const refused = await call('GET', `/workspaces/${ws.id}/styles`, { headers: caller });
    expectError(refused, 403, 'no_workspace_access');
  });

  it('a dotted claim path finds an own nested claim named like a built-in', async () => {
    const ws = await createWorkspace();
    const res = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: { claim_name: 'realm_access.constructor', claim_value: 'gis', role_id: 'editor' },
    });
    expect(res.status, res.text).toBe(201);
    const caller = await tokenWith({ realm_access: { constructor: ['gis'] } });
    const read = await call('GET', `/workspaces/${ws.id}/styles`, { headers: caller });
    expect(read.status, read.text).toBe(200);
  });

  it('trusted role claims keyed by __proto__ or built-in names grant nothing they do not name', async () => {
    const ws = await createWorkspace();
    const jwt = await tokenWith({
      'geoplane:roles': JSON.parse(
        '{"__proto__": {"admin": "admin"}, "constructor": "admin", "toString": "admin", "x": "admin"}',
      ),
    });
    const res = await call('GET', `/workspaces/${ws.id}`, { headers: jwt });
    expectError(res, 403, 'no_workspace_access');
    expectNoNativeCode(res);
    const me = await call('GET', '/auth/me', { headers: jwt });
    expect(me.status, me.text).toBe(200);
    expect(me.body.global_role).toBeNull();
  });
});

describe('client keys named like Object.prototype members in queries, cursors, cookies, headers and bodies', () => {
  it.each([['constructor'], ['__proto__'], ['toString'], ['hasOwnProperty'], ['valueOf']])(
    'GET /workspaces?%s=1 is 400 validation_failed (unknown query parameter), never 5xx',
    async (param) => {
      const res = await call('GET', `/workspaces?${param}=1`, { headers: asSuperAdmin() });
      expectError(res, 400, 'validation_failed');
      const twice = await call('GET', `/workspaces?limit=5&${param}=1&${param}=2`, {
        headers: asSuperAdmin(),
      });
      expectError(twice, 400, 'validation_failed');
    },
  );

  it('a cursor whose keys are Object.prototype members is 400 invalid_cursor', async () => {
    const forged = (keys: string[]) =>
      Buffer.from(JSON.stringify(Object.fromEntries(keys.map((k) => [k, 'x'])))).toString('base64url');
    for (const cursor of [
      forged(['constructor', 'toString', 'valueOf', 'hasOwnProperty']),
      forged(['__proto__', 'constructor', 'toString', 'valueOf']),
      forged(['PK', 'SK', 'GSI1PK', 'constructor']),
    ]) {
      const res = await call('GET', `/workspaces?cursor=${cursor}`, { headers: asSuperAdmin() });
      expectError(res, 400, 'invalid_cursor');
    }
  });

  it('cookies and headers named like built-ins are ignored', async () => {
    const res = await call('GET', '/workspaces?limit=1', {
      headers: {
        ...asSuperAdmin(),
        Cookie: '__proto__=x; constructor=y; toString=z',
        constructor: 'a',
        ['__proto__']: 'b',
        hasOwnProperty: 'c',
      },
    });
    expect(res.status, res.text).toBe(200);
    const anonymous = await call('GET', '/workspaces', { headers: { Cookie: 'constructor=y; __proto__=z' } });
    expectError(anonymous, 401);
  });

  it.each([
    ['__proto__', '{"name":"NAME","__proto__":{"admin":true}}'],
    ['constructor', '{"name":"NAME","constructor":{"prototype":{"admin":true}}}'],
    ['toString', '{"name":"NAME","toString":"x"}'],
  ])('a JSON body with a %s key is 400 (strict bodies) and pollutes nothing', async (_key, template) => {
    const name = uniqueName('pp');
    const res = await call('POST', '/workspaces', {
      headers: asSuperAdmin(),
      body: template.replace('NAME', name),
    });
    expectError(res, 400, 'validation_failed');
    expect((await call('GET', `/workspaces/${name}`, { headers: asSuperAdmin() })).status).toBe(404);
    // The host still behaves: nothing leaked into Object.prototype.
    const after = await call('GET', '/workspaces?limit=1', { headers: asSuperAdmin() });
    expect(after.status).toBe(200);
  });

  it('a claim mapping body with a __proto__ key is 400 and creates nothing', async () => {
    const ws = await createWorkspace();
    const res = await call('POST', `/workspaces/${ws.id}/claim-mappings`, {
      headers: asSuperAdmin(),
      body: '{"claim_name":"g","claim_value":"v","role_id":"viewer","__proto__":{"role_id":"admin"}}',
    });
    expectError(res, 400, 'validation_failed');
    const list = await call('GET', `/workspaces/${ws.id}/claim-mappings`, { headers: asSuperAdmin() });
    expect(list.body.claim_mappings).toEqual([]);
  });
});
