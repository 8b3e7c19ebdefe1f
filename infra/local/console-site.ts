/**
 * The console's files on the local host (`/console/…`): the Vite build in console/dist, with the
 * console's CSP and security headers (ADR 0098). Hashed assets are immutable; every other path
 * under /console/ is the single page's index.html (the console routes in the browser).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { consoleSecurityHeaders } from '#http/console-headers.ts';
import { errorFields, logger } from '#log/logger.ts';
import type { OutgoingResponse } from './gateway.ts';

export const CONSOLE_PATH = '/console';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/** Answers a GET/HEAD under /console (or / → /console/); undefined for any other path. */
export function consoleResponse(
  method: string,
  url: string,
  dist: string,
  issuerOrigins: readonly string[],
): OutgoingResponse | undefined {
  let path: string;
  try {
    path = decodeURIComponent(url.split('?')[0] ?? '/');
  } catch {
    // Malformed percent-encoding: not a console path (the gateway answers it like any other).
    return undefined;
  }
  if (path === '/' || path === CONSOLE_PATH) {
    return {
      statusCode: 302,
      headers: { Location: `${CONSOLE_PATH}/`, 'Cache-Control': 'no-store' },
      body: '',
    };
  }
  if (!path.startsWith(`${CONSOLE_PATH}/`)) return undefined;
  const headers = consoleSecurityHeaders(issuerOrigins);
  if (method !== 'GET' && method !== 'HEAD') {
    return { statusCode: 405, headers: { ...headers, Allow: 'GET, HEAD' }, body: '' };
  }
  try {
    return consoleFile(path, dist, headers);
  } catch (error) {
    // A build that can't be read (permissions, a directory where a file should be): said, logged (ADR 0106).
    logger.error('local console could not be read', errorFields(error));
    return {
      statusCode: 503,
      headers: { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
      body: 'The console could not be read: see the host log (`npx tsx console/build.ts` rebuilds it).',
    };
  }
}

/** The file of a console path: an asset, or the single page; throws when the build can't be read. */
function consoleFile(path: string, dist: string, headers: Record<string, string>): OutgoingResponse {
  const index = join(dist, 'index.html');
  if (!existsSync(index)) {
    return {
      statusCode: 503,
      headers: { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
      body: 'The console is not built: run `npx tsx console/build.ts` (npm start builds it).',
    };
  }
  const relative = normalize(path.slice(CONSOLE_PATH.length + 1));
  const file = join(dist, relative);
  const inside = file.startsWith(`${dist}${sep}`) && !relative.startsWith('..');
  if (inside && relative.startsWith(`assets${sep}`)) {
    if (!existsSync(file) || !statSync(file).isFile()) {
      return { statusCode: 404, headers: { ...headers, 'Content-Type': 'text/plain' }, body: 'not found' };
    }
    return {
      statusCode: 200,
      headers: {
        ...headers,
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
        'Cache-Control': 'public, max-age=31536000, immutable',
      },
      body: readFileSync(file),
    };
  }
  return {
    statusCode: 200,
    headers: { ...headers, 'Content-Type': TYPES['.html'] as string, 'Cache-Control': 'no-cache' },
    body: readFileSync(index),
  };
}
