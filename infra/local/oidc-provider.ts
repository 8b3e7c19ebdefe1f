/**
 * The local issuer as an OpenID provider, so the console's sign-in (authorization code + PKCE,
 * S256 only) runs end to end on one machine (ADR 0098): discovery, an authorization page where
 * the operator says who they are and which roles their token carries (the local issuer's role
 * claims are trusted, like `npm run token`'s), and the token endpoint that redeems a code once,
 * within a minute, for the client and redirect URI it was issued to and the verifier whose
 * challenge it carries. It signs with the same key as `npm run token`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { GLOBAL_ROLE_CLAIM, ROLES_CLAIM } from '#auth/authenticate.ts';
import { errorFields, logger } from '#log/logger.ts';
import type { LocalIssuer } from './files.ts';
import type { OutgoingResponse } from './gateway.ts';

/** Where the issuer lives on the local host: its issuer URL is `https://127.0.0.1:<port>` + this. */
export const LOCAL_ISSUER_PATH = '/local-issuer';

const CODE_TTL_MS = 60_000;
const ID_TOKEN_TTL_S = 3600;

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce?: string;
  subject: string;
  claims: Record<string, unknown>;
  expiresAt: number;
}

export interface OidcProviderOptions {
  issuer: LocalIssuer;
  /** The one client this issuer knows (the console). */
  clientId: string;
  /** The redirect URIs registered for it. */
  redirectUris: readonly string[];
}

