import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import busboy from 'busboy';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { multipartBody, multipartStream } from '../../cli/multipart.ts';
import { uploadFile } from '../../cli/upload.ts';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/geoplane.mjs');
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'geoplane-cli-'));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment without the caller's GEOPLANE_* settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GEOPLANE_')));
}

/** Runs `geoplane …` as a user would (stdio piped: not a TTY), from a directory without .local. */
function geoplane(
  args: string[],
  env: NodeJS.ProcessEnv | 'host' = 'host',
  timeoutMs = 150_000,
): Promise<Run> {
  const host = inject('host');
  const childEnv =
    env === 'host'
      ? {
          ...cleanEnv(),
          GEOPLANE_URL: host.url,
          GEOPLANE_API_KEY: host.apiKey,
          GEOPLANE_CA_FILE: join(host.dataDir, 'tls-cert.pem'),
        }
      : env;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: childEnv, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`geoplane ${args.join(' ')} ran over ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      // Whatever happens, the key never shows.
      expect(stdout + stderr).not.toContain(host.apiKey);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

function points(n: number): string {
  const features = Array.from({ length: n }, (_, i) => ({
    type: 'Feature',
    properties: { id: i, name: `point ${i}`, value: i * 1.5 },
    geometry: { type: 'Point', coordinates: [-10 + (i % 100) * 0.1, 40 + Math.floor(i / 100) * 0.1] },
  }));
  return JSON.stringify({ type: 'FeatureCollection', features });
}

const explain = (run: Run) => `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

describe('multipart body (unit)', () => {
  async function produce(body: ReturnType<typeof multipartBody>, path: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of multipartStream(body, path)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  function parse(bytes: Buffer, contentType: string) {
    return new Promise<{
      fields: [string, string][];
      file?: { name: string; filename: string; data: Buffer };
    }>((resolvePromise, reject) => {
      const fields: [string, string][] = [];
      let file: { name: string; filename: string; data: Buffer } | undefined;
      const parser = busboy({ headers: { 'content-type': contentType } });
      parser.on('field', (name, value) => fields.push([name, value]));
      parser.on('file', (name, stream, info) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          file = { name, filename: info.filename, data: Buffer.concat(chunks) };
        });
      });
      parser.on('close', () => resolvePromise({ fields, ...(file ? { file } : {}) }));
      parser.on('error', reject);
      parser.end(bytes);
    });
  }

  it('produces exactly Content-Length bytes: the fields first, in order, then the file', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 7);
    const path = join(dir, 'blob.bin');
    writeFileSync(path, data);
    const fields = {
      key: 'imports/ws/abc/blob.bin',
      Policy: 'eyJ4Ijoi…',
      'X-Amz-Signature': 'f00',
      empty: '',
    };
    const body = multipartBody({
      fields,
      fileField: 'file',
      filename: 'blob "1".bin',
      fileSize: data.length,
    });
    const bytes = await produce(body, path);
    expect(bytes.length).toBe(body.contentLength);
    expect(body.contentLength).toBe(body.head.length + data.length + body.tail.length);
    const parsed = await parse(bytes, body.contentType);
    expect(parsed.fields).toEqual(Object.entries(fields));
    expect(parsed.file?.name).toBe('file');
    expect(parsed.file?.filename).toBe('blob "1".bin');
    expect(parsed.file?.data.equals(data)).toBe(true);
  });

  it('handles an empty file and multi-byte field values', async () => {
    const path = join(dir, 'empty.bin');
    writeFileSync(path, '');
    const body = multipartBody({
      fields: { note: 'größe ✓' },
      fileField: 'file',
      filename: 'é.geojson',
      fileSize: 0,
    });
    const bytes = await produce(body, path);
    expect(bytes.length).toBe(body.contentLength);
    const parsed = await parse(bytes, body.contentType);
    expect(parsed.fields).toEqual([['note', 'größe ✓']]);
    expect(parsed.file?.data.length).toBe(0);
  });

  it('fails rather than send a body that disagrees with its Content-Length (the file changed)', async () => {
    const path = join(dir, 'shrinks.bin');
    writeFileSync(path, randomBytes(1000));
    const body = multipartBody({ fields: {}, fileField: 'file', filename: 'x', fileSize: 2000 });
    await expect(produce(body, path)).rejects.toThrow(/changed/);
  });

  describe('uploadFile against a presigned-POST stand-in', () => {
    let server: Server;
    let url = '';
    let seen: { length: number; declared: number; fields: [string, string][]; fileBytes: number } | undefined;
    beforeAll(async () => {
      server = createServer((req, res) => {
        if (req.url === '/refuse') {
          req.resume();
          const xml =
            '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Policy expired.</Message></Error>';
          res.writeHead(403, { 'Content-Type': 'application/xml', Connection: 'close' });
          res.end(xml);
          return;
        }
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', async () => {
          const bytes = Buffer.concat(chunks);
          const fields: [string, string][] = [];
          let fileBytes = 0;
          const parser = busboy({ headers: req.headers });
          parser.on('field', (n, v) => fields.push([n, v]));
          parser.on('file', (_n, s) => s.on('data', (c: Buffer) => (fileBytes += c.length)));
          parser.on('close', () => {
            seen = {
              length: bytes.length,
              declared: Number(req.headers['content-length']),
              fields,
              fileBytes,
            };
            res.writeHead(204);
            res.end();
          });
          parser.end(bytes);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    const ticket = (path: string) => ({
      url: url + path,
      method: 'POST' as const,
      fields: { key: 'k', policy: 'p' },
      file_field: 'file',
      expires_at: new Date(Date.now() + 60_000).toISOString(),
      max_bytes: 10_000_000,
    });

    it('streams the file with an exact Content-Length and reports the bytes sent', async () => {
      const data = randomBytes(2_500_000);
      const path = join(dir, 'up.bin');
      writeFileSync(path, data);
      const progress: number[] = [];
      await uploadFile({ baseUrl: url, apiKey: 'unused' }, ticket('/ok'), path, data.length, (n) =>
        progress.push(n),
      );
      expect(seen?.length).toBe(seen?.declared);
      expect(seen?.fields).toEqual([
        ['key', 'k'],
        ['policy', 'p'],
      ]);
      expect(seen?.fileBytes).toBe(data.length);
      expect(progress.at(-1)).toBe(data.length);
      expect(progress.length).toBeGreaterThan(1);
    });

    it("reports an S3-style refusal's code and message", async () => {
      const path = join(dir, 'up2.bin');
      writeFileSync(path, 'x');
      await expect(
        uploadFile({ baseUrl: url, apiKey: 'unused' }, ticket('/refuse'), path, 1, () => {}),
      ).rejects.toThrow('upload refused (HTTP 403 AccessDenied): Policy expired.');
    });

    it('refuses a file over the ticket’s max_bytes before sending anything', async () => {
      const path = join(dir, 'up3.bin');
      writeFileSync(path, 'xx');
      await expect(
        uploadFile({ baseUrl: url, apiKey: 'unused' }, { ...ticket('/ok'), max_bytes: 1 }, path, 2, () => {}),
      ).rejects.toThrow(/at most 1 bytes/);
    });
  });
});

describe('geoplane CLI (against the shared local host)', { timeout: 200_000 }, () => {
  let ws = '';
  let pointsFile = '';
  let published: Run;
  let importId = '';
  const serviceName = uniqueName('cli');

  beforeAll(async () => {
    ws = (await createWorkspace(uniqueName('cli-ws'))).name;
    pointsFile = join(dir, 'points.geojson');
    writeFileSync(pointsFile, points(2000));
  });

  it('import --publish --wait ends published and prints the service and its layer', async () => {
    published = await geoplane([
      'import',
      pointsFile,
      '--workspace',
      ws,
      '--service-name',
      serviceName,
      '--publish',
      '--wait',
      '--interval',
      '0.25',
      '--timeout',
      '150',
    ]);
    expect(published.code, explain(published)).toBe(0);
    importId = uuid.exec(published.stdout)?.[0] ?? '';
    expect(importId, explain(published)).not.toBe('');
    expect(published.stdout).toContain(`import ${importId} published`);
    const job = (await call('GET', `/workspaces/${ws}/imports/${importId}`, { headers: asSuperAdmin() }))
      .body;
    expect(job.status).toBe('published');
    expect(job.processed_features).toBe(2000);
    expect(published.stdout).toContain(`service ${serviceName} (${job.service_id})`);
    const layers = await call('GET', `/workspaces/${ws}/services/${job.service_id}/layers`, {
      headers: asSuperAdmin(),
    });
    expect(layers.status).toBe(200);
    expect(layers.body.layers.length).toBeGreaterThan(0);
    for (const layer of layers.body.layers)
      expect(published.stdout).toContain(`  ${layer.public_id}  ${layer.title}`);
  });

  it('without a TTY prints a line per phase change and no bar escape codes', () => {
    expect(published, 'the import above ran').toBeDefined();
    expect(published.stderr + published.stdout).not.toContain('\u001b[');
    expect(published.stderr).toMatch(new RegExp(`import ${importId} created`));
    expect(published.stderr).toMatch(/^upload: sending points\.geojson/m);
    expect(published.stderr).toMatch(/^upload: uploaded /m);
    expect(published.stderr).toMatch(/^import: published \(publish\)/m);
    const phaseLines = published.stderr.split('\n').filter((l) => l.startsWith('import: '));
    expect(phaseLines.length).toBeGreaterThanOrEqual(2);
    // One line per change: no two consecutive lines alike.
    for (let i = 1; i < phaseLines.length; i++) expect(phaseLines[i]).not.toBe(phaseLines[i - 1]);
  });

  it('--json prints the final import as JSON', async () => {
    const file = join(dir, 'small.geojson');
    writeFileSync(file, points(50));
    const run = await geoplane([
      'import',
      file,
      '--workspace',
      ws,
      '--service-name',
      uniqueName('cli-json'),
      '--publish',
      '--json',
      '--interval',
      '0.25',
      '--timeout',
      '150',
    ]);
    expect(run.code, explain(run)).toBe(0);
    const job = JSON.parse(run.stdout);
    expect(job.status).toBe('published');
    expect(job.processed_features).toBe(50);
  });

  it('imports history lists the events oldest first, including published', async () => {
    expect(importId, 'the import above ran').not.toBe('');
    const run = await geoplane(['imports', 'history', importId, '--workspace', ws]);
    expect(run.code, explain(run)).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^TIME\s+STATUS\s+PHASE\s+FEATURES\s+ERROR$/);
    const statuses = rows.map((r) => r.split(/\s+/)[1]);
    expect(statuses).toContain('published');
    expect(statuses.at(-1)).toBe('published');
    const times = rows.map((r) => r.split(/\s+/)[0] ?? '');
    expect([...times].sort()).toEqual(times);
    const json = await geoplane(['imports', 'history', importId, '--workspace', ws, '--json']);
    const events = JSON.parse(json.stdout) as { status: string; created_at: string }[];
    expect(events.map((e) => e.status)).toEqual(statuses);
  });

  it('imports get and list show the import', async () => {
    expect(importId, 'the import above ran').not.toBe('');
    const get = await geoplane(['imports', 'get', importId, '--workspace', ws]);
    expect(get.code, explain(get)).toBe(0);
    expect(get.stdout).toMatch(/^status\s+published/m);
    const list = await geoplane(['imports', 'list', '--workspace', ws, '--status', 'published']);
    expect(list.code, explain(list)).toBe(0);
    expect(list.stdout).toContain(importId);
  });

  it('imports rollback --wait ends rolled_back', async () => {
    expect(importId, 'the import above ran').not.toBe('');
    const run = await geoplane([
      'imports',
      'rollback',
      importId,
      '--workspace',
      ws,
      '--wait',
      '--interval',
      '0.25',
      '--timeout',
      '150',
    ]);
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toContain(`import ${importId} rolled back`);
    expect(run.stderr).toMatch(/^rollback: /m);
    const job = (await call('GET', `/workspaces/${ws}/imports/${importId}`, { headers: asSuperAdmin() }))
      .body;
    expect(job.status).toBe('rolled_back');
  });

  it('a broken file ends failed: exit code 1 and the error message printed', async () => {
    const file = join(dir, 'broken.geojson');
    writeFileSync(file, '{"type":"FeatureCollection","features":[{"type":"Feature"');
    const run = await geoplane([
      'import',
      file,
      '--workspace',
      ws,
      '--wait',
      '--interval',
      '0.25',
      '--timeout',
      '150',
    ]);
    expect(run.code, explain(run)).toBe(1);
    const id = uuid.exec(run.stderr)?.[0] ?? '';
    expect(id, explain(run)).not.toBe('');
    const job = (await call('GET', `/workspaces/${ws}/imports/${id}`, { headers: asSuperAdmin() })).body;
    expect(job.status).toBe('failed');
    expect(job.error_message).toBeTruthy();
    expect(run.stderr).toContain(`error: import ${id} failed: ${job.error_message}`);
  });

  it('an empty import id is refused before any request (usage: exit 2)', async () => {
    const run = await geoplane(['imports', 'get', '', '--workspace', ws]);
    expect(run.code, explain(run)).toBe(2);
    expect(run.stderr).toBe('error: an import id is required\n');
  });

  it('an API error prints its message, detail, status and reason and exits 1', async () => {
    const run = await geoplane(['imports', 'get', '00000000-0000-4000-8000-000000000000', '--workspace', ws]);
    expect(run.code, explain(run)).toBe(1);
    expect(run.stderr).toMatch(/^error: Not Found: .+ \(404 import_not_found\)$/m);
    expect(run.stderr).not.toMatch(/at .+\.ts:\d+/);
  });

  it('without credentials says so and exits 2 (usage)', async () => {
    const empty = mkdtempSync(join(dir, 'nodata-'));
    const run = await geoplane(['import', pointsFile, '--workspace', ws], {
      ...cleanEnv(),
      GEOPLANE_DATA_DIR: empty,
    });
    expect(run.code, explain(run)).toBe(2);
    expect(run.stderr).toMatch(/no credentials: missing an API URL and an API key/);
    expect(run.stderr).toContain('GEOPLANE_API_KEY');
  });

  it("without settings reads the local host's bootstrap.json and trusts its tls-cert.pem", async () => {
    const run = await geoplane(['imports', 'list', '--workspace', ws, '--status', 'published'], {
      ...cleanEnv(),
      GEOPLANE_DATA_DIR: inject('host').dataDir,
    });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^ID\s+NAME\s+STATUS/);
  });

  it('keeps certificate checks on: an unreadable CA file (usage, 2) or no CA for a self-signed host (unreachable, 3) fails', async () => {
    const host = inject('host');
    const run = await geoplane(['imports', 'list', '--workspace', ws], {
      ...cleanEnv(),
      GEOPLANE_URL: host.url,
      GEOPLANE_API_KEY: host.apiKey,
      GEOPLANE_DATA_DIR: mkdtempSync(join(dir, 'nocert-')),
      GEOPLANE_CA_FILE: join(dir, 'missing.pem'),
    });
    expect(run.code, explain(run)).toBe(2);
    expect(run.stderr).toMatch(/cannot read GEOPLANE_CA_FILE/);
    const noCa = await geoplane(['imports', 'list', '--workspace', ws], {
      ...cleanEnv(),
      GEOPLANE_URL: host.url,
      GEOPLANE_API_KEY: host.apiKey,
      GEOPLANE_DATA_DIR: mkdtempSync(join(dir, 'nocert2-')),
    });
    expect(noCa.code, explain(noCa)).toBe(3);
    expect(noCa.stderr).toMatch(/cannot verify the TLS certificate/);
  });
});
