import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { StyleBody, StyleSummary } from '#api/style-schemas.ts';
import { keys } from '#store/keys.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { describeCommonStatuses } from '../support/common-statuses.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';
import { hostDynamo } from '../support/store.ts';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

const sld = (version = '1.0.0', graphic?: string) => `<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="${version}" xmlns="http://www.opengis.net/sld" xmlns:ogc="http://www.opengis.net/ogc" xmlns:xlink="http://www.w3.org/1999/xlink">
  <NamedLayer><Name>roads</Name><UserStyle><FeatureTypeStyle><Rule>
    <PointSymbolizer><Graphic>${
      graphic
        ? `<ExternalGraphic><OnlineResource xlink:type="simple" xlink:href="${graphic}"/><Format>image/png</Format></ExternalGraphic>`
        : '<Mark><WellKnownName>circle</WellKnownName></Mark>'
    }<Size>8</Size></Graphic></PointSymbolizer>
  </Rule></FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>`;

const se = `<se:FeatureTypeStyle version="1.1.0" xmlns:se="http://www.opengis.net/se"><se:Rule><se:LineSymbolizer/></se:Rule></se:FeatureTypeStyle>`;

const mapbox = (icon?: string) => ({
  version: 8,
  sources: { roads: { type: 'vector', url: 'https://tiles.example/roads.json' } },
  layers: [
    { id: 'bg', type: 'background', paint: { 'background-color': '#ffffff' } },
    ...(icon
      ? [
          {
            id: 'poi',
            type: 'symbol',
            source: 'roads',
            'source-layer': 'poi',
            layout: { 'icon-image': icon },
          },
        ]
      : []),
  ],
});

async function upload(ws: string, name: string, bytes = PNG) {
  const res = await call('PUT', `/workspaces/${ws}/style-assets/${name}`, {
    headers: { ...asSuperAdmin(), 'Content-Type': 'image/png' },
    body: bytes,
  });
  expect([200, 201], res.text).toContain(res.status);
  return res.body;
}

const create = (ws: string, body: unknown, headers = asSuperAdmin()) =>
  call('POST', `/workspaces/${ws}/styles`, { headers, body });

