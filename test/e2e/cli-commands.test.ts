import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { asSuperAdmin, call, uniqueName } from '../support/client.ts';
import { createWorkspace } from '../support/fixtures.ts';
import { importsOf, pointsGeoJson } from '../support/imports.ts';

/*
 * The CLI's commands for scripts (issue #25): what an error prints (message, detail, status,
 * reason), the exit codes (0 ok, 1 refused, 2 usage, 3 unreachable), imports list/get/retry/cancel
 * and layers list against real imports on the shared local host, and `--json` as the API's answer.
 * Black box: the real `geoplane` binary, stdio piped.
 */

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/geoplane.mjs');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'geoplane-cli-commands-'));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The environment without the caller's GEOPLANE_* settings, with an empty data dir. */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GEOPLANE_'))),
    GEOPLANE_DATA_DIR: mkdtempSync(join(dir, 'data-')),
    ...extra,
  };
}

/** The shared host's URL, key and CA. */
function hostEnv(): NodeJS.ProcessEnv {
  const host = inject('host');
  return bareEnv({
    GEOPLANE_URL: host.url,
    GEOPLANE_API_KEY: host.apiKey,
    GEOPLANE_CA_FILE: join(host.dataDir, 'tls-cert.pem'),
  });
}

/** Runs `geoplane …` as a script would (stdio piped: not a TTY). */
function geoplane(args: string[], env: NodeJS.ProcessEnv = hostEnv(), timeoutMs = 150_000): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env, stdio: 'pipe' });
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
      expect(stdout + stderr).not.toContain(inject('host').apiKey);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

const explain = (run: Run) => `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

/** `--json`'s stdout: exactly one JSON document. */
function json(run: Run): any {
  expect(run.code, explain(run)).toBe(0);
  return JSON.parse(run.stdout);
}

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const wait = ['--interval', '0.25', '--timeout', '120'];

describe('errors and exit codes', { timeout: 200_000 }, () => {
  let ws = '';

  beforeAll(async () => {
    ws = (await createWorkspace(uniqueName('cli-err'))).name;
  });

  it('a misspelled workspace prints the message, the detail naming it, status and reason; exit 1', async () => {
    // Arrange: what the API answers for it.
    const missing = `${ws}x`;
    const api = await call('GET', `/workspaces/${missing}/imports`, { headers: asSuperAdmin() });
    expect(api.status).toBe(404);

    // Act
    const runs = await Promise.all([
      geoplane(['imports', 'list', '--workspace', missing]),
      geoplane(['layers', 'list', '--workspace', missing, '--json']),
    ]);

    // Assess: one line with every part of the body, nothing on stdout (--json too).
    for (const run of runs) {
      expect(run.code, explain(run)).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `error: Not Found: Workspace '${missing}' does not exist. (404 workspace_not_found)\n`,
      );
      expect(run.stderr).toContain(api.body.message);
      expect(run.stderr).toContain(api.body.detail);
      expect(run.stderr).toContain(api.body.reason);
    }
  });

  it.each([
    ['an unknown command', ['nope']],
    ['an unknown option', ['imports', 'list', '--workspace', 'w', '--frobnicate']],
    ['a missing --workspace', ['imports', 'list']],
    ['a missing argument', ['imports', 'get', '--workspace', 'w']],
    ['a bad option value', ['imports', 'list', '--workspace', 'w', '--limit', '0']],
    ['a bad status', ['imports', 'list', '--workspace', 'w', '--status', 'done']],
    ['a subcommand missing', ['imports']],
    ['no command at all', []],
  ])('a usage error (%s) exits 2 without sending anything', async (_what, args) => {
    const run = await geoplane(args, bareEnv({ GEOPLANE_URL: `http://127.0.0.1:${await closedPort()}` }));
    expect(run.code, explain(run)).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/error|Usage:/);
  });

  it.each([
    ['an empty import id', ['imports', 'get', '', '--workspace', 'w'], 'error: an import id is required\n'],
    ['a file that does not exist', ['import', 'missing.geojson', '--workspace', 'w'], /no such file/],
  ])('a usage error the CLI finds (%s) exits 2', async (_what, args, message) => {
    const run = await geoplane(args);
    expect(run.code, explain(run)).toBe(2);
    expect(run.stdout).toBe('');
    if (typeof message === 'string') expect(run.stderr).toBe(message);
    else expect(run.stderr).toMatch(message);
  });

  it('--help and --version exit 0', async () => {
    const help = await geoplane(['layers', 'list', '--help'], bareEnv());
    expect(help.code, explain(help)).toBe(0);
    expect(help.stdout).toMatch(/--service <service>/);
    const version = await geoplane(['--version'], bareEnv());
    expect(version.code, explain(version)).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('an API that refuses connections is unreachable: exit 3, for every command', async () => {
    const env = bareEnv({ GEOPLANE_URL: `http://127.0.0.1:${await closedPort()}`, GEOPLANE_API_KEY: 'k' });
    for (const args of [
      ['imports', 'list', '--workspace', 'w'],
      ['imports', 'retry', 'a1', '--workspace', 'w', '--json'],
      ['layers', 'list', '--workspace', 'w'],
    ]) {
      const run = await geoplane(args, env);
      expect(run.code, explain(run)).toBe(3);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: cannot connect to 127\.0\.0\.1:\d+: connection refused/);
    }
  });
});