const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const JSON_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function json(statusCode: number, body: unknown): OutgoingResponse {
  return { statusCode, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

function oauthError(statusCode: number, error: string, description: string): OutgoingResponse {
  return json(statusCode, { error, error_description: description });
}

function page(statusCode: number, title: string, content: string): OutgoingResponse {
  return {
    statusCode,
    headers: PAGE_HEADERS,
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${content}</main></body></html>`,
  };
}

function challengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** `ws=role, ws2=role` → `{ ws: role, ws2: role }` (roles admin, editor, viewer). */
function parseWorkspaceRoles(text: string): Record<string, string> | string {
  const roles: Record<string, string> = {};
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [workspace, role] = entry.split('=').map((part) => part.trim());
    if (!workspace || !role || !['admin', 'editor', 'viewer'].includes(role))
      return `"${entry}" is not workspace=admin|editor|viewer`;
    roles[workspace] = role;
  }
  return roles;
}

/** The provider's routes; `handle` answers undefined for a path that is not its own. */
export function localOidcProvider(options: OidcProviderOptions) {
  const grants = new Map<string, Grant>();
  const base = new URL(options.issuer.issuer).pathname.replace(/\/+$/, '');

  function checkAuthorizeParams(params: URLSearchParams): string | undefined {
    if (params.get('response_type') !== 'code') return 'response_type must be code';
    if (params.get('client_id') !== options.clientId) return 'unknown client_id';
    if (!options.redirectUris.includes(params.get('redirect_uri') ?? ''))
      return 'redirect_uri is not registered';
    // A registered URI that is no URL (a typo in OIDC_REDIRECT_URI) can't be redirected to.
    if (!URL.canParse(params.get('redirect_uri') ?? '')) return 'redirect_uri is not a URL';
    if (params.get('code_challenge_method') !== 'S256')
      return 'PKCE with code_challenge_method=S256 is required';
    if (!/^[A-Za-z0-9_-]{43}$/.test(params.get('code_challenge') ?? ''))
      return 'code_challenge is not an S256 challenge';
    if (!(params.get('scope') ?? '').split(' ').includes('openid')) return 'scope must include openid';
    return undefined;
  }

  function authorizePage(params: URLSearchParams, problem?: string): OutgoingResponse {
    const hidden = [...params.entries()]
      .filter(([key]) => !['subject', 'super_admin', 'workspace_roles'].includes(key))
      .map(([key, value]) => `<input type="hidden" name="${escapeHtml(key)}" value="${escapeHtml(value)}">`)
      .join('');
    return page(
      problem ? 400 : 200,
      'Sign in to the local issuer',
      `${problem ? `<p role="alert">${escapeHtml(problem)}</p>` : ''}
<p>The local GeoPlane issuer signs a token for whoever you say you are, with the roles you pick.</p>
<form method="post" action="${escapeHtml(base)}/authorize">${hidden}
<p><label for="subject">Subject</label><br><input id="subject" name="subject" required value="${escapeHtml(params.get('subject') ?? 'local-operator')}"></p>
<p><input id="super_admin" type="checkbox" name="super_admin" value="yes"> <label for="super_admin">super_admin</label></p>
<p><label for="workspace_roles">Workspace roles</label><br><input id="workspace_roles" name="workspace_roles" value="${escapeHtml(params.get('workspace_roles') ?? '')}" aria-describedby="roles-hint"><br><small id="roles-hint">For example <code>demo=admin, other=viewer</code></small></p>
<p><button type="submit">Sign in</button></p>
</form>`,
    );
  }

  function authorize(method: string, query: URLSearchParams, form: URLSearchParams): OutgoingResponse {
    const params = method === 'POST' ? form : query;
    const problem = checkAuthorizeParams(params);
    // A bad client or redirect URI is never redirected to (RFC 6749 §4.1.2.1).
    if (problem) return page(400, 'Sign-in request refused', `<p role="alert">${escapeHtml(problem)}</p>`);
    if (method === 'GET') return authorizePage(params);
    const subject = (params.get('subject') ?? '').trim();
    if (!subject) return authorizePage(params, 'Say who you are (subject).');
    const roles = parseWorkspaceRoles(params.get('workspace_roles') ?? '');
    if (typeof roles === 'string') return authorizePage(params, roles);
    const claims: Record<string, unknown> = {};
    if (params.get('super_admin') === 'yes') claims[GLOBAL_ROLE_CLAIM] = 'super_admin';
    if (Object.keys(roles).length > 0) claims[ROLES_CLAIM] = roles;
    for (const [stale, grant] of grants) if (grant.expiresAt < Date.now()) grants.delete(stale);
    const code = randomBytes(32).toString('base64url');
    const nonce = params.get('nonce');
    grants.set(code, {
      clientId: params.get('client_id') as string,
      redirectUri: params.get('redirect_uri') as string,
      challenge: params.get('code_challenge') as string,
      ...(nonce ? { nonce } : {}),
      subject,
      claims,
      expiresAt: Date.now() + CODE_TTL_MS,
    });
    const back = new URL(params.get('redirect_uri') as string);
    back.searchParams.set('code', code);
    const state = params.get('state');
    if (state) back.searchParams.set('state', state);
    return { statusCode: 303, headers: { Location: back.toString(), 'Cache-Control': 'no-store' }, body: '' };
  }

  async function token(form: URLSearchParams): Promise<OutgoingResponse> {
    if (form.get('grant_type') !== 'authorization_code')
      return oauthError(400, 'unsupported_grant_type', 'only authorization_code is supported');
    const code = form.get('code') ?? '';
    const grant = grants.get(code);
    // A code is redeemed once, whatever happens next.
    grants.delete(code);
    if (!grant || grant.expiresAt < Date.now())
      return oauthError(400, 'invalid_grant', 'unknown or expired code');
    if (form.get('client_id') !== grant.clientId)
      return oauthError(400, 'invalid_grant', 'client_id does not match');
    if (form.get('redirect_uri') !== grant.redirectUri)
      return oauthError(400, 'invalid_grant', 'redirect_uri does not match');
    const verifier = form.get('code_verifier') ?? '';
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || challengeOf(verifier) !== grant.challenge)
      return oauthError(400, 'invalid_grant', 'code_verifier does not match the challenge');
    const idToken = await options.issuer.sign(
      { ...grant.claims, ...(grant.nonce ? { nonce: grant.nonce } : {}) },
      grant.subject,
      ID_TOKEN_TTL_S,
    );
    return json(200, {
      id_token: idToken,
      token_type: 'Bearer',
      expires_in: ID_TOKEN_TTL_S,
      scope: 'openid',
    });
  }

  function discovery(): OutgoingResponse {
    const issuer = options.issuer.issuer;
    return {
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300' },
      body: JSON.stringify({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        scopes_supported: ['openid', 'profile', 'email'],
        token_endpoint_auth_methods_supported: ['none'],
      }),
    };
  }

  return {
    /** Answers a request under the issuer's path, or undefined. */
    async handle(method: string, url: string, body: Buffer): Promise<OutgoingResponse | undefined> {
      let parsed: URL;
      try {
        parsed = new URL(url, 'https://127.0.0.1');
      } catch {
        return undefined;
      }
      if (!parsed.pathname.startsWith(`${base}/`)) return undefined;
      const route = parsed.pathname.slice(base.length);
      try {
        const form = new URLSearchParams(method === 'POST' ? body.toString('utf8') : '');
        if (route === '/.well-known/openid-configuration' && method === 'GET') return discovery();
        if (route === '/authorize' && (method === 'GET' || method === 'POST'))
          return authorize(method, parsed.searchParams, form);
        if (route === '/token' && method === 'POST') return await token(form);
        return undefined;
      } catch (error) {
        // The issuer's own failure (signing, a broken redirect URI): answered, logged (ADR 0106).
        logger.error('local issuer failed to answer', errorFields(error));
        return oauthError(500, 'server_error', 'The local issuer could not answer; see the host log.');
      }
    },
  };
}
