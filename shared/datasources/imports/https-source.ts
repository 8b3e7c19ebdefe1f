/**
 * Imports from an `https://` URL (ADR 0129): the URL is checked with the connection-target policy
 * of database hosts (ADR 0074: public unicast addresses only, unless the operator's list names
 * more), resolved once and dialled at the checked address (no DNS rebinding between the check and
 * the connection), every redirect checked again (and https → http refused), the body streamed to
 * the import's local file under a size and a time limit. No credentials, cookies or client headers
 * go out: the request carries a fixed User-Agent, Accept and Accept-Encoding, nothing else.
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import { request } from 'node:https';
import type { LookupFunction } from 'node:net';
import { dirname } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { rootCertificates } from 'node:tls';
import { importConfig } from '#config/env.ts';
import { DomainError, InvalidInputError, UnavailableError } from '#domain/errors.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { type CheckedTarget, parseAllowList, TargetPolicy } from '../network-policy.ts';

/** Redirects followed at most (each one checked like the first URL). */
export const MAX_REDIRECTS = 5;
/** A connection that neither connects nor sends a byte for this long is given up. */
export const IDLE_TIMEOUT_MS = 30_000;
/** URLs longer than this are refused (the API schema takes 2,048 characters; a redirect may not grow it). */
const MAX_URL_LENGTH = 2048;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'GeoPlane-Import/1';

/** The one reason of a URL imports may not read, at createImport (400) and at the fetch. */
export const URL_NOT_ALLOWED = 'uri_not_allowed';
/** The reason of a server error, a refused or dropped connection (the state machine retries it; its fixed message is the one of any unreadable source). */
export const URL_UNAVAILABLE = 'source_unavailable';

/**
 * The refusal of a URL, the same text whatever the reason (not https, credentials in it, a host
 * that doesn't resolve, resolves to a private address or is an internal literal): the answer tells
 * nothing about which internal names exist or where they point.
 */
export function urlNotAllowedMessage(): string {
  return 'The URL is not one imports may read: it must be an https:// URL without credentials whose host resolves to public addresses only (an operator can allow more: GEOPLANE_ALLOWED_IMPORT_URL_HOSTS).';
}

/** The URL if it is one imports may try at all (https, a host, no user or password, not too long), else undefined. */
export function parseImportUrl(text: string): URL | undefined {
  if (text.length > MAX_URL_LENGTH) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || !url.hostname || url.username || url.password) return undefined;
  return url;
}

/** The host (IPv6 without brackets) and port a URL dials. */
function hostAndPort(url: URL): { host: string; port: number } {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, port: url.port ? Number(url.port) : 443 };
}

let cached: { spec: string; policy: TargetPolicy } | undefined;

/** The import URL policy of this process, from `GEOPLANE_ALLOWED_IMPORT_URL_HOSTS` (re-read when it changes). */
export function importUrlTargets(): TargetPolicy {
  const spec = importConfig().urlAllowedHosts;
  if (cached?.spec !== spec) {
    cached = { spec, policy: new TargetPolicy(parseAllowList(spec, 'allowed import URL hosts')) };
  }
  return cached.policy;
}

/**
 * createImport's check of a URL (ADR 0129): syntax, scheme and the host's addresses against the
 * policy, without any request to it. A refusal of any kind is the same 400. Returns the URL as the
 * workflow will read it.
 */
export async function admitUrl(text: string, targets: Pick<TargetPolicy, 'check'>): Promise<string> {
  const url = parseImportUrl(text);
  const refused = new InvalidInputError(URL_NOT_ALLOWED, urlNotAllowedMessage());
  if (!url) throw refused;
  const { host, port } = hostAndPort(url);
  try {
    await targets.check(host, port);
  } catch {
    // Private, loopback, not resolving, a resolver outage: one answer (the fetch checks again).
    throw refused;
  }
  return url.href;
}

/**
 * Where a redirect goes: the next URL, or an ImportInputError for a redirect imports don't follow
 * (no Location, a downgrade to plain http, another scheme, credentials in it).
 */