describe('imports list, get, cancel and retry against real imports', { timeout: 300_000 }, () => {
  let ws = '';
  let imports: ReturnType<typeof importsOf>;

  beforeAll(async () => {
    ws = (await createWorkspace(uniqueName('cli-imp'))).name;
    imports = importsOf(ws);
  });

  it('imports list reads every page; --limit/--cursor read one page; --json is what the API answers', async () => {
    // Arrange: three imports awaiting their upload (they stay as they are).
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      const created = await imports.create({ name, source: { kind: 'upload', filename: `${name}.geojson` } });
      expect(created.status, created.text).toBe(201);
      ids.push(created.body.id);
    }
    const api = await call('GET', `/workspaces/${ws}/imports?limit=1000`, { headers: asSuperAdmin() });

    // Act / Assess: all of them, as the API lists them.
    const all = json(await geoplane(['imports', 'list', '--workspace', ws, '--json']));
    expect(all).toEqual(api.body.imports);
    expect(all.map((j: { id: string }) => j.id)).toEqual(ids);

    // One page at a time: the API's page, with its cursor, until there is none.
    const first = json(await geoplane(['imports', 'list', '--workspace', ws, '--limit', '2', '--json']));
    expect(first.imports).toEqual(api.body.imports.slice(0, 2));
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = json(
      await geoplane(['imports', 'list', '-w', ws, '--limit', '2', '--cursor', first.next_cursor, '--json']),
    );
    expect(second.imports).toEqual(api.body.imports.slice(2));
    expect(second.next_cursor).toBeUndefined();

    // As text: the page's rows on stdout, where to go on on stderr.
    const text = await geoplane(['imports', 'list', '--workspace', ws, '--limit', '2']);
    expect(text.code, explain(text)).toBe(0);
    const [header, ...rows] = text.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+STATUS\s+PHASE\s+SERVICE\s+FEATURES\s+CREATED$/);
    expect(rows.map((r) => r.split(/\s+/)[0])).toEqual(ids.slice(0, 2));
    expect(text.stderr).toMatch(/^more: --cursor \S+$/m);
  });

  it('imports get prints the import; --json is the API’s import', async () => {
    const job = await imports.uploaded(pointsGeoJson(10), 'get.geojson');
    const ready = await imports.until(job.id, ['ready_to_publish', 'failed'], 120_000);
    expect(ready.body.status).toBe('ready_to_publish');

    const text = await geoplane(['imports', 'get', job.id, '--workspace', ws]);
    expect(text.code, explain(text)).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^import\\s+${job.id}$`, 'm'));
    expect(text.stdout).toMatch(/^status\s+ready_to_publish/m);
    expect(json(await geoplane(['imports', 'get', job.id, '--workspace', ws, '--json']))).toEqual(
      (await imports.get(job.id)).body,
    );

    // Cancel it with --wait: the staged data is dropped, the outcome printed, exit 0.
    const cancelled = await geoplane(['imports', 'cancel', job.id, '--workspace', ws, '--wait', ...wait]);
    expect(cancelled.code, explain(cancelled)).toBe(0);
    expect(cancelled.stdout).toContain(`import ${job.id} cancelled`);
    expect((await imports.get(job.id)).body.status).toBe('cancelled');
  });

  it('imports cancel of an import awaiting its upload cancels it at once; --json prints the import', async () => {
    const created = await imports.create({ source: { kind: 'upload', filename: 'c.geojson' } });
    expect(created.status, created.text).toBe(201);

    const run = await geoplane(['imports', 'cancel', created.body.id, '--workspace', ws, '--json']);

    const printed = json(run);
    expect(printed.status).toBe('cancelled');
    expect(printed).toEqual((await imports.get(created.body.id)).body);
    expect(run.stderr).toBe('');
  });

  it('imports retry: a failed load runs again and, with --wait, ends failed again (exit 1); a retry the API refuses prints its detail and reason (exit 1)', async () => {
    // Arrange: an import that failed (a truncated file).
    const job = await imports.uploaded(
      Buffer.from('{"type":"FeatureCollection","features":[{"type":"Feature",'),
      'broken.geojson',
    );
    expect((await imports.until(job.id, ['failed'], 120_000)).body.status).toBe('failed');

    // Act
    const retried = await geoplane([
      'imports',
      'retry',
      job.id,
      '--workspace',
      ws,
      '--wait',
      '--json',
      ...wait,
    ]);

    // Assess: the last import read on stdout (and only that), failed again after one retry.
    expect(retried.code, explain(retried)).toBe(1);
    const printed = JSON.parse(retried.stdout);
    expect(printed).toMatchObject({ id: job.id, status: 'failed', retry_count: 1 });
    expect(printed).toEqual((await imports.get(job.id)).body);
    expect(retried.stderr).toContain(`error: import ${job.id} failed: ${printed.error_message}`);
    const events = (await imports.history(job.id)).body.events as { status: string }[];
    expect(events.filter((e) => e.status === 'failed').length).toBe(2);

    // A cancelled import is not failed: 409, with the API's words.
    const cancelled = await imports.create({ source: { kind: 'upload', filename: 'x.geojson' } });
    expect((await imports.cancel(cancelled.body.id)).status).toBe(204);
    const refused = await geoplane(['imports', 'retry', cancelled.body.id, '--workspace', ws]);
    const api = await imports.retry(cancelled.body.id);
    expect(api.status).toBe(409);
    expect(refused.code, explain(refused)).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`error: ${api.body.message}: ${api.body.detail} (409 ${api.body.reason})\n`);
  });
});

describe('layers list', { timeout: 300_000 }, () => {
  let ws = '';
  const services = [uniqueName('cli-roads'), uniqueName('cli-rivers')];

  beforeAll(async () => {
    ws = (await createWorkspace(uniqueName('cli-lay'))).name;
    const imports = importsOf(ws);
    for (const [i, service] of services.entries()) {
      const job = await imports.uploaded(pointsGeoJson(5 + i), `${service}.geojson`, {
        service_name: service,
        auto_publish: true,
      });
      const done = await imports.until(job.id, ['published', 'failed'], 120_000);
      expect(done.body.status, JSON.stringify(done.body)).toBe('published');
    }
  });

  const layersOf = async (service: string) =>
    (
      await call('GET', `/workspaces/${ws}/services/${service}/layers?limit=1000`, {
        headers: asSuperAdmin(),
      })
    ).body.layers as { id: string; public_id: string; title: string; service_id: string }[];

  it("--service lists that service's layers; --json is the API's layers", async () => {
    const [service] = services as [string];
    const expected = await layersOf(service);
    expect(expected.length).toBeGreaterThan(0);

    const text = await geoplane(['layers', 'list', '--workspace', ws, '--service', service]);
    expect(text.code, explain(text)).toBe(0);
    const [header, ...rows] = text.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^PUBLIC_ID\s+TITLE\s+GEOMETRY\s+ENABLED\s+PUBLIC\s+ID$/);
    expect(rows).toHaveLength(expected.length);
    for (const layer of expected)
      expect(rows.some((r) => r.startsWith(`${layer.public_id}  `) && r.endsWith(layer.id))).toBe(true);

    expect(json(await geoplane(['layers', 'list', '-w', ws, '-s', service, '--json']))).toEqual(expected);
  });

  it("without --service lists every service's layers, each with its service's name", async () => {
    const listed = (await call('GET', `/workspaces/${ws}/services?limit=1000`, { headers: asSuperAdmin() }))
      .body.services as { id: string; name: string }[];
    expect(listed.map((s) => s.name).sort()).toEqual([...services].sort());
    const expected = (await Promise.all(listed.map((s) => layersOf(s.id)))).flat();

    const text = await geoplane(['layers', 'list', '--workspace', ws]);
    expect(text.code, explain(text)).toBe(0);
    const [header, ...rows] = text.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^SERVICE\s+PUBLIC_ID\s+TITLE\s+GEOMETRY\s+ENABLED\s+PUBLIC\s+ID$/);
    expect(rows).toHaveLength(expected.length);
    for (const layer of expected) {
      const service = listed.find((s) => s.id === layer.service_id)?.name;
      expect(
        rows.some((r) => new RegExp(`^${service}\\s+${layer.public_id}\\s.*${layer.id}$`).test(r)),
        `${service} ${layer.public_id}\n${text.stdout}`,
      ).toBe(true);
    }

    expect(json(await geoplane(['layers', 'list', '--workspace', ws, '--json']))).toEqual(expected);
  });

  it('an unknown service is the API’s 404 with its detail and reason (exit 1)', async () => {
    const missing = uniqueName('nosvc');
    const api = await call('GET', `/workspaces/${ws}/services/${missing}/layers`, {
      headers: asSuperAdmin(),
    });
    expect(api.status).toBe(404);

    const run = await geoplane(['layers', 'list', '--workspace', ws, '--service', missing, '--json']);

    expect(run.code, explain(run)).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`error: ${api.body.message}: ${api.body.detail} (404 ${api.body.reason})\n`);
  });
});

describe('import --service, --layer, --append and --replace (ADR 0126, 0127)', { timeout: 400_000 }, () => {
  let ws = '';

  beforeAll(async () => {
    ws = (await createWorkspace(uniqueName('cli-tgt'))).name;
  });

  const file = (name: string, n: number, offset: number) => {
    const path = join(dir, name);
    writeFileSync(path, pointsGeoJson(n, offset));
    return path;
  };
  const historyOf = async (id: string) =>
    JSON.stringify((await importsOf(ws).history(id, '?limit=100')).body);

  it('names the service and the layer up front, then appends to and replaces that layer by name', async () => {
    const service = uniqueName('cli-svc');
    const first = json(
      await geoplane([
        'import',
        file('first.geojson', 12, 0),
        '-w',
        ws,
        '--service',
        service,
        '--layer',
        'roads',
        '--publish',
        '--json',
        ...wait,
      ]),
    );
    expect(first).toMatchObject({ status: 'published', service_name: service });
    expect(first.plan.layers[0].public_id).toBe('roads');

    const appended = json(
      await geoplane([
        'import',
        file('more.geojson', 5, 100),
        '-w',
        ws,
        '--append',
        'roads',
        '--publish',
        '--json',
        ...wait,
      ]),
    );
    expect(appended.status, JSON.stringify(appended)).toBe('published');
    expect(appended.plan.layers[0].target).toMatchObject({ mode: 'append' });
    expect(await historyOf(appended.id)).toMatch(/5 rows appended \(fids 13–17; 17 rows now\)/);

    const replaced = json(
      await geoplane([
        'import',
        file('new.geojson', 3, 200),
        '-w',
        ws,
        '--replace',
        'new=roads',
        '--publish',
        '--json',
        ...wait,
      ]),
    );
    expect(replaced.status, JSON.stringify(replaced)).toBe('published');
    expect(await historyOf(replaced.id)).toMatch(/its 17 rows were replaced by 3/);
    for (const id of [replaced.id, appended.id]) {
      const rolled = await geoplane(['imports', 'rollback', id, '-w', ws, '--wait', ...wait]);
      expect(rolled.code, explain(rolled)).toBe(0);
    }
    expect(await historyOf(replaced.id)).toMatch(/its previous data was restored \(17 rows\)/);
  });

  it('a source layer named twice, or a flag without a name, is a usage error (exit 2) that sends nothing', async () => {
    const path = file('twice.geojson', 1, 0);
    const twice = await geoplane(['import', path, '-w', ws, '--layer', 'a', '--replace', 'b']);
    expect(twice.code, explain(twice)).toBe(2);
    expect(twice.stderr).toMatch(/--replace b: the file's first layer is named twice/);
    const empty = await geoplane(['import', path, '-w', ws, '--append', 'points=']);
    expect(empty.code, explain(empty)).toBe(2);
    const listed = await importsOf(ws).api('GET', '?limit=100');
    expect(listed.body.imports.map((i: { name: string }) => i.name)).not.toContain('twice');
  });

  it('a target the workspace does not have is the API’s 422 with its detail (exit 1)', async () => {
    const run = await geoplane(['import', file('none.geojson', 1, 0), '-w', ws, '--replace', 'nowhere']);
    expect(run.code, explain(run)).toBe(1);
    expect(run.stderr).toMatch(
      /the workspace has no layer 'nowhere' to replace\. \(422 import_target_invalid\)/,
    );
  });
});
