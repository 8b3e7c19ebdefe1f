import { afterEach, describe, expect, it } from 'vitest';
import {
  admitUrl,
  parseImportUrl,
  redirectTarget,
  statusFailure,
  urlNotAllowedMessage,
} from '#datasources/imports/https-source.ts';
import { ConfiguredUriPolicy } from '#datasources/imports/sources.ts';
import { parseAllowList, TargetPolicy } from '#datasources/network-policy.ts';
import { InvalidInputError, UnavailableError } from '#domain/errors.ts';
import { ImportInputError } from '#domain/import-sources.ts';

/** A resolver of fixed answers: names it doesn't know don't resolve. */
function resolver(answers: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup = async (name: string) => {
    asked.push(name);
    const found = answers[name];
    if (!found) throw Object.assign(new Error(`${name} not found`), { code: 'ENOTFOUND' });
    return found;
  };
  return { lookup, asked };
}

const names = resolver({
  'files.example.org': ['93.184.216.34'],
  localhost: ['127.0.0.1', '::1'],
  'rebind.example.org': ['93.184.216.34', '10.0.0.7'],
  'metadata.example.org': ['169.254.169.254'],
  'files.test': ['127.0.0.3'],
});

const policy = (allow = '') =>
  new TargetPolicy(parseAllowList(allow, 'allowed import URL hosts'), names.lookup);

async function refusal(uri: string, targets = policy()): Promise<InvalidInputError> {
  const error = await admitUrl(uri, targets).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, uri).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
}

describe('which URLs an import may name', () => {
  it('takes an https URL of a host and nothing else', () => {
    expect(parseImportUrl('https://files.example.org/a/roads.geojson?v=2')?.href).toBe(
      'https://files.example.org/a/roads.geojson?v=2',
    );
    for (const uri of [
      'http://files.example.org/a.geojson',
      'ftp://files.example.org/a.geojson',
      'https://user:secret@files.example.org/a.geojson',
      'https://user@files.example.org/a.geojson',
      'https://',
      'not a url',
      `https://files.example.org/${'a'.repeat(2100)}`,
    ]) {
      expect(parseImportUrl(uri), uri).toBeUndefined();
    }
  });
});

