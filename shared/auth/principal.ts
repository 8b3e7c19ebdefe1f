import { dictionary } from '#domain/dictionary.ts';
import { logger } from '#log/logger.ts';
import { SESSION_COOKIE } from './cookies.ts';

/** Built-in workspace roles. */
export type WorkspaceRole = 'admin' | 'editor' | 'viewer';

/** The browser session a request came with. */
export interface PrincipalSession {
  id: string;
  expiresAt: string;
  idleExpiresAt: string;
  /** Did the request carry the right X-CSRF-Token? (Checked by makeHandler on unsafe methods.) */
  csrfOk: boolean;
}

/** Who is calling: produced by the authorizer, carried to handlers as primitive context values. */
export interface Principal {
  /** Stable id: `apikey:<id>` or `jwt:<sub>`. */
  id: string;
  /** Display subject (key name or owner, token `sub`). */
  subject: string;
  authMethod: 'apikey' | 'jwt';
  superAdmin: boolean;
  /**
   * Role id per workspace, keyed by workspace id or name; `*` applies to every workspace. Keys are
   * client data: build it with `dictionary` and read it with `own` (ADR 0075).
   */
  roles: Record<string, string>;
  apiKeyId?: string;
  /** A token's claims, for resolving workspace claim mappings per request. */
  claims?: Record<string, unknown>;
  session?: PrincipalSession;
}

/** API Gateway authorizer context: string values only. */
export type PrincipalContext = Record<string, string>;

// API Gateway caps the authorizer response; claims beyond this are not carried.
const MAX_CLAIMS_JSON = 6000;

/** Encodes a principal as authorizer context values. */
export function toContext(p: Principal): PrincipalContext {
  let claims = p.claims ? JSON.stringify(p.claims) : '';
  if (claims.length > MAX_CLAIMS_JSON) {
    logger.warn('token claims too large to carry; mappings use none', { size: claims.length });
    claims = '';
  }
  return {
    subject: p.subject,
    authMethod: p.authMethod,
    superAdmin: String(p.superAdmin),
    roles: JSON.stringify(p.roles),
    apiKeyId: p.apiKeyId ?? '',
    claims,
    sessionId: p.session?.id ?? '',
    sessionExpiresAt: p.session?.expiresAt ?? '',
    sessionIdleExpiresAt: p.session?.idleExpiresAt ?? '',
    csrf: p.session ? (p.session.csrfOk ? 'ok' : 'failed') : '',
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The authorizer's principalId of a data-plane request that carried no credential (ADR 0120). */
export const ANONYMOUS_PRINCIPAL = 'anonymous';

/**
 * Does a request carry a credential at all: an `X-API-Key`, an `Authorization` header, or the
 * session cookie? (Other cookies are no credential: a browser sends whatever it holds.)
 */
export function carriesCredential(headers: Record<string, string | undefined> | null | undefined): boolean {
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    const name = k.toLowerCase();
    if (name === 'x-api-key' || name === 'authorization') return true;
    if (name === 'cookie' && v.split(';').some((c) => c.trim().startsWith(`${SESSION_COOKIE}=`))) return true;
  }
  return false;
}

/**
 * Decodes the authorizer context of an API Gateway event; undefined when absent (public routes)
 * and for the data plane's anonymous caller.
 */
export function fromContext(ctx: Record<string, unknown> | null | undefined): Principal | undefined {
  if (!ctx || typeof ctx.principalId !== 'string' || ctx.principalId === '') return undefined;
  if (ctx.anonymous === 'true') return undefined;
  const str = (k: string) => (ctx[k] === undefined || ctx[k] === null ? '' : String(ctx[k]));
  // Role ids by workspace, as a prototype-free table of strings (ADR 0075).
  const roles = dictionary(
    Object.entries(parseObject(str('roles')) ?? {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
  const claims = parseObject(str('claims'));
  return {
    id: ctx.principalId,
    subject: str('subject'),
    authMethod: str('authMethod') === 'jwt' ? 'jwt' : 'apikey',
    superAdmin: str('superAdmin') === 'true',
    roles,
    ...(str('apiKeyId') ? { apiKeyId: str('apiKeyId') } : {}),
    ...(claims ? { claims } : {}),
    ...(str('sessionId')
      ? {
          session: {
            id: str('sessionId'),
            expiresAt: str('sessionExpiresAt'),
            idleExpiresAt: str('sessionIdleExpiresAt'),
            csrfOk: str('csrf') === 'ok',
          },
        }
      : {}),
  };
}