export function redirectTarget(from: URL, location: string | undefined, status: number): URL {
  if (!location) {
    throw new ImportInputError(
      'source_http_status',
      `The URL answered ${status} (a redirect) without a Location.`,
    );
  }
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new ImportInputError(
      'source_http_status',
      `The URL answered ${status} with a Location that is no URL.`,
    );
  }
  if (next.protocol === 'http:') {
    throw new ImportInputError(
      URL_NOT_ALLOWED,
      'The URL redirected from https to plain http; imports follow only https redirects.',
    );
  }
  if (!parseImportUrl(next.href)) throw new ImportInputError(URL_NOT_ALLOWED, urlNotAllowedMessage());
  return next;
}

/**
 * What a final (non-redirect) status means: 200 is the file; 408, 429 and 5xx are the server's
 * passing trouble (UnavailableError: the state machine retries); any other status is final.
 */
export function statusFailure(status: number, text = ''): Error | undefined {
  if (status === 200) return undefined;
  const named = `${status}${text ? ` ${text}` : ''}`;
  if (status === 408 || status === 429 || status >= 500) {
    return new UnavailableError(URL_UNAVAILABLE, `The URL answered ${named}; the import will try again.`);
  }
  if (status >= 400) {
    return new ImportInputError(
      'source_http_status',
      `The URL answered ${named}: check that it names the file and is readable without credentials, then create a new import.`,
    );
  }
  return new ImportInputError(
    'source_http_status',
    `The URL answered ${named}; an import needs 200 OK with the file.`,
  );
}

/** How one fetch is bounded and whom it may reach. */
export interface UrlFetchOptions {
  targets: Pick<TargetPolicy, 'check'>;
  /** Bytes the file may have (the import's limit, ADR 0110). */
  maxBytes: number;
  /** Time the whole fetch may take: lookups, redirects, the body. */
  timeoutMs: number;
  /** Time without a byte before the connection is given up (default IDLE_TIMEOUT_MS). */
  idleTimeoutMs?: number;
  /** PEM certificates trusted besides Node's roots (an operator's or a test's CA); never "trust all". */
  extraCa?: string;
  maxRedirects?: number;
}

class Timeout extends Error {
  override name = 'Timeout';
}

const TLS_CODES =
  /^(?:ERR_TLS_CERT_ALTNAME_INVALID|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_|ERR_SSL_|ERR_TLS_)/;

/** A refusal of the policy (or a name that doesn't resolve) as the import's failure; an outage stays one. */
async function checked(url: URL, targets: Pick<TargetPolicy, 'check'>): Promise<CheckedTarget> {
  const { host, port } = hostAndPort(url);
  try {
    return await targets.check(host, port);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EAI_AGAIN') {
      throw new UnavailableError(
        URL_UNAVAILABLE,
        "The URL's host could not be resolved just now.",
        undefined,
        {
          cause: error,
        },
      );
    }
    const refused = new ImportInputError(URL_NOT_ALLOWED, urlNotAllowedMessage());
    refused.cause = error;
    throw refused;
  }
}

/** One GET of `url`, dialled at `target` only (the name is still what TLS verifies and Host says). */
function get(
  url: URL,
  target: CheckedTarget,
  options: UrlFetchOptions,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  // Pinned: whatever the name resolves to now, the socket goes to the address the policy checked.
  const lookup = ((_name: string, opts: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (opts?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      lookup,
      agent: false,
      signal,
      headers: { 'User-Agent': USER_AGENT, Accept: '*/*', 'Accept-Encoding': 'identity' },
      ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
    });
    req.setTimeout(options.idleTimeoutMs ?? IDLE_TIMEOUT_MS, () => {
      req.destroy(new Timeout('idle'));
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end();
  });
}

/** Counts the body's bytes and stops it past `max`. */
function limit(max: number): Transform & { seen: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counter.seen += chunk.length;
      const seen = counter.seen;
      if (seen > max) {
        callback(
          new ImportInputError(
            'file_too_large',
            `The URL's file is larger than ${max} bytes; imports take at most ${max} bytes.`,
          ),
        );
        return;
      }
      callback(null, chunk);
    },
  }) as Transform & { seen: number };
  counter.seen = 0;
  return counter;
}

