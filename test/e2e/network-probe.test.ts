import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { keys } from '#store/keys.ts';
import { asSuperAdmin, call } from '../support/client.ts';
import { createWorkspace, expectError } from '../support/fixtures.ts';
import { writeTiff } from '../support/geotiff.ts';
import { FAULT_HOST } from '../support/host-process.ts';
import { hostMosaicDir, mosaicRoot } from '../support/mosaic-roots.ts';
import { hostDynamo } from '../support/store.ts';

// Issue #10 §3, ADR 0074: the server must not be a network probe. Every connection these tests
// could cause goes to loopback (the refused addresses are refused before anything connects;
// the private and link-local ones are only ever sent as disabled drafts, which never connect).

let postgis: { host: string; port: number; database: string; user: string; password: string };
let servers: Server[] = [];
const sockets = new Set<Socket>();

beforeAll(() => {
  postgis = JSON.parse(readFileSync(join(inject('host').dataDir, 'bootstrap.json'), 'utf8')).postgis;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  servers = [];
});

/** A listener on `host` that does `onConnection` with each socket; returns its port. */
async function listener(host: string, onConnection: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as { port: number }).port;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(host: string): Promise<number> {
  const port = await listener(host, () => {});
  const server = servers.pop() as Server;
  await new Promise((r) => server.close(r));
  return port;
}

const services = (wsId: string) => `/workspaces/${wsId}/services`;
const create = (wsId: string, body: Record<string, unknown>) =>
  call('POST', services(wsId), { headers: asSuperAdmin(), body });
const pgService = (name: string, connection: Record<string, unknown>, enabled = true) => ({
  name,
  type: 'postgis',
  enabled,
  connection: { database: 'gis', user: 'reader', password: 'x', ...connection },
});
const listServices = async (wsId: string) =>
  (await call('GET', services(wsId), { headers: asSuperAdmin() })).body.services as { name: string }[];

