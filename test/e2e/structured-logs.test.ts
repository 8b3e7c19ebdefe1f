import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLOBAL_ROLE_CLAIM } from '#auth/authenticate.ts';
import { localIssuer } from '#infra/local/files.ts';
import { type ApiResponse, call, uniqueName } from '../support/client.ts';
import { FAULT_HOST, type HostProcess, startHostProcess } from '../support/host-process.ts';

/** One request the test made and what it saw. */
interface Seen {
  method: string;
  path: string;
  status: number;
  requestId: string;
}

const ACCESS_LINE = /^access (\S+) (\S+) (\d{3}) (\d+)ms (\S+)$/;
/** A CloudWatch Embedded Metric Format document: none is ever written (ADR 0115). */
const EMF_LINE = /"_aws":\{"Timestamp":\d+,"CloudWatchMetrics"/;
/** The line a finished request writes where measurements are on (ADR 0092, 0115). */
const MEASURED_LINE = /"message":"request measured"/;

describe('the local host’s logs (ADR 0090)', () => {
  let host: HostProcess;
  const seen: Seen[] = [];
  const secrets: string[] = [];
  let unavailable: Seen | undefined;

  /** A request to this test's host, remembered with the request id its answer carries. */
  async function send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
    const res: ApiResponse = await call(method, path, {
      headers,
      body,
      baseUrl: host.url,
      dataDir: host.dataDir,
    });
    const requestId = res.headers['x-amzn-requestid'] ?? '';
    expect(requestId, `${method} ${path} answers with its request id`).toMatch(/^[0-9a-f-]{36}$/);
    if (res.body?.request_id) expect(res.body.request_id).toBe(requestId);
    const entry = { method, path: `/api/v1${path.split('?')[0]}`, status: res.status, requestId };
    seen.push(entry);
    return { res, entry };
  }

  beforeAll(async () => {
    host = await startHostProcess();
    const admin = { 'X-API-Key': host.apiKey as string };

    // Prepare: a workspace, a key of it (its secret in the answer), a service with a password.
    const ws = (await send('POST', '/workspaces', admin, { name: uniqueName('logs') })).res.body;
    const key = (await send('POST', `/workspaces/${ws.id}/apikeys`, admin, { name: 'k', role_id: 'admin' }))
      .res.body;
    secrets.push(key.key);
    const password = `svc-pw-${Math.random().toString(36).slice(2)}`;
    secrets.push(password);
    const service = (
      await send('POST', `/workspaces/${ws.id}/services`, admin, {
        name: 'down',
        type: 'postgis',
        enabled: false,
        // A closed port of the fault host: the data source is down.
        connection: { host: FAULT_HOST, port: 1, database: 'gis', user: 'reader', password },
      })
    ).res.body;
    expect(service.id).toBeDefined();

    // Act: requests of many kinds, with every credential kind.
    await send('GET', `/workspaces/${ws.id}`, { 'X-API-Key': key.key });
    const discover = await send('POST', `/workspaces/${ws.id}/services/${service.id}/discover`, admin);
    if (discover.res.status === 503) unavailable = discover.entry;
    const login = await send('POST', '/auth/login', {}, { token: key.key });
    const cookies = Object.fromEntries(
      login.res.cookies.map((c) => c.split(';')[0]?.split('=') as [string, string]),
    );
    secrets.push(cookies['__Host-session'] as string, cookies.csrf_token as string);
    await send('GET', '/auth/me', {
      Cookie: `__Host-session=${cookies['__Host-session']}; csrf_token=${cookies.csrf_token}`,
    });
    const jwt = await (await localIssuer(host.dataDir)).sign(
      { [GLOBAL_ROLE_CLAIM]: 'super_admin' },
      'log-user',
      600,
    );
    secrets.push(jwt);
    await send('GET', '/workspaces?limit=2', { Authorization: `Bearer ${jwt}` });
    const wrong = 'gpk_thisKeyDoesNotExistButLooksRealAAAAAAAAAAAA';
    secrets.push(wrong);
    await send('GET', '/workspaces', { 'X-API-Key': wrong }); // 401 at the gateway
    await send('GET', '/no-such-route', admin); // 404 at the gateway
    await send('POST', '/workspaces', { ...admin, 'Content-Type': 'text/plain' }, 'name=x'); // 415
    await send('GET', '/openapi.json');

    // The plain HTTP port's 426 and the upload endpoint are logged too.
    const plain = await new Promise<{ status: number; id: string }>((resolve, reject) => {
      httpRequest(`${host.httpUrl}/workspaces`, { method: 'GET' }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-amzn-requestid']) }),
        );
      })
        .on('error', reject)
        .end();
    });
    seen.push({ method: 'GET', path: '/api/v1/workspaces', status: plain.status, requestId: plain.id });
    const upload = await call('POST', '/local-uploads', {
      baseUrl: host.url.replace(/\/api\/v1$/, ''),
      dataDir: host.dataDir,
      headers: { 'Content-Type': 'text/plain' },
      body: 'not a form',
    });
    seen.push({
      method: 'POST',
      path: '/local-uploads',
      status: upload.status,
      requestId: upload.headers['x-amzn-requestid'] ?? '',
    });

    // The access line is written when the answer is sent: wait until every request has one.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const lines = host
        .output()
        .split('\n')
        .filter((l) => ACCESS_LINE.test(l));
      if (lines.length >= seen.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 240_000);

  afterAll(async () => {
    await host?.stop();
    host?.cleanup();
  });

  it('prints one access line per request: method, path, status, ms and the answer’s request id', () => {
    const lines = host
      .output()
      .split('\n')
      .map((l) => ACCESS_LINE.exec(l))
      .filter((m) => m !== null);
    expect(seen.map((s) => s.status)).toEqual(expect.arrayContaining([201, 200, 401, 404, 415, 426]));
    for (const s of seen) {
      const mine = lines.filter((m) => m[5] === s.requestId);
      expect(mine, `${s.method} ${s.path} ${s.status}`).toHaveLength(1);
      expect(mine[0]?.slice(1, 4)).toEqual([s.method, s.path, String(s.status)]);
    }
    // Only what was requested: no line without a request behind it (the JWKS isn't asked here).
    expect(lines).toHaveLength(seen.length);
  });

  it('logs a data source’s outage (503) at WARN with its cause and the request’s keys', () => {
    expect(unavailable, 'discover on a service whose database is down answers 503').toBeDefined();
    const warn = host
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, any>)
      .find((l) => l.request_id === unavailable?.requestId);
    expect(warn).toMatchObject({
      level: 'WARN',
      message: 'dependency unavailable',
      operation: 'discoverLayers',
      status: 503,
      error: { name: 'UnavailableError', reason: 'datasource_unavailable' },
    });
    expect(warn?.workspace_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(warn?.principal_id).toBeTruthy();
    expect(JSON.stringify(warn?.error.causes)).toMatch(/ECONNREFUSED/);
  });

  it('prints no EMF metric lines nor request measurements: the local host turns them off (ADR 0092)', () => {
    expect(seen.length).toBeGreaterThan(5);
    expect(host.output()).not.toMatch(EMF_LINE);
    expect(host.output()).not.toMatch(MEASURED_LINE);
  });

  it('prints none of the secrets the requests carried or received', () => {
    const output = host.output();
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(output, 'a secret reached the logs').not.toContain(secret);
    }
    // The bootstrap key is printed once, by design, in the first start's banner — never again.
    expect(output.split(host.apiKey as string).length - 1).toBeLessThanOrEqual(1);
  });
});

