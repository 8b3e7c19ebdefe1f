import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StyleAssetBody } from '#api/style-schemas.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { describeCommonStatuses } from '../support/common-statuses.ts';
import { createKey, createWorkspace, expectError, withKey } from '../support/fixtures.ts';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
  Buffer.from('JFIF\0rest-of-a-jpeg'),
]);
const SVG = Buffer.from(
  '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="8" height="8"><defs><circle id="c" r="3"/></defs><use xlink:href="#c" style="fill:url(#g)"/></svg>',
);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const put = (
  ws: string,
  name: string,
  body: Buffer | string,
  headers: Record<string, string> = asSuperAdmin(),
  type = 'application/octet-stream',
) =>
  call('PUT', `/workspaces/${ws}/style-assets/${name}`, {
    headers: { 'Content-Type': type, ...headers },
    body,
  });

describe('putStyleAsset and getStyleAsset', () => {
  it.each([
    ['PNG', PNG, 'image/png', 'image/png'],
    ['GIF', GIF, 'image/gif', 'application/octet-stream'],
    ['JPEG', JPEG, 'image/jpeg', 'image/png'],
    ['SVG', SVG, 'image/svg+xml', 'image/svg+xml'],
  ] as const)(
    'stores a %s (type sniffed from the bytes) and returns the same bytes with its ETag',
    async (_what, bytes, type, sent) => {
      // Prepare
      const ws = await createWorkspace();
      const editor = await createKey(ws.id, 'editor');
      const viewer = await createKey(ws.id, 'viewer');
      const name = uniqueName('asset');
      // Act
      const res = await put(ws.id, name, bytes, withKey(editor.key), sent);
      const got = await call('GET', `/workspaces/${ws.name}/style-assets/${name}`, {
        headers: withKey(viewer.key),
      });
      // Assess
      expect(res.status, res.text).toBe(201);
      expect(StyleAssetBody.safeParse(res.body).success).toBe(true);
      expect(res.body).toMatchObject({
        name,
        content_type: type,
        size_bytes: bytes.length,
        sha256: sha(bytes),
        version: 1,
      });
      expect(res.headers.location).toBe(`/api/v1/workspaces/${ws.id}/style-assets/${name}`);
      expect(got.status).toBe(200);
      expect(got.headers['content-type']).toBe(type);
      expect(got.headers.etag).toBe(`"${sha(bytes)}"`);
      expect(got.raw?.equals(bytes)).toBe(true);
    },
  );

  it('replaces an asset (200, version 2) and serves the new bytes; 304 for a matching If-None-Match', async () => {
    const ws = await createWorkspace();
    expect((await put(ws.id, 'logo', PNG)).status).toBe(201);
    const replaced = await put(ws.id, 'logo', GIF);
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ content_type: 'image/gif', version: 2, sha256: sha(GIF) });
    const got = await call('GET', `/workspaces/${ws.id}/style-assets/logo`, { headers: asSuperAdmin() });
    expect(got.raw?.equals(GIF)).toBe(true);
    const cached = await call('GET', `/workspaces/${ws.id}/style-assets/logo`, {
      headers: { ...asSuperAdmin(), 'If-None-Match': `"${sha(GIF)}"` },
    });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
    const stale = await call('GET', `/workspaces/${ws.id}/style-assets/logo`, {
      headers: { ...asSuperAdmin(), 'If-None-Match': `"${sha(PNG)}"` },
    });
    expect(stale.status).toBe(200);
  });

  it('stores a 512 KiB asset across chunks byte for byte; one byte more is 413 and nothing is stored', async () => {
    const ws = await createWorkspace();
    const big = Buffer.concat([PNG, Buffer.alloc(512 * 1024 - PNG.length, 7)]);
    const res = await put(ws.id, 'big', big, asSuperAdmin(), 'image/png');
    expect(res.status, res.text).toBe(201);
    const got = await call('GET', `/workspaces/${ws.id}/style-assets/big`, { headers: asSuperAdmin() });
    expect(got.raw?.length).toBe(big.length);
    expect(got.raw?.equals(big)).toBe(true);
    expect((await put(ws.id, 'big', PNG)).status).toBe(200);
    expect(
      (await call('GET', `/workspaces/${ws.id}/style-assets/big`, { headers: asSuperAdmin() })).raw?.equals(
        PNG,
      ),
    ).toBe(true);
    const over = await put(
      ws.id,
      'over',
      Buffer.concat([big, Buffer.from([0])]),
      asSuperAdmin(),
      'image/png',
    );
    expectError(over, 413, 'body_too_large');
    expectError(
      await call('GET', `/workspaces/${ws.id}/style-assets/over`, { headers: asSuperAdmin() }),
      404,
      'style_asset_not_found',
    );
  });

  it.each([
    ['plain text', Buffer.from('hello world'), 'unsupported_asset_type'],
    ['an empty body', Buffer.alloc(0), 'body_required'],
    ['a WebP', Buffer.from('RIFF\0\0\0\0WEBPVP8 '), 'unsupported_asset_type'],
    ['an HTML page', Buffer.from('<html><body>hi</body></html>'), 'unsupported_asset_type'],
    ['malformed SVG', Buffer.from('<svg><g></svg>'), 'malformed_xml'],
    [
      'an SVG with a script',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      'unsafe_svg',
    ],
    [
      'an SVG with an event handler',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'),
      'unsafe_svg',
    ],
    [
      'an SVG with an external image',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><image href="https://evil.example/x.png"/></svg>'),
      'unsafe_svg',
    ],
    [
      'an SVG with a data: image',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><image href="data:image/png;base64,AAAA"/></svg>'),
      'unsafe_svg',
    ],
    [
      'an SVG with an external CSS url()',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><style>rect{fill:url(https://x/y)}</style></svg>'),
      'unsafe_svg',
    ],
    [
      'an SVG with @import',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><style>@import "https://x/y.css";</style></svg>'),
      'unsafe_svg',
    ],
    [
      'an SVG with foreignObject',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>'),
      'unsafe_svg',
    ],
    [
      'an SVG with a DTD',
      Buffer.from('<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg>&x;</svg>'),
      'xml_dtd_refused',
    ],
    [
      'an SVG with a stylesheet link',
      Buffer.from('<?xml-stylesheet href="https://x/y.css"?><svg xmlns="http://www.w3.org/2000/svg"/>'),
      'unsafe_svg',
    ],
  ])('refuses %s with 400 and stores nothing', async (_what, bytes, reason) => {
    const ws = await createWorkspace();
    expectError(await put(ws.id, 'x', bytes, asSuperAdmin(), 'image/svg+xml'), 400, reason);
    expectError(await call('GET', `/workspaces/${ws.id}/style-assets/x`, { headers: asSuperAdmin() }), 404);
  });

  it('answers 400 for a bad asset name, 404 for an unknown workspace or asset, 403/401 by role', async () => {
    const ws = await createWorkspace();
    const viewer = await createKey(ws.id, 'viewer');
    expectError(await put(ws.id, 'bad%20name', PNG), 400, 'validation_failed');
    expectError(await put(uniqueName('nows'), 'x', PNG), 404, 'workspace_not_found');
    expectError(
      await call('GET', `/workspaces/${ws.id}/style-assets/none`, { headers: asSuperAdmin() }),
      404,
      'style_asset_not_found',
    );
    expectError(await put(ws.id, 'x', PNG, withKey(viewer.key)), 403);
    expectError(await put(ws.id, 'x', PNG, {}), 401, 'unauthenticated');
  });
});