describe('PostGIS connection targets', () => {
  it('refuses loopback in every spelling with 400 connection_target_not_allowed and writes nothing', async () => {
    const ws = await createWorkspace();
    const api = new URL(inject('host').url);
    const spellings: [string, number][] = [
      ['127.0.0.1', 1],
      // Something listens there (the API itself): still refused, and said the same way.
      ['127.0.0.1', Number(api.port)],
      ['2130706433', 1],
      ['0x7f.1', 1],
      ['0177.0.0.1', 1],
      ['127.1', 1],
      ['localhost', 1],
      ['LOCALHOST.', 1],
      ['::1', 1],
      ['[::1]', 1],
      ['::ffff:127.0.0.1', 1],
      ['[::ffff:7f00:1]', 1],
      ['0.0.0.0', 1],
      ['::', 1],
      // The embedded PostGIS is allowed at its own port only, not the loopback around it.
      [postgis.host, postgis.port + 1],
      ['/tmp', 5432],
    ];
    const answers = await Promise.all(
      spellings.map(([host, port], i) => create(ws.id, pgService(`s${i}`, { host, port }))),
    );
    for (const [i, res] of answers.entries()) {
      expectError(res, 400, 'connection_target_not_allowed');
      expect(res.body.detail, spellings[i]?.join(':')).toMatch(/not allowed/);
    }
    expect(await listServices(ws.id)).toEqual([]);
  });

  it('refuses private, link-local, shared and metadata addresses even as disabled drafts', async () => {
    const ws = await createWorkspace();
    const targets = [
      '169.254.169.254',
      '::ffff:169.254.169.254',
      'fd00:ec2::254',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '100.64.0.1',
      'fe80::1',
      'fc00::1',
      '224.0.0.1',
      '127.0.0.1',
      '2852039166',
    ];
    const answers = await Promise.all(
      targets.map((host, i) => create(ws.id, pgService(`d${i}`, { host, port: 80 }, false))),
    );
    for (const res of answers) expectError(res, 400, 'connection_target_not_allowed');
    expect(await listServices(ws.id)).toEqual([]);
  });

  it('refuses an update to a loopback target (400) and keeps the service as it was', async () => {
    const ws = await createWorkspace();
    const created = await create(ws.id, pgService('pg', { ...postgis }));
    expect(created.status, created.text).toBe(201);
    for (const enabled of [true, false]) {
      const res = await call('PUT', `${services(ws.id)}/pg`, {
        headers: asSuperAdmin(),
        body: pgService('pg', { ...postgis, host: '127.0.0.1', port: 22 }, enabled),
      });
      expectError(res, 400, 'connection_target_not_allowed');
    }
    const after = await call('GET', `${services(ws.id)}/pg`, { headers: asSuperAdmin() });
    expect(after.body).toMatchObject({ version: 1, connection: { host: postgis.host, port: postgis.port } });
  });

  it('refuses to connect a stored service whose target is not allowed (422), whatever the operation', async () => {
    // A service stored before the policy (or before the operator narrowed it): its item is edited directly.
    const ws = await createWorkspace();
    const created = await create(ws.id, pgService('old', { host: FAULT_HOST, port: 1 }, false));
    expect(created.status, created.text).toBe(201);
    await hostDynamo().send(
      new UpdateCommand({
        TableName: inject('host').tableName,
        Key: keys.service(ws.id, created.body.id),
        UpdateExpression: 'SET #c.#h = :h, #c.#p = :p, #e = :e',
        ExpressionAttributeNames: { '#c': 'connection', '#h': 'host', '#p': 'port', '#e': 'enabled' },
        ExpressionAttributeValues: { ':h': '127.0.0.1', ':p': await closedPort('127.0.0.1'), ':e': true },
      }),
    );
    const base = `${services(ws.id)}/${created.body.id}`;
    const h = { headers: asSuperAdmin() };
    expectError(await call('POST', `${base}/test-connection`, h), 422, 'connection_target_not_allowed');
    expectError(await call('POST', `${base}/discover`, h), 422, 'connection_target_not_allowed');
    expectError(
      await call('POST', `${base}/validate-sql`, { ...h, body: { sql: 'SELECT * FROM places' } }),
      422,
      'connection_target_not_allowed',
    );
    expectError(
      await call('POST', `${base}/layers`, { ...h, body: { source_layer: 'places' } }),
      422,
      'connection_target_not_allowed',
    );
  });

  it('answers every failure to reach an allowed host with one message, whatever listens there', async () => {
    // FAULT_HOST is allowed for the test hosts; what answers on it differs, the API's answer must not.
    const ports = {
      closed: await closedPort(FAULT_HOST),
      silent: await listener(FAULT_HOST, () => {}),
      hangsUp: await listener(FAULT_HOST, (s) => s.destroy()),
      http: await listener(FAULT_HOST, (s) =>
        s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')),
      ),
      ssh: await listener(FAULT_HOST, (s) => s.write('SSH-2.0-OpenSSH_9.6\r\n')),
      tlsThenGarbage: await listener(FAULT_HOST, (s) =>
        s.once('data', () => s.write(Buffer.from('S\x15\x03\x03\x00\x02\x02\x28garbage'))),
      ),
    };
    const ws = await createWorkspace();
    const where = (port: number) => `${FAULT_HOST}:${port}/gis`;
    const normalise = (detail: string, port: number) => detail.replaceAll(where(port), '<where>');

    const creates = await Promise.all(
      Object.entries(ports).map(async ([name, port]) => {
        const started = Date.now();
        const res = await create(ws.id, pgService(name, { host: FAULT_HOST, port, sslmode: 'prefer' }));
        return { name, port, res, ms: Date.now() - started };
      }),
    );
    const createDetails = new Set<string>();
    for (const { name, port, res, ms } of creates) {
      expectError(res, 400, 'connection_failed');
      expect(res.body.detail, name).not.toMatch(
        /ECONNREFUSED|ECONNRESET|timeout|terminated|SSL|TLS|SSH|HTTP/i,
      );
      createDetails.add(normalise(res.body.detail, port));
      // No quicker answer for a closed port than for a silent host.
      expect(ms, name).toBeGreaterThanOrEqual(1_900);
    }
    expect([...createDetails]).toHaveLength(1);
    expect(await listServices(ws.id)).toEqual([]);

    // The same through test-connection of stored (disabled) services: one message, as the answer
    // (200 ok:false, no Retry-After: a typo is not an outage to retry, ADR 0087).
    const tests = await Promise.all(
      Object.entries(ports).map(async ([name, port]) => {
        const stored = await create(ws.id, pgService(`${name}-draft`, { host: FAULT_HOST, port }, false));
        expect(stored.status, stored.text).toBe(201);
        const res = await call('POST', `${services(ws.id)}/${stored.body.id}/test-connection`, {
          headers: asSuperAdmin(),
        });
        return { port, res };
      }),
    );
    const testDetails = new Set<string>();
    for (const { port, res } of tests) {
      expect(res.status, res.text).toBe(200);
      expect(res.headers).not.toHaveProperty('retry-after');
      expect(res.body.ok).toBe(false);
      expect(res.body.message).not.toMatch(/ECONNREFUSED|ECONNRESET|timeout|terminated|SSL|TLS|SSH|HTTP/i);
      testDetails.add(normalise(res.body.message, port));
    }
    expect([...testDetails]).toHaveLength(1);
  }, 60_000);

  it('still tells a refused login on an allowed PostgreSQL apart (400 with its reason)', async () => {
    const ws = await createWorkspace();
    const res = await create(ws.id, pgService('wrong', { ...postgis, password: 'not-the-password' }));
    expectError(res, 400, 'connection_failed');
    expect(res.body.detail).toMatch(/refused the login/);
  });
});