describe('the local host’s request measurements when the operator asks for them (ADR 0092, 0115)', () => {
  let host: HostProcess;

  beforeAll(async () => {
    host = await startHostProcess({ POWERTOOLS_METRICS_DISABLED: 'false' });
  }, 240_000);

  afterAll(async () => {
    await host?.stop();
    host?.cleanup();
  });

  it('prints one measurement line per request, and no EMF, with POWERTOOLS_METRICS_DISABLED=false', async () => {
    const res = await call('GET', '/workspaces?limit=1', {
      headers: { 'X-API-Key': host.apiKey as string },
      baseUrl: host.url,
      dataDir: host.dataDir,
    });
    expect(res.status).toBe(200);
    let docs: Record<string, unknown>[] = [];
    const deadline = Date.now() + 10_000;
    while (docs.length === 0 && Date.now() < deadline) {
      docs = host
        .output()
        .split('\n')
        .filter((l) => MEASURED_LINE.test(l))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (docs.length === 0) await new Promise((r) => setTimeout(r, 100));
    }

    expect(docs).toEqual([
      expect.objectContaining({
        operation: 'listWorkspaces',
        service: 'geoplane-local',
        status: 200,
        status_class: '2xx',
        throttled: false,
      }),
    ]);
    expect(host.output()).not.toMatch(EMF_LINE);
  });
});