describe('listStyleAssets', () => {
  it('lists metadata by name, page by page', async () => {
    const ws = await createWorkspace();
    for (const n of ['a1', 'a2', 'a3']) await put(ws.id, n, PNG);
    const first = await call('GET', `/workspaces/${ws.id}/style-assets?limit=2`, { headers: asSuperAdmin() });
    expect(first.status).toBe(200);
    expect(first.body.assets.map((a: { name: string }) => a.name)).toEqual(['a1', 'a2']);
    for (const a of first.body.assets) expect(StyleAssetBody.safeParse(a).success).toBe(true);
    const second = await call(
      'GET',
      `/workspaces/${ws.id}/style-assets?limit=2&cursor=${first.body.next_cursor}`,
      {
        headers: asSuperAdmin(),
      },
    );
    expect(second.body.assets.map((a: { name: string }) => a.name)).toEqual(['a3']);
    expect(second.body.next_cursor).toBeUndefined();
    expectError(
      await call('GET', `/workspaces/${ws.id}/style-assets?limit=5000`, { headers: asSuperAdmin() }),
      400,
    );
    expectError(
      await call('GET', `/workspaces/${uniqueName('x')}/style-assets`, { headers: asSuperAdmin() }),
      404,
    );
  });
});

describe('deleteStyleAsset (spec 4.12)', () => {
  it('deletes an unreferenced asset (204, no body); then GET and DELETE are 404', async () => {
    const ws = await createWorkspace();
    const editor = await createKey(ws.id, 'editor');
    await put(ws.id, 'tmp', PNG);
    const res = await call('DELETE', `/workspaces/${ws.id}/style-assets/tmp`, {
      headers: withKey(editor.key),
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await call('GET', `/workspaces/${ws.id}/style-assets/tmp`, { headers: asSuperAdmin() }), 404);
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/style-assets/tmp`, { headers: asSuperAdmin() }),
      404,
      'style_asset_not_found',
    );
  });

  it('answers 409 naming the referencing style', async () => {
    const ws = await createWorkspace();
    await put(ws.id, 'marker', PNG);
    const style = await call('POST', `/workspaces/${ws.id}/styles`, {
      headers: asSuperAdmin(),
      body: {
        name: 'poi',
        format: 'mapbox',
        body: { version: 8, sources: {}, layers: [], sprite: 'asset:marker' },
      },
    });
    expect(style.status, style.text).toBe(201);
    const res = await call('DELETE', `/workspaces/${ws.id}/style-assets/marker`, { headers: asSuperAdmin() });
    expectError(res, 409, 'asset_referenced');
    expect(res.body.detail).toBe("Style asset 'marker' is referenced by style poi.");
    expect(res.body.style).toBe('poi');
    expect(
      (await call('GET', `/workspaces/${ws.id}/style-assets/marker`, { headers: asSuperAdmin() })).status,
    ).toBe(200);
    // Replacing a referenced asset is allowed and keeps it referenced.
    expect((await put(ws.id, 'marker', GIF)).status).toBe(200);
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/style-assets/marker`, { headers: asSuperAdmin() }),
      409,
    );
  });

  it('answers 403 to a viewer and 401 without a credential', async () => {
    const ws = await createWorkspace();
    await put(ws.id, 'kept', PNG);
    const viewer = await createKey(ws.id, 'viewer');
    expectError(
      await call('DELETE', `/workspaces/${ws.id}/style-assets/kept`, { headers: withKey(viewer.key) }),
      403,
    );
    expectError(await call('DELETE', `/workspaces/${ws.id}/style-assets/kept`), 401, 'unauthenticated');
  });
});

describeCommonStatuses('style assets', [
  {
    operationId: 'putStyleAsset',
    method: 'PUT',
    path: '/workspaces/{ws}/style-assets/probe',
    body: PNG,
    headers: { 'Content-Type': 'image/png' },
  },
  { operationId: 'getStyleAsset', method: 'GET', path: '/workspaces/{ws}/style-assets/probe' },
  { operationId: 'listStyleAssets', method: 'GET', path: '/workspaces/{ws}/style-assets' },
  { operationId: 'deleteStyleAsset', method: 'DELETE', path: '/workspaces/{ws}/style-assets/probe' },
]);
