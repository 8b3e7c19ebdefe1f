/**
 * The security headers of the console's files, locally and behind CloudFront (ADR 0098): the
 * API's own set, with a CSP that lets the console load only its own scripts and styles, talk to
 * its own origin (plus the OIDC issuer's, for discovery and the code exchange) and start
 * MapLibre's workers from blob: URLs. No inline script or style, no eval, no framing.
 */
import { securityHeaders } from './responses.ts';

/** The CSP of the console; `issuerOrigins` are the OIDC issuers it may call (discovery, token). */
export function consoleContentSecurityPolicy(issuerOrigins: readonly string[] = []): string {
  const connect = ["'self'", ...new Set(issuerOrigins)].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob:",
    "font-src 'self'",
    `connect-src ${connect}`,
    'worker-src blob:',
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Every header a console file is served with (Cache-Control is the caller's: assets are immutable). */
export function consoleSecurityHeaders(issuerOrigins: readonly string[] = []): Record<string, string> {
  const { 'Cache-Control': _cache, Vary: _vary, ...rest } = securityHeaders;
  return {
    ...rest,
    'Content-Security-Policy': consoleContentSecurityPolicy(issuerOrigins),
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=()',
  };
}

/** The origin of an issuer URL, or nothing when it is not an http(s) URL. */
export function originOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}