describe('createStyle', () => {
  it.each([
    ['sld_1.0.0', sld('1.0.0')],
    ['sld_1.1.0', sld('1.1.0')],
    ['se_1.1.0', se],
    ['mapbox', mapbox()],
    ['mapbox', JSON.stringify(mapbox())],
  ] as const)('creates a %s style (201, Location), readable and listed', async (format, body) => {
    // Prepare
    const ws = await createWorkspace();
    const editor = await createKey(ws.id, 'editor');
    const name = uniqueName('style');
    // Act
    const res = await create(ws.id, { name, format, body, title: 'Roads' }, withKey(editor.key));
    const got = await call('GET', `/workspaces/${ws.name}/styles/${name}`, { headers: withKey(editor.key) });
    const list = await call('GET', `/workspaces/${ws.id}/styles`, { headers: withKey(editor.key) });
    // Assess
    expect(res.status, res.text).toBe(201);
    expect(StyleBody.safeParse(res.body).success).toBe(true);
    expect(res.headers.location).toBe(`/api/v1/workspaces/${ws.id}/styles/${name}`);
    expect(res.headers.etag).toBe('"1"');
    expect(got.status).toBe(200);
    expect(got.body.format).toBe(format);
    if (format === 'mapbox') expect(got.body.body).toEqual(mapbox());
    else expect(got.body.body).toBe(body);
    expect(list.body.styles.map((s: { name: string }) => s.name)).toEqual([name]);
    expect(list.body.styles[0]).not.toHaveProperty('body');
    expect(StyleSummary.safeParse(list.body.styles[0]).success).toBe(true);
  });

  it.each([
    [
      'malformed XML',
      'sld_1.0.0',
      '<StyledLayerDescriptor version="1.0.0"><NamedLayer></StyledLayerDescriptor>',
      'malformed_xml',
    ],
    ['the wrong root', 'sld_1.0.0', '<FeatureTypeStyle version="1.0.0"/>', 'invalid_style'],
    ['the wrong SLD version', 'sld_1.1.0', sld('1.0.0'), 'invalid_style'],
    ['SE with an SLD root', 'se_1.1.0', sld('1.1.0'), 'invalid_style'],
    ['a DTD', 'sld_1.0.0', `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>${se}`, 'xml_dtd_refused'],
    ['JSON text that is not JSON', 'mapbox', '{"version":', 'invalid_style'],
    ['a style the MapLibre validator refuses', 'mapbox', { version: 7, layers: [] }, 'invalid_style'],
    [
      'a bad paint value',
      'mapbox',
      { ...mapbox(), layers: [{ id: 'b', type: 'background', paint: { 'background-color': 3 } }] },
      'invalid_style',
    ],
    ['an XML body given as an object', 'sld_1.0.0', { not: 'xml' }, 'invalid_style'],
    ['an asset that does not exist', 'sld_1.0.0', sld('1.0.0', 'asset:nope'), 'unknown_asset'],
    ['an invalid asset reference', 'mapbox', mapbox('asset:bad name'), 'invalid_asset_reference'],
  ] as const)('refuses %s with 400 and stores nothing', async (_what, format, body, reason) => {
    const ws = await createWorkspace();
    const name = uniqueName('bad');
    expectError(await create(ws.id, { name, format, body }), 400, reason);
    expectError(
      await call('GET', `/workspaces/${ws.id}/styles/${name}`, { headers: asSuperAdmin() }),
      404,
      'style_not_found',
    );
  });

  it('refuses an unknown format, a bad name or an unknown field with 400', async () => {
    const ws = await createWorkspace();
    expectError(await create(ws.id, { name: 'a', format: 'css', body: 'x' }), 400, 'validation_failed');
    expectError(
      await create(ws.id, { name: 'bad name', format: 'mapbox', body: mapbox() }),
      400,
      'validation_failed',
    );
    expectError(
      await create(ws.id, { name: 'a', format: 'mapbox', body: mapbox(), extra: 1 }),
      400,
      'validation_failed',
    );
  });

  it('answers 409 for a taken name (one winner among concurrent creates)', async () => {
    const ws = await createWorkspace();
    const body = { name: 'dup', format: 'mapbox', body: mapbox() };
    const results = await Promise.all(Array.from({ length: 5 }, () => create(ws.id, body)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'style_exists');
  });

  it('answers 413 for a body over the style limit (256 KiB) before parsing it', async () => {
    const ws = await createWorkspace();
    const padding = ' '.repeat(256 * 1024);
    const res = await create(ws.id, `{"name":"big","format":"sld_1.0.0","body":"x"}${padding}`);
    expectError(res, 413, 'body_too_large');
  });

  it('is editor+: 403 to a viewer, 401 without a credential, 404 for an unknown workspace (super_admin)', async () => {
    const ws = await createWorkspace();
    const viewer = await createKey(ws.id, 'viewer');
    const body = { name: 'v', format: 'mapbox', body: mapbox() };
    expectError(await create(ws.id, body, withKey(viewer.key)), 403);
    expectError(await create(ws.id, body, {}), 401, 'unauthenticated');
    expectError(await create(uniqueName('nows'), body), 404, 'workspace_not_found');
  });
});

describe('styles and their asset references', () => {
  it('records SLD OnlineResource and Mapbox icon-image/sprite references; the asset can be deleted once no style names it', async () => {
    // Prepare
    const ws = await createWorkspace();
    await upload(ws.id, 'pin');
    await upload(ws.id, 'sprite');
    // Act
    const a = await create(ws.id, { name: 'a', format: 'sld_1.1.0', body: sld('1.1.0', 'asset:pin') });
    const b = await create(ws.id, {
      name: 'b',
      format: 'mapbox',
      body: { ...mapbox('asset://pin'), sprite: 'asset:sprite' },
    });
    // Assess
    expect(a.body.asset_refs).toEqual(['pin']);
    expect(b.body.asset_refs).toEqual(['pin', 'sprite']);
    const refused = await call('DELETE', `/workspaces/${ws.id}/style-assets/pin`, {
      headers: asSuperAdmin(),
    });
    expectError(refused, 409, 'asset_referenced');
    expect(refused.body.detail).toMatch(/by style (a|b)\b/);
    // Dropping the reference from one style still leaves the other.
    const updated = await call('PUT', `/workspaces/${ws.id}/styles/a`, {
      headers: asSuperAdmin(),
      body: { name: 'a', format: 'sld_1.1.0', body: sld('1.1.0') },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.asset_refs).toEqual([]);
    const still = await call('DELETE', `/workspaces/${ws.id}/style-assets/pin`, { headers: asSuperAdmin() });
    expectError(still, 409, 'asset_referenced');
    expect(still.body.detail).toContain('by style b');
    expect((await call('DELETE', `/workspaces/${ws.id}/styles/b`, { headers: asSuperAdmin() })).status).toBe(
      204,
    );
    expect(
      (await call('DELETE', `/workspaces/${ws.id}/style-assets/pin`, { headers: asSuperAdmin() })).status,
    ).toBe(204);
    expect(
      (await call('DELETE', `/workspaces/${ws.id}/style-assets/sprite`, { headers: asSuperAdmin() })).status,
    ).toBe(204);
  });

  it('moves references with a rename: the asset stays protected under the new name', async () => {
    const ws = await createWorkspace();
    await upload(ws.id, 'icon');
    await create(ws.id, { name: 'old', format: 'mapbox', body: mapbox('asset:icon') });
    const renamed = await call('PUT', `/workspaces/${ws.id}/styles/old`, {
      headers: asSuperAdmin(),
      body: { name: 'new', format: 'mapbox', body: mapbox('asset:icon') },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.name).toBe('new');
    expectError(await call('GET', `/workspaces/${ws.id}/styles/old`, { headers: asSuperAdmin() }), 404);
    const refused = await call('DELETE', `/workspaces/${ws.id}/style-assets/icon`, {
      headers: asSuperAdmin(),
    });
    expectError(refused, 409, 'asset_referenced');
    expect(refused.body.detail).toContain('by style new');
  });

  it('never loses a reference racing with the asset delete: the style save or the delete fails', async () => {
    for (let round = 0; round < 5; round++) {
      const ws = await createWorkspace();
      await upload(ws.id, 'racy');
      const [save, del] = await Promise.all([
        create(ws.id, { name: 's', format: 'mapbox', body: mapbox('asset:racy') }),
        call('DELETE', `/workspaces/${ws.id}/style-assets/racy`, { headers: asSuperAdmin() }),
      ]);
      expect(save.status === 201 && del.status === 204, `${save.status} ${del.status}`).toBe(false);
      if (save.status === 201) expectError(del, 409, 'asset_referenced');
      else expectError(save, 400, 'unknown_asset');
    }
  });
});

describe('updateStyle and deleteStyle', () => {
  it('replaces a style (200, version 2), honours If-Match (412), and 409 when renaming onto a taken name', async () => {
    const ws = await createWorkspace();
    await create(ws.id, { name: 'one', format: 'mapbox', body: mapbox(), title: 'T' });
    await create(ws.id, { name: 'two', format: 'mapbox', body: mapbox() });
    const path = `/workspaces/${ws.id}/styles/one`;
    const stale = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"5"' },
      body: { name: 'one', format: 'se_1.1.0', body: se },
    });
    expectError(stale, 412, 'version_mismatch');
    const res = await call('PUT', path, {
      headers: { ...asSuperAdmin(), 'If-Match': '"1"' },
      body: { name: 'one', format: 'se_1.1.0', body: se },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ version: 2, format: 'se_1.1.0', body: se });
    expect(res.body).not.toHaveProperty('title');
    expect(res.headers.etag).toBe('"2"');
    const taken = await call('PUT', path, {
      headers: asSuperAdmin(),
      body: { name: 'two', format: 'mapbox', body: mapbox() },
    });
    expectError(taken, 409, 'style_exists');
    expect((await call('GET', path, { headers: asSuperAdmin() })).body.version).toBe(2);
  });

  it('answers 400 for an invalid body, 404 for an unknown style, 413 over the limit, 403 to a viewer', async () => {
    const ws = await createWorkspace();
    await create(ws.id, { name: 's', format: 'mapbox', body: mapbox() });
    const viewer = await createKey(ws.id, 'viewer');
    const path = `/workspaces/${ws.id}/styles/s`;
    expectError(
      await call('PUT', path, {
        headers: asSuperAdmin(),
        body: { name: 's', format: 'sld_1.0.0', body: '<x' },
      }),
      400,
      'malformed_xml',
    );
    expectError(
      await call('PUT', `/workspaces/${ws.id}/styles/none`, {
        headers: asSuperAdmin(),
        body: { name: 'none', format: 'mapbox', body: mapbox() },
      }),
      404,
      'style_not_found',
    );
    expectError(
      await call('PUT', path, { headers: asSuperAdmin(), body: `{}${' '.repeat(256 * 1024)}` }),
      413,
      'body_too_large',
    );
    expectError(
      await call('PUT', path, {
        headers: withKey(viewer.key),
        body: { name: 's', format: 'mapbox', body: mapbox() },
      }),
      403,
    );
    expectError(await call('DELETE', path, { headers: withKey(viewer.key) }), 403);
    expect((await call('GET', path, { headers: withKey(viewer.key) })).status).toBe(200);
  });

  it('deletes a style (204), then 404; If-Match mismatch is 412', async () => {
    const ws = await createWorkspace();
    await create(ws.id, { name: 'gone', format: 'mapbox', body: mapbox() });
    const path = `/workspaces/${ws.id}/styles/gone`;
    expectError(
      await call('DELETE', path, { headers: { ...asSuperAdmin(), 'If-Match': '"3"' } }),
      412,
      'version_mismatch',
    );
    const res = await call('DELETE', path, { headers: asSuperAdmin() });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await call('DELETE', path, { headers: asSuperAdmin() }), 404, 'style_not_found');
    expectError(await call('GET', path, { headers: asSuperAdmin() }), 404, 'style_not_found');
  });

  it('pages the style list with a cursor pinned to it', async () => {
    const ws = await createWorkspace();
    for (const n of ['s1', 's2', 's3']) await create(ws.id, { name: n, format: 'mapbox', body: mapbox() });
    const first = await call('GET', `/workspaces/${ws.id}/styles?limit=2`, { headers: asSuperAdmin() });
    expect(first.body.styles.map((s: { name: string }) => s.name)).toEqual(['s1', 's2']);
    const second = await call('GET', `/workspaces/${ws.id}/styles?limit=2&cursor=${first.body.next_cursor}`, {
      headers: asSuperAdmin(),
    });
    expect(second.body.styles.map((s: { name: string }) => s.name)).toEqual(['s3']);
    expectError(
      await call('GET', `/workspaces/${ws.id}/styles?cursor=nope`, { headers: asSuperAdmin() }),
      400,
      'invalid_cursor',
    );
    expectError(await call('GET', `/workspaces/${uniqueName('x')}/styles`, { headers: asSuperAdmin() }), 404);
  });
});

