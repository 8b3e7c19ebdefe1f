import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { RuleViolationError, StateConflictError } from '#domain/errors.ts';
import type { IdempotencyScope, IdempotencyStore } from '#domain/idempotency.ts';
import type { SecretBox } from '#domain/secrets.ts';
import { errorFields, logger } from '#log/logger.ts';
import { BadRequestError } from './errors.ts';

/** The request header of every POST (ADR 0088). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The longest key accepted (400 above it). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** How long a first answer is replayed. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** The header a replayed answer carries. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/**
 * An in-progress claim outlives its request by this much: past the function's remaining time (its
 * timeout) plus this margin, the process is gone and a retry may run again.
 */
export const IN_PROGRESS_MARGIN_MS = 5_000;
// Without a Lambda context (tests), the function timeout of api-function.ts plus room.
const DEFAULT_REMAINING_MS = 30_000;

/** What the idempotency step needs: the records, the secret box that seals answers, a clock. */
export interface IdempotencyPorts {
  store: IdempotencyStore;
  secretBox: SecretBox;
  /** Milliseconds since the epoch (tests move it). */
  now?: () => number;
}

/** This request's claim on its record: completed or released when the request ends. */
export interface IdempotencyClaim {
  scope: IdempotencyScope;
  claimId: string;
}

/** What a fingerprint covers: the method, the route with its parameters, the query and the body. */
export interface FingerprintParts {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, readonly string[]>;
  /** The parsed JSON body, or the body's text on routes that take none. */
  body: unknown;
}

/** The `Idempotency-Key` of a request (headers in lower case); undefined without one, 400 when unusable. */
export function idempotencyKeyOf(headers: Record<string, string>): string | undefined {
  const key = headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
  if (key === undefined) return undefined;
  if (key.trim() === '') {
    throw new BadRequestError(
      'invalid_idempotency_key',
      `The ${IDEMPOTENCY_KEY_HEADER} header is empty: send 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (a UUID is a good key), or no header.`,
    );
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new BadRequestError(
      'invalid_idempotency_key',
      `The ${IDEMPOTENCY_KEY_HEADER} header has ${key.length} characters; at most ${MAX_IDEMPOTENCY_KEY_LENGTH} are allowed.`,
    );
  }
  return key;
}

/** JSON with object keys sorted at every level, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are one request. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The SHA-256 of a request's method, route and parameters, query and (canonical) body. */
export function requestFingerprint(parts: FingerprintParts): string {
  const text = JSON.stringify(
    canonical([parts.method, parts.path, parts.params, parts.query, parts.body ?? null]),
  );
  return createHash('sha256').update(text).digest('base64url');
}

/** The answer as stored and replayed: status, headers (Location, ETag, cookies) and body. */
type StoredResponse = Pick<
  APIGatewayProxyResult,
  'statusCode' | 'headers' | 'multiValueHeaders' | 'body' | 'isBase64Encoded'
>;

function encryptionContext(scope: IdempotencyScope): Record<string, string> {
  return { purpose: 'idempotent-response', principal: scope.principalId, operation: scope.operationId };
}

/**
 * Envelope encryption: the answer under a fresh AES-256-GCM data key, the data key under the
 * secret box (KMS Encrypt takes at most 4 KB, an answer can be larger), both bound to the scope.
 */
async function seal(box: SecretBox, scope: IdempotencyScope, response: StoredResponse): Promise<string> {
  const context = encryptionContext(scope);
  const dataKey = randomBytes(32);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(Buffer.from(JSON.stringify(context), 'utf8'));
  const data = Buffer.concat([cipher.update(JSON.stringify(response), 'utf8'), cipher.final()]);
  return JSON.stringify({
    v: 1,
    key: await box.encrypt(dataKey.toString('base64'), context),
    iv: iv.toString('base64url'),
    tag: cipher.getAuthTag().toString('base64url'),
    data: data.toString('base64url'),
  });
}

async function open(box: SecretBox, scope: IdempotencyScope, sealed: string): Promise<StoredResponse> {
  const context = encryptionContext(scope);
  const envelope = JSON.parse(sealed) as { v: number; key: string; iv: string; tag: string; data: string };
  if (envelope.v !== 1) throw new Error('unknown idempotency envelope');
  const dataKey = Buffer.from(await box.decrypt(envelope.key, context), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(envelope.iv, 'base64url'));
  decipher.setAAD(Buffer.from(JSON.stringify(context), 'utf8'));
  decipher.setAuthTag(Buffer.from(envelope.tag, 'base64url'));
  const text = Buffer.concat([
    decipher.update(Buffer.from(envelope.data, 'base64url')),
    decipher.final(),
  ]).toString('utf8');
  return JSON.parse(text) as StoredResponse;
}

