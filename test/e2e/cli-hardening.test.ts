import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/*
 * The CLI against a stand-in API on loopback (ADR 0109): what it prints of a hostile server's
 * answers, and where it sends its key. Black box: the real `geoplane` binary, stdio piped.
 */

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/geoplane.mjs');
const KEY = `gpk_${'K'.repeat(43)}`;
const BOOTSTRAP_KEY = `gpk_${'S'.repeat(43)}`;

/** Every character a terminal acts on, but the newline. */
const unsafeButNewline =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Clears the screen, sets the window title, a hyperlink, a C1 CSI, a forged line, a bidi override. */
const evil = (what: string) =>
  `${what}\u001b[2J\u001b]0;owned\u0007\u001b]8;;https://evil.example/\u001b\\x\u001b]8;;\u001b\\\u009b31m\r\nerror: forged\u202etxt.exe\u007f`;

function job(id: string, status: string) {
  return {
    id,
    name: evil('name'),
    status,
    phase: evil('phase'),
    service_name: evil('service'),
    service_id: '7f17367b-ad97-426b-856d-561e4e87daf2',
    processed_bytes: 10,
    processed_features: 2,
    processed_layers: 1,
    total_layers: 1,
    source_filename: evil('file.geojson'),
    discovery: {
      format: evil('geojson'),
      size_bytes: 10,
      layers: [{ name: evil('layer'), geometry_type: evil('Point'), feature_count: 2, srid: 4326 }],
      warnings: [evil('discovery warning')],
    },
    warnings: [evil('warning')],
    ...(status === 'failed' ? { error_message: evil('error') } : {}),
    created_at: '2026-01-01T00:00:00.000Z',
  };
}

interface Seen {
  method: string;
  url: string;
  apiKey: string | undefined;
}

/** A stand-in API on 127.0.0.1 that answers with hostile text everywhere, and records who called it. */
function hostileApi(trapUrl: () => string): { server: Server; seen: Seen[] } {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', apiKey: req.headers['x-api-key'] as string });
    req.resume();
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? '').split('?')[0] ?? '';
    const base = '/api/v1/workspaces/ws';
    if (path === `${base}/imports`) return send(200, { imports: [job('a1', 'published')] });
    if (path === `${base}/imports/a1`) return send(200, job('a1', 'published'));
    if (path === `${base}/imports/a1/history`)
      return send(200, {
        events: [
          { ...job('a1', 'failed'), created_at: '2026-01-01T00:00:00.000Z', error_message: evil('e') },
        ],
      });
    if (path === `${base}/imports/a1/publish`) return send(202, job('a1', 'published'));
    if (path === `${base}/imports/f1/publish`) return send(202, job('f1', 'failed'));
    if (path.startsWith(`${base}/services/`) && path.endsWith('/layers'))
      return send(200, { layers: [{ public_id: evil('roads'), title: evil('Roads') }] });
    if (path === `${base}/imports/moved`)
      return send(307, {}, { Location: `${trapUrl()}/api/v1/workspaces/ws/imports/a1` });
    return send(404, {
      code: 404,
      message: evil('Not Found'),
      detail: evil('detail'),
      reason: evil('import_not_found'),
      request_id: evil('req'),
    });
  });
  return { server, seen };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir = '';
let api: ReturnType<typeof hostileApi>;
let trap: ReturnType<typeof hostileApi>;
let apiUrl = '';
let trapUrl = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'geoplane-cli-hardening-'));
  trap = hostileApi(() => trapUrl);
  trapUrl = await listen(trap.server);
  api = hostileApi(() => trapUrl);
  apiUrl = await listen(api.server);
});

afterAll(async () => {
  await Promise.all([api, trap].map(({ server }) => new Promise((r) => server.close(r))));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  api.seen.length = 0;
  trap.seen.length = 0;
});

/** The environment without the caller's GEOPLANE_* settings, with an empty data dir. */
function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GEOPLANE_'))),
    GEOPLANE_DATA_DIR: mkdtempSync(join(dir, 'data-')),
    ...extra,
  };
}

function geoplane(args: string[], childEnv: NodeJS.ProcessEnv): Promise<Run> {
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
      reject(new Error(`geoplane ${args.join(' ')} ran too long\n${stdout}\n${stderr}`));
    }, 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

