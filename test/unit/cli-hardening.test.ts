import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../cli/client.ts';
import { table } from '../../cli/commands/common.ts';
import { isLoopback, resolveConnection } from '../../cli/config.ts';
import { jsonText, line, plain, screen } from '../../cli/terminal.ts';
import { s3Error, uploadFile } from '../../cli/upload.ts';

/** Every character a terminal acts on, but the newline (ADR 0109). */
const unsafeButNewline =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** A name an attacker gives an import: clears the screen, sets the title, a hyperlink, a C1 CSI, a forged line, a bidi override. */
const evil =
  'roads\u001b[2J\u001b]0;owned\u0007\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\\u009b31m\r\nerror: forged\u202egpj.exe\u0000\u007f';

const KEY = `gpk_${'A'.repeat(43)}`;
const OTHER_KEY = `gpk_${'B'.repeat(43)}`;

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'geoplane-cli-unit-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A data dir holding a bootstrap.json like the local host's. */
function dataDirWith(bootstrap: Record<string, unknown>): string {
  const d = mkdtempSync(join(dir, 'data-'));
  writeFileSync(join(d, 'bootstrap.json'), JSON.stringify(bootstrap));
  return d;
}

describe('terminal output of server-provided text (finding 2)', () => {
  it('plain() shows every C0/C1 control, DEL, separator and bidi control as an escape, on one line', () => {
    const shown = plain(evil);
    expect(shown).not.toMatch(unsafeButNewline);
    expect(shown).not.toContain('\n');
    expect(shown).toContain('roads\\x1b[2J\\x1b]0;owned\\x07');
    expect(shown).toContain('\\x9b31m\\r\\nerror: forged\\u202egpj.exe\\x00\\x7f');
    expect(plain('Straße, 東京, 🗺️')).toBe('Straße, 東京, 🗺️');
    expect(plain(undefined)).toBe('');
    expect(plain(42)).toBe('42');
  });

  it('line`` keeps its own text and newlines but makes each quoted value plain', () => {
    expect(line`import ${evil}\nnext`).toBe(`import ${plain(evil)}\nnext`);
  });

  it('screen() keeps newlines only, as the last guard of every write', () => {
    expect(screen(`a\n${evil}\n`)).not.toMatch(unsafeButNewline);
    expect(screen('a\nb\n')).toBe('a\nb\n');
  });

  it('jsonText() is the same JSON value, with C1, DEL and bidi controls escaped', () => {
    const value = { name: evil, nested: [{ title: '\u009b2J\u2028' }] };
    const text = jsonText(value);
    expect(text).not.toMatch(unsafeButNewline);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('an API error answer with escape codes in message, detail and reason becomes one plain line', () => {
    const error = new ApiError(404, `Not ${evil} Found`, {
      detail: `Import '${evil}' not found`,
      reason: `bad\u001b[31m\nreason`,
      request_id: 'req\u0007',
    });
    expect(error.message).not.toMatch(unsafeButNewline);
    expect(error.message).not.toContain('\n');
    expect(error.message).toBe(
      `Not ${plain(evil)} Found: Import '${plain(evil)}' not found (404 bad\\x1b[31m\\nreason)`,
    );
    expect(error.detail).toBe(`Import '${plain(evil)}' not found`);
    expect(error.reason).toBe('bad\\x1b[31m\\nreason');
    expect(error.requestId).toBe('req\\x07');
  });

  it("an API error's issues are a line each, and a 5xx names its request id; each line plain", () => {
    const error = new ApiError(400, 'Bad Request', {
      detail: 'The request is invalid.',
      reason: 'invalid_request',
      request_id: 'r1',
      issues: [{ path: 'body.name', message: `too ${evil} long` }],
    });
    const [head, issue, ...rest] = error.message.split('\n');
    expect(head).toBe('Bad Request: The request is invalid. (400 invalid_request)');
    expect(issue).toBe(`  body.name: too ${plain(evil)} long`);
    expect(rest).toEqual([]);
    const crash = new ApiError(500, 'Internal Server Error', {
      detail: 'An unexpected error occurred.',
      reason: 'internal_error',
      request_id: `r\n2`,
    });
    expect(crash.message).toBe(
      'Internal Server Error: An unexpected error occurred. (500 internal_error)\n  request id r\\n2',
    );
  });

  it("table() cells and an upload endpoint's error text are plain", () => {
    const text = table(['NAME', 'STATUS'], [[evil, 'published']]);
    expect(text.split('\n')).toHaveLength(2);
    expect(text).not.toMatch(unsafeButNewline);
    const xml = `<Error><Code>Access\u001b[2JDenied</Code><Message>${evil}</Message></Error>`;
    expect(s3Error(403, xml)).not.toMatch(unsafeButNewline);
    expect(s3Error(500, evil)).not.toMatch(unsafeButNewline);
    expect(s3Error(500, evil)).not.toContain('\n');
  });

  it('no file of cli/ writes to stdout, stderr or a stream but through cli/terminal.ts', () => {
    const root = resolve(import.meta.dirname, '../../cli');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(8);
    for (const file of files.filter((f) => f !== 'terminal.ts')) {
      const code = readFileSync(join(root, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/(^|[^:])\/\/.*$/gm, '$1');
      expect(code, file).not.toMatch(/process\.(stdout|stderr)\.write|\bconsole\.\w+\(|\.write\(/);
    }
  });
});

describe('where the CLI sends its key (finding 1)', () => {
  it.each([
    ['http://127.0.0.1:8080', true],
    ['http://127.255.3.4', true],
    ['http://127.1:8080', true],
    ['http://[::1]:8080', true],
    ['http://[0:0::1]', true],
    ['http://LOCALHOST:1', true],
    ['http://0.0.0.0:8080', false],
    ['http://10.0.0.1', false],
    ['http://128.0.0.1', false],
    ['http://127.0.0.1.evil.example', false],
    ['http://localhost.evil.example', false],
    ['http://[::ffff:7f00:1]', false],
    ['http://[::2]', false],
  ])('isLoopback(%s) is %s', (url, expected) => {
    expect(isLoopback(new URL(url))).toBe(expected);
  });

  it('refuses plain http to any host but loopback, with any key, and allows https anywhere', () => {
    const env = { GEOPLANE_DATA_DIR: mkdtempSync(join(dir, 'e-')) };
    for (const url of ['http://10.0.0.1:8443', 'http://geo.example.com', 'http://0.0.0.0:8443'])
      expect(() => resolveConnection({ url, apiKey: KEY }, env), url).toThrow(
        /refusing to send the API key over plain http/,
      );
    for (const url of ['http://127.0.0.1:8080', 'http://localhost:8080', 'http://[::1]:8080'])
      expect(resolveConnection({ url, apiKey: KEY }, env).baseUrl).toBe(`${new URL(url).origin}/api/v1`);
    expect(resolveConnection({ url: 'https://geo.example.com', apiKey: KEY }, env).apiKey).toBe(KEY);
  });

  it('uses the bootstrap key for the URL its file names, and for nothing else', () => {
    const data = dataDirWith({ url: 'https://127.0.0.1:8443/api/v1', api_key: KEY });
    const env = { GEOPLANE_DATA_DIR: data };
    expect(resolveConnection({}, env)).toMatchObject({
      baseUrl: 'https://127.0.0.1:8443/api/v1',
      apiKey: KEY,
    });
    expect(resolveConnection({ url: 'https://127.0.0.1:8443' }, env).apiKey).toBe(KEY);
    for (const url of ['https://geo.example.com', 'https://127.0.0.1:9443', 'https://localhost:8443']) {
      expect(() => resolveConnection({ url }, env)).toThrow(/no API key for .*only sent to the URL it names/);
      expect(() => resolveConnection({}, { ...env, GEOPLANE_URL: url })).toThrow(/no API key for/);
    }
    // An explicit key goes to an explicit URL, never to the URL some file named.
    expect(() => resolveConnection({ apiKey: OTHER_KEY }, env)).toThrow(/no API URL/);
    expect(resolveConnection({ url: 'https://geo.example.com', apiKey: OTHER_KEY }, env).apiKey).toBe(
      OTHER_KEY,
    );
  });

  it('ignores a bootstrap.json that names a host other than loopback', () => {
    const env = { GEOPLANE_DATA_DIR: dataDirWith({ url: 'https://geo.example.com', api_key: KEY }) };
    expect(() => resolveConnection({}, env)).toThrow(/not a loopback address/);
  });

  it('refuses an upload form over plain http to another host, before connecting', async () => {
    const file = join(dir, 'one.bin');
    writeFileSync(file, 'x');
    const ticket = {
      url: 'http://0.0.0.0:9/upload',
      method: 'POST' as const,
      fields: { key: 'k', policy: 'p' },
      file_field: 'file',
      expires_at: new Date(Date.now() + 60_000).toISOString(),
      max_bytes: 10,
    };
    await expect(
      uploadFile({ baseUrl: 'https://127.0.0.1:1/api/v1', apiKey: KEY }, ticket, file, 1, () => {}),
    ).rejects.toThrow(/refusing to send the upload over plain http to 0\.0\.0\.0:9/);
  });
});
