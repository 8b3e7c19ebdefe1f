import { Logger } from '@aws-lambda-powertools/logger';

/*
 * THE logger (ADR 0090): Powertools Logger, one JSON line per event on stdout/stderr, with the
 * service name of POWERTOOLS_SERVICE_NAME and the level of POWERTOOLS_LOG_LEVEL (default INFO).
 * A room at the bottom, beside config: every room but the domain and the route table may log;
 * the domain gets a `WorkflowLog` port from the wiring instead.
 */

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Field names whose values are never logged, whatever they hold (compared in lower case without
 * `-` and `_`): credentials, their headers and cookies, passwords of connections and logins,
 * stored answers of idempotent requests.
 */
const SENSITIVE_NAME =
  /^(authorization|proxyauthorization|cookie|setcookie|xapikey|apikey|key|secret|clientsecret|password|passwd|pwd|servingpassword|token|accesstoken|idtoken|refreshtoken|sessiontoken|csrftoken|xcsrftoken|session|hostsession|credentials?|connectionstring|privatekey|secretkey|storedresponse|responsebody|body)$|password$|secret$|secretkey$|apikey$|privatekey$|token$|cookie$/;

/** True for a field name whose value must not reach a log line. */
export function isSensitiveKey(name: string): boolean {
  return SENSITIVE_NAME.test(name.toLowerCase().replace(/[-_]/g, ''));
}

/**
 * Secrets recognised by their shape inside any text (messages, stacks, a database's error):
 * GeoPlane API keys, bearer credentials, JWTs, passwords in connection URLs and `key=value` text.
 */
const SECRET_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/gpk_[A-Za-z0-9_-]{8,}/g, `gpk_${REDACTED}`],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]+@/gi, `$1${REDACTED}@`],
  [/\b(password|passwd|pwd|secret|token|api[_-]?key)(\s*=\s*|:\s+)("?)[^\s"',;&]+/gi, `$1$2$3${REDACTED}`],
];

/** The text with every secret of a known shape replaced. */
export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * The safety net under every log line (Powertools' `jsonReplacerFn`, applied to each key and value
 * before serialisation): sensitive field names lose their value, strings lose secrets of a known
 * shape. Errors are serialised by Powertools after this, so their message and stack pass through
 * `redactText` as the fields of the error object.
 */
export function redact(key: string, value: unknown): unknown {
  if (key !== '' && isSensitiveKey(key) && value !== undefined && value !== null && value !== '')
    return REDACTED;
  if (typeof value === 'string') return redactText(value);
  if (value instanceof Error) {
    return {
      name: value.name,
      message: redactText(value.message),
      stack: redactText(value.stack ?? ''),
      ...(value.cause === undefined ? {} : { cause: value.cause }),
    };
  }
  return value;
}

/** The process's logger; per-request loggers are its children. */
export const logger = new Logger({ jsonReplacerFn: redact as (key: string, value: unknown) => unknown });

/** The identity of one API request in its log lines (ADR 0090). */
export interface RequestKeys {
  request_id: string;
  operation: string;
  workspace_id?: string;
  principal_id?: string;
}

/** What a request may do with its logger: write lines, and add keys once the caller is known. */
export type RequestLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error' | 'appendPersistentKeys'>;

/**
 * A logger of one request: a child whose persistent keys are this request's (the local host runs
 * requests of many operations concurrently in one process, so keys are never appended to the
 * shared logger). The child is made on the first line written: most requests write none, and a
 * Powertools child costs a Logger and a Console of its own.
 */
export function requestLogger(keys: RequestKeys): RequestLog {
  const persistentKeys: Record<string, unknown> = { ...keys };
  let child: Logger | undefined;
  const made = () => {
    child ??= logger.createChild({ persistentKeys });
    return child;
  };
  return {
    debug: (input, ...extra) => made().debug(input, ...extra),
    info: (input, ...extra) => made().info(input, ...extra),
    warn: (input, ...extra) => made().warn(input, ...extra),
    error: (input, ...extra) => made().error(input, ...extra),
    appendPersistentKeys: (more) => {
      if (child) child.appendPersistentKeys(more);
      else Object.assign(persistentKeys, more);
    },
  };
}

/** The cause of an error as log fields: its chain of messages and the stack of the first. */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { error: String(error) };
  const reason = (error as Error & { reason?: unknown }).reason;
  const causes: string[] = [];
  let cause: unknown = error.cause;
  for (let i = 0; cause !== undefined && i < 5; i++) {
    causes.push(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause));
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return {
    error: {
      name: error.name,
      message: error.message,
      stack: error.stack,
      ...(causes.length ? { causes } : {}),
      ...(typeof reason === 'string' ? { reason } : {}),
    },
  };
}

export type { Logger };
