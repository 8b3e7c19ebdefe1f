import { dictionary } from '#domain/dictionary.ts';

/** Cookie names of browser sessions (DESIGN §6). */
export const SESSION_COOKIE = '__Host-session';
export const CSRF_COOKIE = 'csrf_token';
export const CSRF_HEADER = 'x-csrf-token';

/** Parses a Cookie header into name → value (first occurrence wins), a prototype-free table. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out = dictionary<string>();
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    if (!Object.hasOwn(out, name)) out[name] = part.slice(i + 1).trim();
  }
  return out;
}

/** Set-Cookie values for a new session pair. */
export function sessionCookies(token: string, csrf: string, maxAgeSeconds: number): string[] {
  const age = Math.max(0, Math.floor(maxAgeSeconds));
  return [
    `${SESSION_COOKIE}=${token}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${age}`,
    `${CSRF_COOKIE}=${csrf}; Path=/; Secure; SameSite=Lax; Max-Age=${age}`,
  ];
}

/** Set-Cookie values that clear both cookies. */
export function clearedCookies(): string[] {
  return sessionCookies('', '', 0);
}
