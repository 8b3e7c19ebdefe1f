/**
 * The console's one way to the API: the generated client (client/index.ts, ADR 0096) with the
 * browser session — the `__Host-session` cookie plus `X-CSRF-Token` echoing the `csrf_token`
 * cookie on unsafe requests. A 429 waits its Retry-After (at most three times) and a 401 sends
 * the operator back to the login page; every other error reaches the page that caused it.
 */
import operations from 'virtual:operations';
import type { operations as Operations } from '#client/api-types.ts';
import {
  apiErrorOf,
  createGeoPlaneClient,
  type ErrorBody,
  GeoPlaneApiError,
  IMPORT_STATUSES,
  type Schemas,
} from '#client/index.ts';

export type { Schemas };
export { GeoPlaneApiError, IMPORT_STATUSES };

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRIES_ON_429 = 3;

/** The value of a readable cookie (the CSRF token). */
export function cookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

type Listener<T> = (value: T) => void;
const unauthorizedListeners = new Set<Listener<GeoPlaneApiError>>();
const waitingListeners = new Set<Listener<number>>();

/** Called with the error of any 401 (the session ended): the app returns to its login page. */
export function onUnauthorized(listener: Listener<GeoPlaneApiError>): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** The seconds of the Retry-After the console is waiting now (0: none). */
let waitingNow = 0;

/** Called with the seconds the console waits after a 429 (0 when it stops waiting). */
export function onRateLimited(listener: Listener<number>): () => void {
  waitingListeners.add(listener);
  return () => waitingListeners.delete(listener);
}

/** The wait in progress, for a view that appears in the middle of it (the first page's load). */
export function rateLimitWait(): number {
  return waitingNow;
}

function announceWait(seconds: number): void {
  waitingNow = seconds;
  for (const listener of waitingListeners) listener(seconds);
}

function retryAfterSeconds(response: Response): number {
  const header = response.headers.get('Retry-After');
  const seconds = header === null ? Number.NaN : Number(header);
  if (Number.isFinite(seconds)) return Math.min(Math.max(seconds, 1), 60);
  const date = header === null ? Number.NaN : Date.parse(header);
  return Number.isFinite(date) ? Math.min(Math.max((date - Date.now()) / 1000, 1), 60) : 1;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** fetch with the CSRF echo and the 429 wait. */
async function sessionFetch(input: Request): Promise<Response> {
  const request = input.clone();
  if (UNSAFE.has(request.method)) {
    const csrf = cookie('csrf_token');
    if (csrf) request.headers.set('X-CSRF-Token', csrf);
  }
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(request.clone());
    if (response.status !== 429 || attempt >= RETRIES_ON_429) return response;
    const seconds = retryAfterSeconds(response);
    announceWait(seconds);
    await sleep(seconds * 1000);
    announceWait(0);
  }
}

/** The client of this console's own origin, the session cookie included. */
export const api = createGeoPlaneClient({
  baseUrl: location.origin,
  credentials: 'include',
  fetch: sessionFetch,
});

/** The operation a request stands for (its method and path template), when the document has it. */
export function operationOf(method: string, schemaPath: string) {
  return operations[`${method.toUpperCase()} ${schemaPath}`];
}

const ROLE_FOR_PERMISSION: Record<string, string> = {
  read: 'viewer',
  write: 'editor',
  manage: 'admin',
  global: 'super_admin',
};

/** The role an operation needs, in words ("the editor role or above"). */
export function roleNeeded(method: string, schemaPath: string): string | undefined {
  const op = operationOf(method, schemaPath);
  const role = op && ROLE_FOR_PERMISSION[op.permission];
  if (!op || !role) return undefined;
  return role === 'super_admin' ? 'the super_admin role' : `the ${role} role (or above) in this workspace`;
}

/** An API error with what the console knows of the request behind it. */
export class ConsoleApiError extends GeoPlaneApiError {
  constructor(
    status: number,
    body: ErrorBody | undefined,
    text: string | undefined,
    /** The role the operation needs, for a 403. */
    readonly roleNeeded: string | undefined,
    /** Seconds to wait, for a 429 that outlived the retries. */
    readonly retryAfter: number | undefined,
  ) {
    super(status, body, text);
  }
}

/** What the console sent, per answer: a 403's explanation needs the operation behind it. */
const sent = new WeakMap<Response, { method: string; schemaPath: string }>();

api.use({
  onResponse({ response, schemaPath, request }) {
    sent.set(response, { method: request.method, schemaPath });
    if (response.status === 401) {
      const error = new GeoPlaneApiError(401, undefined, 'session ended');
      for (const listener of unauthorizedListeners) listener(error);
    }
    return undefined;
  },
});

type Result<T> = { data?: T; error?: unknown; response: Response };

/**
 * The data of a call, or a ConsoleApiError for its answer:
 * `const ws = await call(api.GET('/api/v1/workspaces/{workspace}', { params }))`.
 */
export async function call<T>(pending: Promise<Result<T>>): Promise<T> {
  const result = await pending;
  if (result.response.ok) return result.data as T;
  const base = apiErrorOf(result.response, result.error);
  const request = sent.get(result.response);
  throw new ConsoleApiError(
    base.status,
    base.body,
    base.text,
    base.status === 403 && request ? roleNeeded(request.method, request.schemaPath) : undefined,
    base.status === 429 ? retryAfterSeconds(result.response) : undefined,
  );
}

/**
 * Every value of a closed set the API's types name, in the order written: a type has no values at
 * run time, so they are written out once, as the keys of a record the generated type checks both
 * ways. A value the API adds or drops is then a compile error here, not a console that drifts
 * (issue #28).
 */
export const allOf = <T extends string>(set: Record<T, true>): T[] => Object.keys(set) as T[];

/** A built-in workspace role, as an API key or a claim mapping gives it. */
export type WorkspaceRole =
  Operations['createAPIKey']['requestBody']['content']['application/json']['role_id'];
/** The built-in workspace roles, weakest first. */
export const WORKSPACE_ROLES = allOf<WorkspaceRole>({ viewer: true, editor: true, admin: true });

/** The quoted ETag of a version, for If-Match. */
export const etag = (version: number) => `"${version}"`;
