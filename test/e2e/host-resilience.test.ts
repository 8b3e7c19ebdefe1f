import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/client.ts';
import { type HostProcess, startHostProcess } from '../support/host-process.ts';
import { formBody, type Ticket, upload } from '../support/imports.ts';

/*
 * Issue #22: the local host must survive whatever a client sends and whatever fails inside it,
 * keep client names out of its storage paths, keep its data dir private and answer import URIs
 * without telling what exists on the machine (ADR 0106). One host of its own (no PostGIS: nothing
 * here loads a file), with a console build that can't be read.
 */

const GEOJSON = Buffer.from('{"type":"FeatureCollection","features":[]}');
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let host: HostProcess;
let dataDir = '';
let brokenConsole = '';

function api(method: string, path: string, body?: unknown) {
  return call(method, path, {
    baseUrl: host.url,
    dataDir,
    headers: { 'X-API-Key': host.apiKey as string },
    ...(body !== undefined ? { body } : {}),
  });
}

const port = () => Number(new URL(host.url).port);

/** Sends `text` as is over TLS and returns what comes back until the host closes the connection. */
function rawRequest(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port: port(), ca: readFileSync(join(dataDir, 'tls-cert.pem')) },
      () => socket.write(text),
    );
    let out = '';
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

/** Sends the first part of an upload, then drops the connection. */
function abortedUpload(ticket: Ticket): Promise<void> {
  const { body, contentType } = formBody(ticket.fields, Buffer.alloc(300_000, 32), 'a.geojson');
  return new Promise((resolve) => {
    const req = request(ticket.url, {
      method: 'POST',
      agent: false,
      ca: readFileSync(join(dataDir, 'tls-cert.pem')),
      headers: { 'Content-Type': contentType, 'Content-Length': String(body.length) },
    });
    req.on('error', () => resolve());
    req.write(body.subarray(0, 150_000));
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 300);
  });
}