function logFailure(message: string, scope: IdempotencyScope, error: unknown): void {
  // The key and the stored answer stay out of the line: the answer may hold a secret shown once.
  logger.error(message, {
    operation: scope.operationId,
    principal_id: scope.principalId,
    ...errorFields(error),
  });
}

/**
 * The start of an idempotent request: claims the record, or answers from it — the stored answer
 * replayed (with `Idempotent-Replayed: true`), 422 when the key came with another request, 409
 * while the first request still runs.
 */
export async function startIdempotent(
  ports: IdempotencyPorts,
  scope: IdempotencyScope,
  fingerprint: string,
  remainingMs: number | undefined,
): Promise<{ claim: IdempotencyClaim } | { replay: APIGatewayProxyResult }> {
  const nowMs = (ports.now ?? Date.now)();
  const claimId = randomUUID();
  const record = await ports.store.claim(scope, {
    claimId,
    fingerprint,
    nowMs,
    inProgressUntilMs: nowMs + (remainingMs ?? DEFAULT_REMAINING_MS) + IN_PROGRESS_MARGIN_MS,
  });
  if (!record) return { claim: { scope, claimId } };
  if (record.fingerprint !== fingerprint) {
    throw new RuleViolationError(
      'idempotency_key_reused',
      `This ${IDEMPOTENCY_KEY_HEADER} was used with a different request to ${scope.operationId} (method, path, query or body differ); use a new key for a new request.`,
    );
  }
  if (record.status === 'in_progress') {
    throw new StateConflictError(
      'idempotency_key_in_flight',
      `A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry once it has answered.`,
    );
  }
  const stored = await open(ports.secretBox, scope, record.response);
  return { replay: { ...stored, headers: { ...stored.headers, [REPLAYED_HEADER]: 'true' } } };
}

/**
 * Does the answer set a cookie? Such an answer hands out a session (login, refresh) or ends one
 * (logout): it is never kept for a replay (ADR 0109), whatever the route.
 */
export function setsCookie(response: Pick<APIGatewayProxyResult, 'headers' | 'multiValueHeaders'>): boolean {
  const named = (headers: Record<string, unknown> | undefined) =>
    Object.entries(headers ?? {}).some(
      ([name, value]) => name.toLowerCase() === 'set-cookie' && !(Array.isArray(value) && value.length === 0),
    );
  return named(response.headers) || named(response.multiValueHeaders);
}

/**
 * The end of a claimed request: a 2xx answer is sealed and kept for 24 h; any other answer frees
 * the key (a retry runs again), and so does an answer that sets a cookie: a session's secret is
 * never replayed, not even to the same caller (ADR 0109). Never fails the request: the operation
 * has happened; a record that can't be written stays in progress until its deadline (ADR 0088).
 */
export async function finishIdempotent(
  ports: IdempotencyPorts,
  claim: IdempotencyClaim,
  response: APIGatewayProxyResult,
): Promise<void> {
  try {
    if (response.statusCode < 200 || response.statusCode > 299 || setsCookie(response)) {
      await ports.store.release(claim.scope, claim.claimId);
      return;
    }
    const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = response;
    const sealed = await seal(ports.secretBox, claim.scope, {
      statusCode,
      ...(headers ? { headers } : {}),
      ...(multiValueHeaders ? { multiValueHeaders } : {}),
      body,
      ...(isBase64Encoded ? { isBase64Encoded } : {}),
    });
    const expires = Math.floor((ports.now ?? Date.now)() / 1000) + IDEMPOTENCY_TTL_SECONDS;
    const kept = await ports.store.complete(claim.scope, claim.claimId, sealed, expires);
    if (!kept) logFailure('idempotency claim lost before its answer was stored', claim.scope, undefined);
  } catch (error) {
    logFailure('idempotent answer not stored', claim.scope, error);
  }
}

/** A claimed request that failed: its record is deleted so that a retry runs again. */
export async function abandonIdempotent(ports: IdempotencyPorts, claim: IdempotencyClaim): Promise<void> {
  try {
    await ports.store.release(claim.scope, claim.claimId);
  } catch (error) {
    logFailure('idempotency claim not released (it expires at its deadline)', claim.scope, error);
  }
}