describe('createImport admits a URL by the network policy (ADR 0129)', () => {
  it('admits a public literal and a name that resolves to public addresses only, without asking the host', async () => {
    expect(await admitUrl('https://93.184.216.34/roads.geojson', policy())).toBe(
      'https://93.184.216.34/roads.geojson',
    );
    expect(await admitUrl('https://files.example.org:8443/r.geojson', policy())).toBe(
      'https://files.example.org:8443/r.geojson',
    );
  });

  it.each([
    ['plain http', 'http://93.184.216.34/roads.geojson'],
    ['credentials in the URL', 'https://me:pw@files.example.org/r.geojson'],
    ['loopback', 'https://127.0.0.1/r.geojson'],
    ['loopback in decimal', 'https://2130706433/r.geojson'],
    ['loopback in hex', 'https://0x7f.1/r.geojson'],
    ['IPv6 loopback', 'https://[::1]/r.geojson'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/r.geojson'],
    ['private', 'https://10.1.2.3/r.geojson'],
    ['the instance metadata address', 'https://169.254.169.254/latest/meta-data/'],
    ['loopback by name', 'https://localhost:8443/r.geojson'],
    ['a name resolving to metadata', 'https://metadata.example.org/r.geojson'],
    ['a name with one private address among public ones', 'https://rebind.example.org/r.geojson'],
    ['a name that does not resolve', 'https://nowhere.example.org/r.geojson'],
    ['unspecified', 'https://0.0.0.0/r.geojson'],
  ])('refuses %s with the one uniform 400', async (_title, uri) => {
    const error = await refusal(uri);
    expect(error.reason).toBe('uri_not_allowed');
    expect(error.message).toBe(urlNotAllowedMessage());
    expect(error.message).not.toMatch(/127\.|10\.|169\.254|::1|resolve[sd]? to (?!public)/);
  });

  it("widens only as far as the operator's list says", async () => {
    const widened = policy('127.0.0.3,files.test:9443');
    expect(await admitUrl('https://127.0.0.3:8443/r.geojson', widened)).toBe(
      'https://127.0.0.3:8443/r.geojson',
    );
    expect(await admitUrl('https://files.test:9443/r.geojson', widened)).toBe(
      'https://files.test:9443/r.geojson',
    );
    expect((await refusal('https://127.0.0.1:8443/r.geojson', widened)).reason).toBe('uri_not_allowed');
    expect((await refusal('https://localhost/r.geojson', widened)).reason).toBe('uri_not_allowed');
    expect((await refusal('http://127.0.0.3:8443/r.geojson', widened)).reason).toBe('uri_not_allowed');
  });

  it('refuses an unreadable allowlist instead of guessing', () => {
    expect(() => parseAllowList('10.0.0.0/33', 'allowed import URL hosts')).toThrow(
      /allowed import URL hosts/,
    );
  });
});

describe('the configured policy routes http(s) URIs to the URL check', () => {
  const saved = process.env.GEOPLANE_ALLOWED_IMPORT_URL_HOSTS;
  afterEach(() => {
    if (saved === undefined) delete process.env.GEOPLANE_ALLOWED_IMPORT_URL_HOSTS;
    else process.env.GEOPLANE_ALLOWED_IMPORT_URL_HOSTS = saved;
  });

  it('refuses loopback by default and admits it once the operator lists it', async () => {
    delete process.env.GEOPLANE_ALLOWED_IMPORT_URL_HOSTS;
    const uris = new ConfiguredUriPolicy();
    await expect(uris.admit('https://127.0.0.1:9/a.geojson')).rejects.toMatchObject({
      reason: 'uri_not_allowed',
      message: urlNotAllowedMessage(),
    });
    await expect(uris.admit('http://127.0.0.1:9/a.geojson')).rejects.toMatchObject({
      reason: 'uri_not_allowed',
    });
    process.env.GEOPLANE_ALLOWED_IMPORT_URL_HOSTS = '127.0.0.1:9';
    expect(await uris.admit('https://127.0.0.1:9/a.geojson')).toBe('https://127.0.0.1:9/a.geojson');
    await expect(uris.admit('https://127.0.0.1:10/a.geojson')).rejects.toMatchObject({
      reason: 'uri_not_allowed',
    });
  });
});

describe('redirects', () => {
  const from = new URL('https://files.example.org/data/a.geojson');

  it('resolves a relative Location against the URL it came from', () => {
    expect(redirectTarget(from, '../b.geojson', 302).href).toBe('https://files.example.org/b.geojson');
    expect(redirectTarget(from, 'https://cdn.example.org/x', 301).href).toBe('https://cdn.example.org/x');
  });

  it('refuses a downgrade to plain http, other schemes, credentials and a missing Location', () => {
    const downgrade = () => redirectTarget(from, 'http://files.example.org/a.geojson', 301);
    expect(downgrade).toThrow(ImportInputError);
    expect(downgrade).toThrow(/from https to plain http/);
    expect(() => redirectTarget(from, 'ftp://files.example.org/a', 302)).toThrow(urlNotAllowedMessage());
    expect(() => redirectTarget(from, 'https://u:p@files.example.org/a', 302)).toThrow(
      urlNotAllowedMessage(),
    );
    expect(() => redirectTarget(from, undefined, 307)).toThrow(/307.*without a Location/);
  });
});

describe('what a status means', () => {
  it('200 is the file', () => {
    expect(statusFailure(200, 'OK')).toBeUndefined();
  });

  it.each([400, 401, 403, 404, 410])('%i is final and named', (status) => {
    const error = statusFailure(status, 'Nope');
    expect(error).toBeInstanceOf(ImportInputError);
    expect((error as ImportInputError).code).toBe('source_http_status');
    expect(error?.message).toContain(`answered ${status} Nope`);
  });

  it.each([408, 429, 500, 502, 503, 504])('%i may pass: an outage the state machine retries', (status) => {
    const error = statusFailure(status);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).reason).toBe('source_unavailable');
    expect(error?.message).toContain(String(status));
  });

  it.each([204, 206, 304])('%i is no file', (status) => {
    expect(statusFailure(status)).toBeInstanceOf(ImportInputError);
  });
});