async function ticket(filename: string): Promise<{ id: string; upload: Ticket }> {
  const created = await api('POST', '/workspaces/demo/imports', { source: { kind: 'upload', filename } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/**
 * Every entry under `dir` (relative paths), symlinks not followed. An entry gone between the
 * listing and its lstat (a running host's SQLite journal) is not there.
 */
function entries(dir: string): { path: string; mode: number; dir: boolean; link: boolean }[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .flatMap((path) => {
      const stat = lstatSync(join(dir, path), { throwIfNoEntry: false });
      if (!stat) return [];
      return [{ path, mode: stat.mode & 0o777, dir: stat.isDirectory(), link: stat.isSymbolicLink() }];
    });
}

/** Entries anyone but the owner may read, write or traverse (the data dir itself included). */
function notPrivate(dir: string): string[] {
  const own = lstatSync(dir).mode & 0o777;
  return [
    ...(own & 0o077 ? [`. ${own.toString(8)}`] : []),
    ...entries(dir)
      .filter((e) => !e.link && e.mode & 0o077)
      .map((e) => `${e.path} ${e.mode.toString(8)}`),
  ];
}

function expectAliveAndAnswering() {
  expect(host.child.exitCode, host.output().slice(-3000)).toBeNull();
  expect(host.child.signalCode).toBeNull();
}

describe('the local host keeps serving, whatever a client sends (issue #22)', () => {
  beforeAll(async () => {
    brokenConsole = mkdtempSync(join(tmpdir(), 'geoplane-broken-console-'));
    // A directory where the page should be: every read of the console's index fails (EISDIR).
    mkdirSync(join(brokenConsole, 'index.html'));
    host = await startHostProcess({ GEOPLANE_CONSOLE_DIST: brokenConsole });
    dataDir = host.dataDir;
  }, 180_000);

  afterAll(async () => {
    await host?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (brokenConsole) rmSync(brokenConsole, { recursive: true, force: true });
  });

  const names = [
    'x'.repeat(248),
    `${'x'.repeat(251)}.csv`,
    '€'.repeat(255),
    '..',
    '...',
    'a..b',
    '.',
    ' ',
    'line\nbreak.geojson',
  ];

  it('uploads and starts files named at the edges; the store names them by id only', async () => {
    const outcomes: string[] = [];
    for (const name of names) {
      const created = await ticket(name);
      const sent = await upload(created.upload, GEOJSON, 'f.geojson', dataDir);
      const started = await api('POST', `/workspaces/demo/imports/${created.id}/start`);
      outcomes.push(`${JSON.stringify(name.slice(0, 12))}… ${name.length}: ${sent.status} ${started.status}`);
      const job = await api('GET', `/workspaces/demo/imports/${created.id}`);
      // The client's name stays what it was: metadata of the import.
      expect(job.body.source_filename).toBe(name);
    }
    expect(outcomes).toEqual(
      names.map((name) => `${JSON.stringify(name.slice(0, 12))}… ${name.length}: 204 202`),
    );
    const stored = entries(join(dataDir, 'imports')).map((e) => e.path.split('/').pop() as string);
    expect(stored.filter((n) => !ID.test(n) && !['uploads', 'sealed', 'incoming'].includes(n))).toEqual([]);
    expectAliveAndAnswering();
  }, 120_000);

  it('answers an import URI the same whether the file is missing, elsewhere or not a file', async () => {
    const root = join(dataDir, 'import-sources');
    // The test's own files are as private as the host's (the data dir check below counts them).
    mkdirSync(join(root, 'folder'), { recursive: true, mode: 0o700 });
    symlinkSync('/etc/hostname', join(root, 'link.geojson'));
    const refused = [
      '/etc/hostname',
      '/etc/geoplane-no-such-file',
      join(dataDir, 'bootstrap.json'),
      `${root}/../secret.key`,
      `file://${join(dataDir, 'issuer-key.json')}`,
      join(root, 'missing.geojson'),
      join(root, 'folder'),
      join(root, 'link.geojson'),
      '/proc/self/environ',
    ];
    const answers = new Set<string>();
    for (const uri of refused) {
      const res = await api('POST', '/workspaces/demo/imports', { source: { kind: 'uri', uri } });
      answers.add(`${res.status} ${res.body?.reason} ${String(res.body?.detail).split(uri).join('<uri>')}`);
    }
    expect([...answers]).toHaveLength(1);
    expect([...answers][0]).toMatch(/^400 uri_not_allowed /);
    // Nothing of the host's layout in the answer.
    expect([...answers][0]).not.toContain(dataDir);
    writeFileSync(join(root, 'present.geojson'), GEOJSON, { mode: 0o600 });
    const admitted = await api('POST', '/workspaces/demo/imports', {
      source: { kind: 'uri', uri: join(root, 'present.geojson') },
    });
    expect(admitted.status, admitted.text).toBe(201);
  });

  it('answers a fault on every path of its own (uploads, console, issuer, gateway) and keeps serving', async () => {
    // The upload store can't be written (a file where its directory should be): 500, as S3 would.
    const store = join(dataDir, 'imports');
    const blocked = await ticket('blocked.geojson');
    renameSync(store, `${store}.away`);
    writeFileSync(store, 'not a directory');
    let refused: { status: number; text: string };
    try {
      refused = await upload(blocked.upload, GEOJSON, 'f.geojson', dataDir);
    } finally {
      rmSync(store);
      renameSync(`${store}.away`, store);
    }
    expect(refused.status, refused.text).toBe(500);
    expect(refused.text).toMatch(/<Code>InternalError<\/Code>/);

    // A transfer the client drops halfway: nothing is kept.
    const dropped = await ticket('dropped.geojson');
    await abortedUpload(dropped.upload);
    await expect
      .poll(() =>
        entries(store).filter(
          (e) => !e.dir && (e.path.startsWith('incoming/') || e.path.endsWith('.partial')),
        ),
      )
      .toEqual([]);
    expect((await api('POST', `/workspaces/demo/imports/${dropped.id}/start`)).status).toBe(409);

    // A multipart body cut short: refused as S3 refuses it.
    const twice = await ticket('twice.geojson');
    const { body, contentType } = formBody(twice.upload.fields, GEOJSON, 'a');
    const malformed = await rawRequest(
      `POST /local-uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length - 10}\r\nConnection: close\r\n\r\n${body.subarray(0, body.length - 10).toString('latin1')}`,
    );
    expect(malformed).toMatch(/^HTTP\/1\.1 4\d\d /);

    // The console's files can't be read: the console says so, the host goes on.
    const page = await call('GET', '/console/', { baseUrl: host.url.replace('/api/v1', ''), dataDir });
    expect(page.status).toBe(503);

    // Request targets no URL parser takes: a 400 with the standard body, on the API and the issuer.
    for (const target of ['http://[', '//[', 'http://x:99999/local-issuer/token']) {
      const answer = await rawRequest(
        `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect(answer, target).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 400 });
    }

    // The issuer's forms with bytes no form has.
    const token = await call('POST', '/local-issuer/token', {
      baseUrl: host.url.replace('/api/v1', ''),
      dataDir,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: Buffer.from([0xff, 0xfe, 0x25, 0x00, 0x26, 0x3d]),
    });
    expect(token.status).toBe(400);

    expectAliveAndAnswering();
    expect((await api('GET', '/workspaces/demo')).status).toBe(200);
    // Every path caught its own error: the process-wide last resort never had to.
    expect(host.output()).not.toMatch(/"last_resort":true/);
  }, 60_000);

  it('keeps its data dir private: directories 0700, files 0600', async () => {
    const created = await ticket('private.geojson');
    expect((await upload(created.upload, GEOJSON, 'f.geojson', dataDir)).status).toBe(204);
    expect((await api('POST', `/workspaces/demo/imports/${created.id}/start`)).status).toBe(202);
    expect(notPrivate(dataDir)).toEqual([]);
  });

  it('on restart makes an older data dir private and expires uploads as the upload bucket does', async () => {
    await host.stop();
    // A data dir from before: readable by all, an upload a week and a day old, a transfer cut off.
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'tls-cert.pem'), 0o644);
    const workspace = join(dataDir, 'imports', 'uploads', '11111111-1111-4111-8111-111111111111');
    mkdirSync(workspace, { recursive: true, mode: 0o755 });
    const old = join(workspace, '22222222-2222-4222-8222-222222222222');
    const fresh = join(workspace, '33333333-3333-4333-8333-333333333333');
    const cut = join(dataDir, 'imports', 'incoming', '44444444-4444-4444-8444-444444444444');
    mkdirSync(join(dataDir, 'imports', 'incoming'), { recursive: true });
    for (const file of [old, fresh, cut]) writeFileSync(file, GEOJSON, { mode: 0o644 });
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600 * 1000);
    utimesSync(old, eightDaysAgo, eightDaysAgo);
    utimesSync(cut, eightDaysAgo, eightDaysAgo);

    host = await startHostProcess({ GEOPLANE_DATA_DIR: dataDir, GEOPLANE_CONSOLE_DIST: brokenConsole });
    const left = () =>
      entries(join(dataDir, 'imports'))
        .filter((e) => !e.dir)
        .map((e) => e.path);
    const relative = (path: string) => path.slice(join(dataDir, 'imports').length + 1);
    await expect.poll(() => left().filter((path) => [old, cut].map(relative).includes(path))).toEqual([]);
    expect(left()).toContain(relative(fresh));
    expect(notPrivate(dataDir)).toEqual([]);
    expectAliveAndAnswering();
  }, 180_000);
});