describe('local mosaic roots', () => {
  const outside: string[] = [];
  afterAll(() => {
    for (const dir of outside) rmSync(dir, { recursive: true, force: true });
  });

  const createMosaic = (wsId: string, name: string, root_uri: string) =>
    create(wsId, { name, type: 'raster_mosaic', connection: { root_uri } });

  it('refuses roots outside the mosaic directory, however they are spelled (400 root_not_allowed)', async () => {
    const ws = await createWorkspace();
    const dataDir = inject('host').dataDir;
    const mosaics = hostMosaicDir();
    const stranger = mkdtempSync(join(tmpdir(), 'geoplane-not-mosaics-'));
    outside.push(stranger);
    writeTiff(stranger, 'x.tif', 0, 0);
    const inside = mosaicRoot();
    // A link inside the mosaic directory that leads to the data dir (issuer key, bootstrap key).
    const link = join(mosaics, `link-${Date.now()}`);
    symlinkSync(dataDir, link);
    const roots = [
      stranger,
      `file://${stranger}`,
      dataDir,
      `file://${dataDir}`,
      '/',
      '/etc',
      `${mosaics}/..`,
      `${inside}/../..`,
      `${mosaics}/./../`,
      `file://${mosaics}/%2e%2e`,
      `${inside}%2f..%2f..`,
      `${mosaics}-evil`,
      link,
      `${link}/tls-cert.pem`,
    ];
    const answers = await Promise.all(roots.map((root, i) => createMosaic(ws.id, `m${i}`, root)));
    for (const [i, res] of answers.entries()) {
      expectError(res, 400, 'root_not_allowed');
      // The refusal echoes the root_uri as sent, and tells nothing about what is there.
      expect(res.body.detail.replace(roots[i] as string, '<root>'), roots[i]).not.toMatch(
        /issuer|bootstrap|\.json|\.pem|ENOENT|ENOTDIR|not a directory/,
      );
    }
    expect(await listServices(ws.id)).toEqual([]);
    const ok = await createMosaic(ws.id, 'fine', inside);
    expect(ok.status, ok.text).toBe(201);
    const alsoOk = await createMosaic(ws.id, 'fine-url', `file://${inside}/`);
    expect(alsoOk.status, alsoOk.text).toBe(201);
  });

  it('refuses an update to a root outside (400) and keeps the root', async () => {
    const ws = await createWorkspace();
    const root = mosaicRoot();
    expect((await createMosaic(ws.id, 'm', root)).status).toBe(201);
    const res = await call('PUT', `${services(ws.id)}/m`, {
      headers: asSuperAdmin(),
      body: { name: 'm', type: 'raster_mosaic', connection: { root_uri: inject('host').dataDir } },
    });
    expectError(res, 400, 'root_not_allowed');
    const after = await call('GET', `${services(ws.id)}/m`, { headers: asSuperAdmin() });
    expect(after.body.connection).toEqual({ root_uri: root });
  });

  it('does not list or read a stored root that leads outside (422), and names none of its files', async () => {
    const ws = await createWorkspace();
    const mosaics = hostMosaicDir();
    mkdirSync(mosaics, { recursive: true });
    const real = mosaicRoot();
    writeTiff(real, 'a.tif', 0, 10);
    // The root is a link: inside when the service is created, then pointed at the data dir.
    const link = join(mosaics, `swap-${Date.now()}`);
    symlinkSync(real, link);
    const created = await createMosaic(ws.id, 'swapped', link);
    expect(created.status, created.text).toBe(201);
    unlinkSync(link);
    symlinkSync(inject('host').dataDir, link);
    const harvest = (body: unknown) =>
      call('POST', `${services(ws.id)}/swapped/mosaic/harvest`, { headers: asSuperAdmin(), body });
    for (const body of [{ pattern: '**' }, { pattern: '*.json' }, { uris: ['bootstrap.json'] }, {}]) {
      const res = await harvest(body);
      expectError(res, 422, 'root_not_allowed');
      expect(res.text).not.toMatch(/bootstrap|issuer|secret|tls-/);
    }
  });
});

