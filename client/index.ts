/**
 * The typed GeoPlane client: openapi-fetch over the types generated from docs/openapi.json
 * (`client/api-types.ts`, `npm run openapi`; ADR 0096). Runtime-neutral (fetch only), so the
 * CLI and a browser console use the same code; a host adds its own transport settings through
 * `fetch` or `requestInitExt` (the CLI's undici dispatcher with a private CA).
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './api-types.ts';

export type { components, operations, paths } from './api-types.ts';

/** The document's named schemas (`Schemas['ImportJob']`). */
export type Schemas = components['schemas'];

/** The one error body of every 4xx/5xx (DESIGN §5). */
export type ErrorBody = Schemas['Error'];

/** An import's status (`ImportJob.status`). */
export type ImportStatus = Schemas['ImportJob']['status'];

/**
 * Every import status, in the order of an import's life, for the CLI's `--status` and the
 * console's filter. Written out once, as the keys of a record the generated type checks both ways:
 * a status the API adds or drops is a compile error here (issue #28).
 */
const importStatuses: Record<ImportStatus, true> = {
  awaiting_upload: true,
  queued: true,
  running: true,
  awaiting_plan: true,
  ready_to_publish: true,
  publishing: true,
  published: true,
  cancelling: true,
  cancelled: true,
  failed: true,
  rolling_back: true,
  rolled_back: true,
};
export const IMPORT_STATUSES = Object.keys(importStatuses) as ImportStatus[];

/** A client of every operation of the document, typed by path and method. */
export type GeoPlaneClient = Client<paths>;

/** The path every operation starts with; the document's servers are the URL before it. */
export const API_BASE_PATH = '/api/v1';

export interface GeoPlaneClientOptions {
  /**
   * The server root, as the document's `servers` name it (`https://geo.example.com`,
   * `https://<id>.execute-api.<region>.amazonaws.com/prod`). A URL ending in `/api/v1` (the
   * local host's bootstrap.json, the stack's ApiUrl output) is accepted too.
   */
  baseUrl: string;
  /** Sent as `X-API-Key`. */
  apiKey?: string;
  /** A JWT, sent as `Authorization: Bearer …`. */
  bearerToken?: string;
  /** Further headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch of the host's own (default: the global one). */
  fetch?: ClientOptions['fetch'];
  /** Passed to fetch as its second argument on Node (e.g. `{ dispatcher }` of undici). */
  requestInitExt?: ClientOptions['requestInitExt'];
  /** `include` for a browser session (cookie + X-CSRF-Token). */
  credentials?: RequestInit['credentials'];
}

/** An error answer of the API: its status and, when it has the standard shape, its body. */
export class GeoPlaneApiError extends Error {
  override readonly name = 'GeoPlaneApiError';

  constructor(
    readonly status: number,
    /** The standard error body, when the answer had one. */
    readonly body: ErrorBody | undefined,
    /** The raw answer when it was not the standard body. */
    readonly text?: string,
  ) {
    super(
      body
        ? `${body.message}${body.reason && body.reason !== body.message ? ` (${body.reason})` : ''}`
        : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    );
  }

  /** The stable machine code (`import_not_found`), when the body had one. */
  get reason(): string | undefined {
    return this.body?.reason;
  }

  /** The request id to quote to an operator, when the body had one. */
  get requestId(): string | undefined {
    return this.body?.request_id;
  }
}

/** `https://host/prod/api/v1/` → `https://host/prod`: the server root of an API URL. */
export function serverRoot(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith(API_BASE_PATH) ? trimmed.slice(0, -API_BASE_PATH.length) : trimmed;
}

/** A client for one deployment and credential. */
export function createGeoPlaneClient(options: GeoPlaneClientOptions): GeoPlaneClient {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  if (options.apiKey !== undefined) headers['X-API-Key'] = options.apiKey;
  if (options.bearerToken !== undefined) headers.Authorization = `Bearer ${options.bearerToken}`;
  return createClient<paths>({
    baseUrl: serverRoot(options.baseUrl),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.requestInitExt ? { requestInitExt: options.requestInitExt } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).message === 'string';
}

/** The error an answer of openapi-fetch stands for (its `error` is the parsed body or the text). */
export function apiErrorOf(response: Response, error: unknown): GeoPlaneApiError {
  if (isErrorBody(error)) return new GeoPlaneApiError(response.status, error);
  const text = typeof error === 'string' ? error : error === undefined ? '' : JSON.stringify(error);
  return new GeoPlaneApiError(response.status, undefined, text);
}

/**
 * The data of a successful call; an error answer throws `GeoPlaneApiError`:
 * `const job = dataOf(await api.GET('/api/v1/workspaces/{workspace}/imports/{import}', …))`.
 */
export function dataOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok) throw apiErrorOf(result.response, result.error);
  return result.data as T;
}
