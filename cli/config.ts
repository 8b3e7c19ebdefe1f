import { existsSync, readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join, resolve } from 'node:path';
import { Agent as FetchAgent } from 'undici';

/** A failure the CLI reports as one message (exit code 1), without a stack. */
export class CliError extends Error {
  override readonly name = 'CliError';
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
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** `https://host:port` → `https://host:port/api/v1`; a URL with a path is kept as given. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`not a URL: ${raw}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new CliError(`the URL must be http(s): ${raw}`);
  if (url.username || url.password) throw new CliError('the URL must not carry credentials');
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? '/api/v1' : path;
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '');
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * The URL and API key: `--url`/`--api-key`, else GEOPLANE_URL/GEOPLANE_API_KEY, else the local
 * host's bootstrap.json (GEOPLANE_DATA_DIR or ./.local). TLS: GEOPLANE_CA_FILE, else for a
 * loopback URL the local host's own certificate when it exists; certificate checks stay on.
 */
export function resolveConnection(
  options: ConnectionOptions,
  env: NodeJS.ProcessEnv = process.env,
): Connection {
  const dir = dataDir(env);
  let url = options.url ?? env.GEOPLANE_URL;
  let apiKey = options.apiKey ?? env.GEOPLANE_API_KEY;
  if (!url || !apiKey) {
    const bootstrap = readBootstrap(dir);
    if (bootstrap) {
      if (!url && typeof bootstrap.url === 'string') url = bootstrap.url;
      if (!apiKey && typeof bootstrap.api_key === 'string') apiKey = bootstrap.api_key;
    }
  }
  if (!url || !apiKey) {
    const missing = [!url ? 'an API URL' : '', !apiKey ? 'an API key' : ''].filter(Boolean).join(' and ');
    throw new CliError(
      `no credentials: missing ${missing}. Pass --url and --api-key, set GEOPLANE_URL and GEOPLANE_API_KEY, ` +
        `or run the local host (npm start) so that ${join(dir, 'bootstrap.json')} exists.`,
    );
  }
  const baseUrl = normalizeBaseUrl(url);
  const parsed = new URL(baseUrl);
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
        throw new CliError(`cannot read GEOPLANE_CA_FILE ${caFile}: ${(error as Error).message}`);
      }
    } else if (loopbackHosts.has(parsed.hostname) && existsSync(localCert)) {
      ca = readFileSync(localCert);
    }
    agent = new Agent({ keepAlive: true, ...(ca ? { ca } : {}) });
    dispatcher = new FetchAgent(ca ? { connect: { ca } } : {});
  }
  return { baseUrl, apiKey, ...(agent ? { agent } : {}), ...(dispatcher ? { dispatcher } : {}) };
}
