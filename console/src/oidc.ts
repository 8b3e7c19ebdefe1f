/**
 * OIDC authorization code + PKCE (RFC 7636, S256) as a public client: the console sends the
 * operator to the issuer, takes the code back on /console/callback, redeems it with its
 * verifier for an id token and exchanges that for a session (POST /auth/login). Nothing of the
 * flow outlives it: verifier, state and nonce sit in sessionStorage until the callback.
 */
import type { ConsoleConfig } from './session.ts';
import { loginWithToken } from './session.ts';

const PENDING = 'geoplane.oidc.pending';

interface Pending {
  verifier: string;
  state: string;
  nonce: string;
  tokenEndpoint: string;
  clientId: string;
  redirectUri: string;
  returnTo: string;
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomText(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

async function challengeOf(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** The redirect URI: the configured one, else this console's callback page. */
export function redirectUriOf(config: ConsoleConfig): string {
  return config.auth.oidc.redirect_uri || `${location.origin}/console/callback`;
}

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
}

async function discover(issuer: string): Promise<Discovery> {
  const response = await fetch(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`The issuer's discovery document answered ${response.status}.`);
  const document = (await response.json()) as Partial<Discovery>;
  if (!document.authorization_endpoint || !document.token_endpoint)
    throw new Error('The issuer names no authorization or token endpoint.');
  return document as Discovery;
}

/** Sends the browser to the issuer's authorization endpoint. */
export async function beginOidcLogin(config: ConsoleConfig, returnTo: string): Promise<void> {
  const oidc = config.auth.oidc;
  const endpoints = await discover(oidc.issuer);
  const pending: Pending = {
    verifier: randomText(48),
    state: randomText(),
    nonce: randomText(),
    tokenEndpoint: endpoints.token_endpoint,
    clientId: oidc.client_id,
    redirectUri: redirectUriOf(config),
    returnTo,
  };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(endpoints.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: pending.clientId,
    redirect_uri: pending.redirectUri,
    scope: oidc.scopes.join(' '),
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await challengeOf(pending.verifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

function claimsOf(jwt: string): Record<string, unknown> {
  const payload = jwt.split('.')[1] ?? '';
  const text = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0)))) as Record<
    string,
    unknown
  >;
}

/** Completes the flow on the callback page; answers where the operator was going. */
export async function completeOidcLogin(search: string): Promise<string> {
  const params = new URLSearchParams(search);
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (params.get('error'))
    throw new Error(
      `The issuer refused the sign-in: ${params.get('error_description') ?? params.get('error')}`,
    );
  if (!raw) throw new Error('No sign-in was started from this browser tab; start again.');
  const pending = JSON.parse(raw) as Pending;
  if (params.get('state') !== pending.state)
    throw new Error('The sign-in answer does not match its request (state).');
  const code = params.get('code');
  if (!code) throw new Error('The issuer sent no authorization code.');
  const response = await fetch(pending.tokenEndpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: pending.redirectUri,
      client_id: pending.clientId,
      code_verifier: pending.verifier,
    }),
  });
  const tokens = (await response.json().catch(() => ({}))) as {
    id_token?: string;
    error?: string;
    error_description?: string;
  };
  if (!response.ok || !tokens.id_token)
    throw new Error(
      `The issuer did not redeem the code: ${tokens.error_description ?? tokens.error ?? response.status}`,
    );
  if (claimsOf(tokens.id_token).nonce !== pending.nonce)
    throw new Error('The id token is not for this sign-in (nonce).');
  await loginWithToken(tokens.id_token);
  return pending.returnTo;
}