describe('styles used by layers (the style side of the reference count, ADR 0052)', () => {
  // Layers don't reference styles yet: play the layer's part by counting on the style item directly.
  const db = () => hostDynamo();
  const useBy = (wsId: string, name: string, delta: number) =>
    db().send(
      new UpdateCommand({
        TableName: inject('host').tableName,
        Key: keys.style(wsId, name),
        UpdateExpression: 'ADD layer_ref_count :d',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':d': delta },
      }),
    );

  it('refuses delete and rename with 409 while a layer uses the style; same-name replaces keep the count', async () => {
    // Prepare
    const ws = await createWorkspace();
    await create(ws.id, { name: 'used', format: 'mapbox', body: mapbox() });
    await useBy(ws.id, 'used', 1);
    const path = `/workspaces/${ws.id}/styles/used`;
    // Act
    const del = await call('DELETE', path, { headers: asSuperAdmin() });
    const rename = await call('PUT', path, {
      headers: asSuperAdmin(),
      body: { name: 'renamed', format: 'mapbox', body: mapbox() },
    });
    const replace = await call('PUT', path, {
      headers: asSuperAdmin(),
      body: { name: 'used', format: 'se_1.1.0', body: se },
    });
    // Assess
    expectError(del, 409, 'style_in_use');
    expectError(rename, 409, 'style_in_use');
    expectError(await call('GET', `/workspaces/${ws.id}/styles/renamed`, { headers: asSuperAdmin() }), 404);
    expect(replace.status, replace.text).toBe(200);
    expect(replace.body).not.toHaveProperty('layer_ref_count');
    const item = await db().send(
      new GetCommand({ TableName: inject('host').tableName, Key: keys.style(ws.id, 'used') }),
    );
    expect(item.Item?.layer_ref_count).toBe(1);
    expectError(await call('DELETE', path, { headers: asSuperAdmin() }), 409, 'style_in_use');
    await useBy(ws.id, 'used', -1);
    expect((await call('DELETE', path, { headers: asSuperAdmin() })).status).toBe(204);
  });
});

describeCommonStatuses('styles', [
  {
    operationId: 'createStyle',
    method: 'POST',
    path: '/workspaces/{ws}/styles',
    body: { name: 'c', format: 'mapbox', body: mapbox() },
  },
  { operationId: 'listStyles', method: 'GET', path: '/workspaces/{ws}/styles' },
  { operationId: 'getStyle', method: 'GET', path: '/workspaces/{ws}/styles/c' },
  {
    operationId: 'updateStyle',
    method: 'PUT',
    path: '/workspaces/{ws}/styles/c',
    body: { name: 'c', format: 'mapbox', body: mapbox() },
  },
  { operationId: 'deleteStyle', method: 'DELETE', path: '/workspaces/{ws}/styles/c' },
]);
