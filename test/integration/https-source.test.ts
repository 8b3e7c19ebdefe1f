import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchUrlToFile, type UrlFetchOptions } from '#datasources/imports/https-source.ts';
import { parseAllowList, TargetPolicy } from '#datasources/network-policy.ts';
import { UnavailableError } from '#domain/errors.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { startFileServer, type UrlSourceTls, urlSourceTls } from '../support/url-source.ts';

/**
 * The URL fetch of imports (ADR 0129) against HTTPS servers on 127.0.0.1 with a certificate of the
 * test's own: the policy, the pinned address, redirects, status, size and time limits, certificates.
 */
const dir = mkdtempSync(join(tmpdir(), 'geoplane-url-fetch-'));
let tls: UrlSourceTls;
let server: Awaited<ReturnType<typeof startFileServer>>;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
const FILE = Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: [] }));
const BIG = Buffer.alloc(5000, 'x');

beforeAll(async () => {
  tls = await urlSourceTls(dir);
  server = await startFileServer(
    tls,
    (req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const path = (req.url ?? '').split('?')[0];
      const port = server.port;
      switch (path) {
        case '/file.geojson':
          res.writeHead(200, { 'Content-Type': 'application/geo+json' }).end(FILE);
          return;
        case '/relative':
          res.writeHead(302, { Location: '/file.geojson', 'Set-Cookie': 'session=secret' }).end();
          return;
        case '/to-literal':
          res.writeHead(301, { Location: `https://127.0.0.1:${port}/file.geojson` }).end();
          return;
        case '/to-private':
          res.writeHead(307, { Location: 'https://10.0.0.7/file.geojson' }).end();
          return;
        case '/to-metadata':
          res.writeHead(308, { Location: 'https://169.254.169.254/latest/meta-data/' }).end();
          return;
        case '/to-http':
          res.writeHead(302, { Location: `http://files.test:${port}/file.geojson` }).end();
          return;
        case '/loop':
          res.writeHead(302, { Location: '/loop' }).end();
          return;
        case '/missing':
          res.writeHead(404).end('no');
          return;
        case '/broken':
          res.writeHead(503).end('later');
          return;
        case '/declared-big':
          res.writeHead(200, { 'Content-Length': String(BIG.length) }).end(BIG);
          return;
        case '/chunked-big':
          res.writeHead(200);
          res.write(BIG.subarray(0, 2500));
          setTimeout(() => res.end(BIG.subarray(2500)), 20);
          return;
        case '/gzip':
          res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(FILE);
          return;
        case '/silent':
          return; // never answers
        case '/trickle': {
          res.writeHead(200);
          const timer = setInterval(() => res.write('x'), 100);
          res.on('close', () => clearInterval(timer));
          return;
        }
        default:
          res.writeHead(500).end();
      }
    },
    '127.0.0.1',
  );
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `files.test` resolves to 127.0.0.1 here only (the system resolver knows no such name). */
function options(extra: Partial<UrlFetchOptions> = {}, allow = 'files.test') {
  const asked: string[] = [];
  const targets = new TargetPolicy(parseAllowList(allow), async (name) => {
    asked.push(name);
    if (name === 'files.test' || name === 'other.test') return ['127.0.0.1'];
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  });
  return {
    asked,
    options: { targets, maxBytes: 4096, timeoutMs: 3000, extraCa: tls.cert, ...extra } as UrlFetchOptions,
  };
}

const url = (path: string, host = 'files.test') => `https://${host}:${server.port}${path}`;
let n = 0;
const target = () => join(dir, `out-${++n}`, 'source');

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('fetching an import URL', () => {
  it('streams the file to the target, dialling the checked address and sending no credentials', async () => {
    const { options: o, asked } = options();
    const out = target();
    const before = seen.length;

    const bytes = await fetchUrlToFile(url('/file.geojson?x=1'), out, o);

    expect(bytes).toBe(FILE.length);
    expect(readFileSync(out)).toEqual(FILE);
    expect(existsSync(`${out}.partial`)).toBe(false);
    expect(asked).toEqual(['files.test']);
    const [request] = seen.slice(before);
    expect(request?.url).toBe('/file.geojson?x=1');
    expect(request?.headers.host).toBe(`files.test:${server.port}`);
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.headers.cookie).toBeUndefined();
    expect(request?.headers['accept-encoding']).toBe('identity');
  });

  it('follows a redirect after checking it again, and returns no cookie the server set', async () => {
    const { options: o, asked } = options();
    const before = seen.length;

    await fetchUrlToFile(url('/relative'), target(), o);

    expect(asked).toEqual(['files.test', 'files.test']);
    const requests = seen.slice(before);
    expect(requests.map((r) => r.url)).toEqual(['/relative', '/file.geojson']);
    expect(requests[1]?.headers.cookie).toBeUndefined();
  });

  it.each([
    ['a loopback literal the list does not name', '/to-literal'],
    ['a private address', '/to-private'],
    ['the instance metadata address', '/to-metadata'],
  ])('refuses a redirect to %s before connecting there', async (_title, path) => {
    const before = seen.length;
    const error = await failure(fetchUrlToFile(url(path), target(), options().options));
    expect(error).toBeInstanceOf(ImportInputError);
    expect((error as ImportInputError).code).toBe('uri_not_allowed');
    expect(seen.length - before).toBe(1);
  });

  it('refuses a downgrade to plain http', async () => {
    const error = await failure(fetchUrlToFile(url('/to-http'), target(), options().options));
    expect(error.message).toMatch(/from https to plain http/);
  });

  it('stops after five redirects', async () => {
    const before = seen.length;
    const error = await failure(fetchUrlToFile(url('/loop'), target(), options().options));
    expect(error.message).toMatch(/redirected more than 5 times/);
    expect(seen.length - before).toBe(6);
  });

  it('refuses a host the policy refuses (loopback by name), without a request', async () => {
    const before = seen.length;
    const error = await failure(
      fetchUrlToFile(url('/file.geojson', 'other.test'), target(), options().options),
    );
    expect((error as ImportInputError).code).toBe('uri_not_allowed');
    expect(seen.length).toBe(before);
  });

  it('a 404 is final and named; a 503 is an outage to retry', async () => {
    const missing = await failure(fetchUrlToFile(url('/missing'), target(), options().options));
    expect(missing).toBeInstanceOf(ImportInputError);
    expect(missing.message).toMatch(/answered 404 Not Found/);
    const broken = await failure(fetchUrlToFile(url('/broken'), target(), options().options));
    expect(broken).toBeInstanceOf(UnavailableError);
    expect(broken.message).toMatch(/503/);
  });

  it('refuses a file over the limit by its Content-Length and while streaming, leaving no file', async () => {
    for (const path of ['/declared-big', '/chunked-big']) {
      const out = target();
      const error = await failure(fetchUrlToFile(url(path), out, options().options));
      expect((error as ImportInputError).code, path).toBe('file_too_large');
      expect(error.message).toMatch(/at most 4096 bytes/);
      expect(existsSync(out)).toBe(false);
      expect(existsSync(`${out}.partial`)).toBe(false);
    }
  });

  it('refuses a content encoding it did not ask for', async () => {
    const error = await failure(fetchUrlToFile(url('/gzip'), target(), options().options));
    expect(error.message).toMatch(/gzip-encoded/);
  });

  it('gives up at the time limit, whether the server is silent or trickles', async () => {
    for (const path of ['/silent', '/trickle']) {
      const started = Date.now();
      const error = await failure(
        fetchUrlToFile(url(path), target(), options({ timeoutMs: 700, maxBytes: 1_000_000 }).options),
      );
      expect((error as ImportInputError).code, path).toBe('source_timeout');
      expect(Date.now() - started).toBeLessThan(3000);
    }
  });

  it('gives up on a connection idle for the idle limit', async () => {
    const error = await failure(
      fetchUrlToFile(url('/silent'), target(), options({ timeoutMs: 5000, idleTimeoutMs: 300 }).options),
    );
    expect(error.message).toMatch(/sent nothing for/);
  });

  it('verifies the certificate: not trusted without the configured CA, and only for the names it was issued to', async () => {
    const untrusted = await failure(
      fetchUrlToFile(url('/file.geojson'), target(), options({ extraCa: undefined }).options),
    );
    expect((untrusted as ImportInputError).code).toBe('source_tls_failed');
    const wrongName = await failure(
      fetchUrlToFile(url('/file.geojson', 'other.test'), target(), options({}, 'other.test').options),
    );
    expect((wrongName as ImportInputError).code).toBe('source_tls_failed');
    expect(wrongName.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
  });

  it('a server that refuses the connection is an outage', async () => {
    const { options: o } = options({}, '127.0.0.1');
    const error = await failure(fetchUrlToFile('https://127.0.0.1:9/file.geojson', target(), o));
    expect(error).toBeInstanceOf(UnavailableError);
  });
});
