import { existsSync, readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join, resolve } from 'node:path';
import { Agent as FetchAgent } from 'undici';

/** The CLI's exit codes (docs/cli.md): scripts branch on them. */
export const EXIT = {
  ok: 0,
  /** The API refused (an error answer), or what was asked did not succeed (an import that ended failed). */
  refused: 1,
  /** Bad flags, arguments or settings: nothing was sent. */
  usage: 2,
  /** The API could not be reached: connection refused, DNS, TLS, timeout. */
  unreachable: 3,
} as const;

/** A failure the CLI reports as one message, without a stack; its exit code is `refused` (1). */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  readonly exitCode: number = EXIT.refused;
}

/** How the CLI was called is wrong (a flag, an argument, a setting): exit code 2, nothing was sent. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  override readonly exitCode = EXIT.usage;
}

/** The request never got an answer (connection, DNS, TLS, timeout): exit code 3. */
export class UnreachableError extends CliError {
  override readonly name = 'UnreachableError';
  override readonly exitCode = EXIT.unreachable;
}

/** Where the CLI talks to and with what. */
export interface Connection {
  /** The API's base URL, ending in `/api/v1` (no trailing slash). */
  baseUrl: string;
  apiKey: string;
  /** Set for https (the upload): trusts the configured CA only (else Node's default roots). */
  agent?: Agent;
  /** The same trust for the API client's fetch (undici's dispatcher). */
  dispatcher?: FetchAgent;
}

export interface ConnectionOptions {
  url?: string;
  apiKey?: string;
}

function dataDir(env: NodeJS.ProcessEnv): string {
  return resolve(env.GEOPLANE_DATA_DIR ?? '.local');
}

interface Bootstrap {
  url?: unknown;
  api_key?: unknown;
}

function readBootstrap(dir: string): Bootstrap | undefined {
  const path = join(dir, 'bootstrap.json');
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Bootstrap;
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** `https://host:port` → `https://host:port/api/v1`; a URL with a path is kept as given. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`not a URL: ${raw}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`the URL must be http(s): ${raw}`);
  if (url.username || url.password) throw new UsageError('the URL must not carry credentials');
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? '/api/v1' : path;
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}

/**
 * Is the URL's host a loopback address: 127.0.0.0/8, ::1 or `localhost`? The WHATWG parser has
 * already normalised the hostname (`127.1` → `127.0.0.1`, `[0::1]` → `[::1]`, lower case).
 */
export function isLoopback(url: URL): boolean {
  const host = url.hostname;
  if (host === 'localhost' || host === '[::1]') return true;
  const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return octets !== null && octets[1] === '127' && octets.slice(2).every((o) => Number(o) <= 255);
}

/**
 * Refuses plain http to anything but a loopback address: the API key (and an upload's signed form)
 * would cross the network in clear. The API itself answers plain HTTP with 426, but only after the
 * key was sent. A URL the user gave is a usage error; `Refusal` says otherwise (an upload URL the
 * API gave).
 */
export function assertSecureTransport(
  url: URL,
  what: string,
  Refusal: new (message: string) => CliError = UsageError,
): void {
  if (url.protocol === 'http:' && !isLoopback(url))
    throw new Refusal(
      `refusing to send ${what} over plain http to ${url.host}: use https (plain http is allowed only to 127.0.0.1, ::1 and localhost)`,
    );
}

/** Do two base URLs name the same API (scheme, host, port and path)? */
function sameApi(a: string, b: string): boolean {
  return normalizeBaseUrl(a) === normalizeBaseUrl(b);
}

/** The local host's bootstrap key and URL, when the file has both and names a loopback URL. */
function localBootstrap(dir: string): { url: string; apiKey: string; path: string } | undefined {
  const bootstrap = readBootstrap(dir);
  if (!bootstrap || typeof bootstrap.url !== 'string' || typeof bootstrap.api_key !== 'string')
    return undefined;
  const path = join(dir, 'bootstrap.json');
  // The file is the local host's (npm start): a file naming any other host is not one, and neither
  // its key nor its URL is used (a bootstrap.json in a checkout could point the CLI anywhere).
  if (!isLoopback(new URL(normalizeBaseUrl(bootstrap.url))))
    throw new UsageError(
      `${path} names ${bootstrap.url}, not a loopback address: it is not the local host's file`,
    );
  return { url: bootstrap.url, apiKey: bootstrap.api_key, path };
}

/**
 * The URL and API key: `--url`/`--api-key`, else GEOPLANE_URL/GEOPLANE_API_KEY, else the local
 * host's bootstrap.json (GEOPLANE_DATA_DIR or ./.local) — its key only for the very URL it names,
 * and its URL only with its own key, so the local super_admin key never goes to another host and
 * a key of yours never goes to a URL some file named. Plain http only to loopback. TLS:
 * GEOPLANE_CA_FILE, else for a loopback URL the local host's own certificate when it exists;
 * certificate checks stay on.
 */
export function resolveConnection(
  options: ConnectionOptions,
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const dir = dataDir(env);
  let url = options.url ?? env.GEOPLANE_URL;
  let apiKey = options.apiKey ?? env.GEOPLANE_API_KEY;
  if (!url && !apiKey) {
    const local = localBootstrap(dir);
    if (local) {
      url = local.url;
      apiKey = local.apiKey;
    }
  } else if (url && !apiKey) {
    const local = localBootstrap(dir);
    if (local && sameApi(url, local.url)) apiKey = local.apiKey;
    else if (local)
      throw new UsageError(
        `no API key for ${normalizeBaseUrl(url)}: pass --api-key or set GEOPLANE_API_KEY. ` +
          `The local bootstrap key (${local.path}) is only sent to the URL it names, ${normalizeBaseUrl(local.url)}.`,
      );
  }
  if (!url && apiKey)
    throw new UsageError(
      'no API URL: pass --url or set GEOPLANE_URL (the URL of the local bootstrap.json goes only with its own key).',
    );
  if (!url || !apiKey) {
    const missing = [!url ? 'an API URL' : '', !apiKey ? 'an API key' : ''].filter(Boolean).join(' and ');
    throw new UsageError(
      `no credentials: missing ${missing}. Pass --url and --api-key, set GEOPLANE_URL and GEOPLANE_API_KEY, ` +
        `or run the local host (npm start) so that ${join(dir, 'bootstrap.json')} exists.`,
    );
  }
  const baseUrl = normalizeBaseUrl(url);
  const parsed = new URL(baseUrl);
  assertSecureTransport(parsed, 'the API key');
  let agent: Agent | undefined;
  let dispatcher: FetchAgent | undefined;
  if (parsed.protocol === 'https:') {
    const caFile = env.GEOPLANE_CA_FILE;
    const localCert = join(dir, 'tls-cert.pem');
    let ca: Buffer | undefined;
    if (caFile) {
      try {
        ca = readFileSync(caFile);
      } catch (error) {
        throw new UsageError(`cannot read GEOPLANE_CA_FILE ${caFile}: ${(error as Error).message}`);
      }
    } else if (isLoopback(parsed) && existsSync(localCert)) {
      ca = readFileSync(localCert);
    }
    agent = new Agent({ keepAlive: true, ...(ca ? { ca } : {}) });
    dispatcher = new FetchAgent(ca ? { connect: { ca } } : {});
  }
  return { baseUrl, apiKey, ...(agent ? { agent } : {}), ...(dispatcher ? { dispatcher } : {}) };
}