/** A transport error as the import's failure: a time limit or a certificate is final, a dropped connection an outage. */
function failureOf(error: unknown, signal: AbortSignal, options: UrlFetchOptions): Error {
  if (error instanceof ImportInputError || error instanceof DomainError) return error;
  if (signal.aborted) {
    const failure = new ImportInputError(
      'source_timeout',
      `The URL did not deliver the file within ${Math.round(options.timeoutMs / 1000)} s (a URL import's time limit); upload the file instead, or retry.`,
    );
    failure.cause = error;
    return failure;
  }
  if (error instanceof Timeout) {
    const failure = new ImportInputError(
      'source_timeout',
      `The URL's server sent nothing for ${Math.round((options.idleTimeoutMs ?? IDLE_TIMEOUT_MS) / 1000)} s; retry the import later.`,
    );
    failure.cause = error;
    return failure;
  }
  const code = String((error as { code?: string }).code ?? '');
  if (TLS_CODES.test(code)) {
    const failure = new ImportInputError(
      'source_tls_failed',
      `The URL's TLS certificate could not be verified (${code}); imports read only from servers with a valid certificate.`,
    );
    failure.cause = error;
    return failure;
  }
  return new UnavailableError(
    URL_UNAVAILABLE,
    "The URL's server could not be reached or dropped the connection.",
    undefined,
    { cause: error },
  );
}

/**
 * Fetches `text` (an https URL createImport admitted) into `target` (written as `.partial`, renamed
 * when complete). Throws ImportInputError for what the user must change (a refused target or
 * redirect, a 4xx, a file over the limit, the time limit, a certificate) and UnavailableError for
 * what may pass (5xx, 408, 429, a dropped connection, a resolver outage).
 */
export async function fetchUrlToFile(
  text: string,
  target: string,
  options: UrlFetchOptions,
): Promise<number> {
  const first = parseImportUrl(text);
  if (!first) throw new ImportInputError(URL_NOT_ALLOWED, urlNotAllowedMessage());
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const partial = `${target}.partial`;
  let res: IncomingMessage | undefined;
  try {
    let url = first;
    for (let hop = 0; ; hop++) {
      const address = await checked(url, options.targets);
      if (controller.signal.aborted) throw new Timeout('deadline');
      res = await get(url, address, options, controller.signal);
      const status = res.statusCode ?? 0;
      if (!REDIRECTS.has(status)) break;
      // A redirect's body is never read (it could be endless); the next hop is a new connection.
      res.destroy();
      if (hop >= (options.maxRedirects ?? MAX_REDIRECTS)) {
        throw new ImportInputError(
          'source_http_status',
          `The URL redirected more than ${options.maxRedirects ?? MAX_REDIRECTS} times.`,
        );
      }
      url = redirectTarget(url, res.headers.location, status);
    }
    // The standard reason phrase, not the server's: its text is no one's to show.
    const failure = statusFailure(res.statusCode ?? 0, STATUS_CODES[res.statusCode ?? 0]);
    if (failure) throw failure;
    const encoding = (res.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity') {
      throw new ImportInputError(
        'source_http_status',
        `The URL sent the file ${encoding}-encoded although imports ask for it as is (Accept-Encoding: identity).`,
      );
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      throw new ImportInputError(
        'file_too_large',
        `The URL's file is ${declared} bytes; imports take at most ${options.maxBytes} bytes.`,
      );
    }
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const counter = limit(options.maxBytes);
    await pipeline(res, counter, createWriteStream(partial, { mode: 0o600 }));
    await rename(partial, target);
    return counter.seen;
  } catch (error) {
    res?.destroy();
    await rm(partial, { force: true });
    throw failureOf(error, controller.signal, options);
  } finally {
    clearTimeout(timer);
  }
}

/** The fetch options of this process's configuration (ADR 0129). */
export function configuredFetchOptions(): UrlFetchOptions {
  const cfg = importConfig();
  return {
    targets: importUrlTargets(),
    maxBytes: cfg.maxBytes,
    timeoutMs: cfg.urlTimeoutMs,
    ...(cfg.urlCaFile ? { extraCa: readFileSync(cfg.urlCaFile, 'utf8') } : {}),
  };
}