describe('SVG style assets', () => {
  const put = (wsId: string, name: string, svg: string) =>
    call('PUT', `/workspaces/${wsId}/style-assets/${name}`, {
      headers: { 'Content-Type': 'image/svg+xml', ...asSuperAdmin() },
      body: Buffer.from(
        `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">${svg}</svg>`,
      ),
    });

  it.each([
    ['<set> of href to javascript:', '<a><set attributeName="href" to="javascript:alert(1)"/><rect/></a>'],
    [
      '<animate> of xlink:href',
      '<a><animate attributeName="xlink:href" values="#a;javascript:alert(1)"/></a>',
    ],
    [
      '<animateTransform> of an event handler',
      '<g><animateTransform attributeName="onclick" to="alert(1)"/></g>',
    ],
    ['<animateMotion> of href', '<a><animateMotion attributeName="href" to="https://evil.example"/></a>'],
    ['an entity-encoded javascript: href', '<a href="&#x6A;ava&#9;script:alert(1)"><rect/></a>'],
    ['JAVASCRIPT: in a presentation attribute', '<rect fill="JAVASCRIPT:alert(1)"/>'],
    ['a data: URL set by SMIL', '<rect><set attributeName="fill" to="data:text/html,x"/></rect>'],
    ['url(javascript:) behind CSS escapes', '<rect style="fill:u\\72 l(javascript:alert(1))"/>'],
  ])('refuses %s (400 unsafe_svg) and stores nothing', async (_what, svg) => {
    const ws = await createWorkspace();
    expectError(await put(ws.id, 'icon', svg), 400, 'unsafe_svg');
    expectError(
      await call('GET', `/workspaces/${ws.id}/style-assets/icon`, { headers: asSuperAdmin() }),
      404,
    );
  });

  it('still accepts an icon with a harmless animation', async () => {
    const ws = await createWorkspace();
    const res = await put(
      ws.id,
      'spinner',
      '<circle id="c" r="3"><animate attributeName="opacity" values="0;1;0" dur="1s"/></circle><use href="#c"/>',
    );
    expect(res.status, res.text).toBeLessThan(300);
  });
});