const explain = (run: Run) => `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

/** Nothing in the output a terminal would act on, and no line the server forged. */
function expectInert(run: Run): void {
  const all = run.stdout + run.stderr;
  expect(all, explain(run)).not.toMatch(unsafeButNewline);
  expect(all, explain(run)).not.toMatch(/^error: forged/m);
}

describe('the CLI prints no control characters of a server (finding 2)', { timeout: 90_000 }, () => {
  const keyed = () => env({ GEOPLANE_URL: apiUrl, GEOPLANE_API_KEY: KEY });

  it.each([
    ['imports get', ['imports', 'get', 'a1', '--workspace', 'ws'], 0],
    ['imports get --json', ['imports', 'get', 'a1', '--workspace', 'ws', '--json'], 0],
    ['imports list', ['imports', 'list', '--workspace', 'ws'], 0],
    ['imports history', ['imports', 'history', 'a1', '--workspace', 'ws'], 0],
    [
      'imports publish --wait (published: service and layers)',
      ['imports', 'publish', 'a1', '--workspace', 'ws', '--wait'],
      0,
    ],
    [
      'imports publish --wait (failed: the error message)',
      ['imports', 'publish', 'f1', '--workspace', 'ws', '--wait'],
      1,
    ],
    ['an error answer (message, reason)', ['imports', 'get', 'nope', '--workspace', 'ws'], 1],
  ])('%s', async (_what, args, code) => {
    const run = await geoplane(args as string[], keyed());
    expect(run.code, explain(run)).toBe(code);
    expectInert(run);
    // What the server said is still there, made visible.
    expect(run.stdout + run.stderr).toMatch(/\\x1b\[2J|\\u001b\[2J/);
    // --json is still the very JSON value the server sent.
    if (args.includes('--json')) expect(JSON.parse(run.stdout)).toEqual(job('a1', 'published'));
  });
});

describe('the CLI sends its key only where it should (finding 1)', { timeout: 90_000 }, () => {
  it('never sends the local bootstrap key to a URL other than the one its file names', async () => {
    const data = mkdtempSync(join(dir, 'boot-'));
    writeFileSync(
      join(data, 'bootstrap.json'),
      JSON.stringify({ url: 'https://127.0.0.1:1/api/v1', api_key: BOOTSTRAP_KEY }),
    );
    const args = ['imports', 'list', '--workspace', 'ws'];
    for (const [urlAs, childEnv, argv] of [
      ['GEOPLANE_URL', { ...env({ GEOPLANE_URL: apiUrl }), GEOPLANE_DATA_DIR: data }, args],
      ['--url', { ...env({}), GEOPLANE_DATA_DIR: data }, [...args, '--url', apiUrl]],
    ] as const) {
      const run = await geoplane([...argv], childEnv);
      expect(run.code, `${urlAs}\n${explain(run)}`).toBe(2);
      expect(run.stderr).toMatch(/no API key for http:\/\/127\.0\.0\.1:\d+\/api\/v1/);
      expect(run.stderr + run.stdout).not.toContain(BOOTSTRAP_KEY);
    }
    expect(api.seen).toEqual([]);
  });

  it('refuses plain http to a host that is not loopback before connecting, and allows it to loopback', async () => {
    const port = new URL(apiUrl).port;
    const args = ['imports', 'list', '--workspace', 'ws'];
    const refused = await geoplane(
      args,
      env({ GEOPLANE_URL: `http://0.0.0.0:${port}`, GEOPLANE_API_KEY: KEY }),
    );
    expect(refused.code, explain(refused)).toBe(2);
    expect(refused.stderr).toMatch(/refusing to send the API key over plain http to 0\.0\.0\.0/);
    expect(api.seen).toEqual([]);
    const allowed = await geoplane(args, env({ GEOPLANE_URL: apiUrl, GEOPLANE_API_KEY: KEY }));
    expect(allowed.code, explain(allowed)).toBe(0);
    expect(api.seen.map((s) => s.apiKey)).toEqual([KEY]);
  });

  it('does not follow a redirect: the key goes nowhere else', async () => {
    const run = await geoplane(
      ['imports', 'get', 'moved', '--workspace', 'ws'],
      env({ GEOPLANE_URL: apiUrl, GEOPLANE_API_KEY: KEY }),
    );
    expect(run.code, explain(run)).toBe(1);
    expect(run.stderr).toMatch(
      /redirect \(HTTP 307 to http:\/\/127\.0\.0\.1:\d+\/.*does not follow redirects/,
    );
    expect(api.seen).toHaveLength(1);
    expect(trap.seen).toEqual([]);
  });
});
