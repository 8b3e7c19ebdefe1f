import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The CLI calls the API only through the typed client generated from docs/openapi.json
 * (client/, ADR 0096). The one other request it sends is the upload to a presigned POST form
 * (S3's, or the local host's stand-in), which is not the API: `cli/upload.ts` alone may open
 * HTTP requests itself, and it never sends the API key or addresses the API's base URL.
 */

const root = resolve(import.meta.dirname, '../..');
const UPLOAD = 'cli/upload.ts';
const CLIENT = 'cli/client.ts';

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|tsx|mts|js|mjs|cjs)$/.test(entry.name) ? [path] : [];
  });
}

/** What in one CLI source sends a request other than through the generated client. */
function directCalls(text: string): string[] {
  // Comments don't send requests (`https://` inside a string is kept).
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
  const found: string[] = [];
  const rules: [RegExp, string][] = [
    [/\bfetch\s*\(/, 'calls fetch()'],
    [/\bXMLHttpRequest\b|\bWebSocket\b|\bEventSource\b/, 'uses a browser transport'],
    [
      /import\s*\{[^}]*\b(request|get|connect)\b[^}]*\}\s*from\s*['"](node:)?(https?|http2)['"]/,
      'imports request()/get() of node:http(s)',
    ],
    [/import\s+(\*\s+as\s+)?\w+\s+from\s*['"](node:)?(https?|http2)['"]/, 'imports all of node:http(s)'],
    [/\b(https?|http2)\.(request|get|connect)\s*\(/, 'calls http(s).request()'],
    [
      /import\s*\{[^}]*\b(request|fetch|stream|pipeline|connect)\b[^}]*\}\s*from\s*['"]undici['"]/,
      "uses undici's requests",
    ],
    [/from\s*['"](axios|got|node-fetch|superagent|ky)['"]/, 'uses another HTTP client'],
    [/import\s*\(\s*['"](node:)?(https?|http2|undici)['"]\s*\)/, 'loads an HTTP module dynamically'],
  ];
  for (const [pattern, what] of rules) if (pattern.test(code)) found.push(what);
  return found;
}

describe('the CLI calls the API only through the generated client', () => {
  const files = [...sources('cli'), 'bin/geoplane.mjs'];

  it('finds the CLI sources it checks', () => {
    expect(files).toContain(CLIENT);
    expect(files).toContain(UPLOAD);
    expect(files.length).toBeGreaterThan(8);
  });

  it.each(files.filter((f) => f !== UPLOAD))('%s sends no request of its own', (file) => {
    expect(directCalls(readFileSync(join(root, file), 'utf8'))).toEqual([]);
  });

  it('cli/client.ts builds its calls on createGeoPlaneClient of client/', () => {
    const text = readFileSync(join(root, CLIENT), 'utf8');
    expect(text).toMatch(/import\s*\{[^}]*\bcreateGeoPlaneClient\b[^}]*\}\s*from\s*'#client\/index\.ts'/);
    expect(text).not.toMatch(/from\s*'openapi-fetch'/);
  });

  it("every path cli/client.ts calls is one of the document's operations", () => {
    const document = JSON.parse(readFileSync(join(root, 'docs/openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const text = readFileSync(join(root, CLIENT), 'utf8');
    const calls = [...text.matchAll(/this\.api\.(GET|POST|PUT|PATCH|DELETE)\(\s*'([^']+)'/g)].map(
      ([, method, path]) => ({ method: (method as string).toLowerCase(), path: path as string }),
    );
    expect(calls.length).toBeGreaterThanOrEqual(10);
    for (const call of calls) expect(document.paths[call.path]?.[call.method], call.path).toBeDefined();
  });

  it('the upload goes to the presigned form only, without the API key', () => {
    const text = readFileSync(join(root, UPLOAD), 'utf8');
    expect(text).toMatch(/new URL\(ticket\.url\)/);
    expect(text).not.toMatch(/\bapiKey\b|\bbaseUrl\b|X-API-Key|Authorization/);
  });

  it.each([
    ['await fetch(url, { headers })', 'calls fetch()'],
    ["const r = await fetch('https://h.example/api/v1/x'); // a comment", 'calls fetch()'],
    ["import { request } from 'node:https';", 'imports request()/get() of node:http(s)'],
    ["import { Agent, get } from 'http';", 'imports request()/get() of node:http(s)'],
    ["import https from 'node:https';", 'imports all of node:http(s)'],
    ["import * as http from 'node:http';", 'imports all of node:http(s)'],
    ['const req = https.request(url, options);', 'calls http(s).request()'],
    ["import { request } from 'undici';", "uses undici's requests"],
    ["import axios from 'axios';", 'uses another HTTP client'],
    ["const { request } = await import('node:https');", 'loads an HTTP module dynamically'],
  ])('the check catches %s', (source, what) => {
    expect(directCalls(source)).toContain(what);
  });

  it("the check lets the CLI's TLS settings through and sees the upload's own request", () => {
    expect(
      directCalls("import { Agent } from 'node:https';\nimport { Agent as FetchAgent } from 'undici';"),
    ).toEqual([]);
    expect(directCalls(readFileSync(join(root, UPLOAD), 'utf8')).length).toBeGreaterThan(0);
  });
});

/**
 * The console (ADR 0098) likewise: `console/src/api.ts` builds the one client on
 * createGeoPlaneClient (its `fetch` is the client's transport, adding the CSRF echo and the 429
 * wait), `oidc.ts` talks to the identity provider (not the API), `pages/import-upload.ts`
 * POSTs the file to the presigned form, and `ogc-client.ts` reads the data plane (a separate API,
 * with its own OpenAPI document). Nothing else in the console opens a request.
 */
describe('the console calls the API only through the generated client', () => {
  const API = 'console/src/api.ts';
  const OIDC = 'console/src/oidc.ts';
  const UPLOAD_FORM = 'console/src/pages/import-upload.ts';
  const OGC = 'console/src/ogc-client.ts';
  const files = sources('console/src');

  it('finds the console sources it checks', () => {
    expect(files).toEqual(
      expect.arrayContaining([API, OIDC, UPLOAD_FORM, OGC, 'console/src/pages/services.tsx']),
    );
    expect(files.length).toBeGreaterThan(20);
  });

  it.each(files.filter((f) => ![API, OIDC, UPLOAD_FORM, OGC].includes(f)))(
    '%s sends no request of its own',
    (file) => {
      expect(directCalls(readFileSync(join(root, file), 'utf8'))).toEqual([]);
    },
  );

  it('console/src/api.ts builds its client on createGeoPlaneClient of client/, and no page imports openapi-fetch', () => {
    expect(readFileSync(join(root, API), 'utf8')).toMatch(
      /import\s*\{[^}]*\bcreateGeoPlaneClient\b[^}]*\}\s*from\s*'#client\/index\.ts'/,
    );
    for (const file of files)
      expect(readFileSync(join(root, file), 'utf8'), file).not.toMatch(/from\s*'openapi-fetch'/);
  });

  it("every path the console calls is one of the document's operations", () => {
    const document = JSON.parse(readFileSync(join(root, 'docs/openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const calls = files.flatMap((file) =>
      [
        ...readFileSync(join(root, file), 'utf8').matchAll(
          /\bapi\.(GET|POST|PUT|PATCH|DELETE)\(\s*'([^']+)'/g,
        ),
      ].map(([, method, path]) => ({ file, method: (method as string).toLowerCase(), path: path as string })),
    );
    expect(calls.length).toBeGreaterThanOrEqual(60);
    for (const call of calls)
      expect(
        document.paths[call.path]?.[call.method],
        `${call.file}: ${call.method} ${call.path}`,
      ).toBeDefined();
  });

  it('the OIDC and upload requests never address the API or carry its credentials', () => {
    for (const file of [OIDC, UPLOAD_FORM]) {
      const text = readFileSync(join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
      expect(text, file).not.toMatch(/['`"]\/api\/v1|X-API-Key|X-CSRF-Token|Authorization/);
    }
  });
});
