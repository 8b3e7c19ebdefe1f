import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { inject } from 'vitest';

/** A response as a client sees it. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The body's bytes as received. */
  raw?: Buffer;
  body: T;
  /** The Set-Cookie values, one per cookie. */
  cookies: string[];
}

const agents = new Map<string, Agent>();

/** An HTTPS agent trusting the local host's self-signed certificate (and nothing else). */
export function agentFor(dataDir: string): Agent {
  let agent = agents.get(dataDir);
  if (!agent) {
    agent = new Agent({ ca: readFileSync(join(dataDir, 'tls-cert.pem')), keepAlive: true, maxSockets: 32 });
    agents.set(dataDir, agent);
  }
  return agent;
}

/** Options of one request. */
export interface CallOptions {
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  /** Base URL (defaults to the shared test host). */
  baseUrl?: string;
  dataDir?: string;
}

/** Sends one HTTPS request to the local host; `path` is relative to `/api/v1`. */
export function call<T = any>(
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<ApiResponse<T>> {
  const host = inject('host');
  const base = options.baseUrl ?? host.url;
  const url = new URL(base + path);
  const payload =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string' || Buffer.isBuffer(options.body)
        ? options.body
        : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent: agentFor(options.dataDir ?? host.dataDir),
        headers: {
          ...(payload !== undefined
            ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) }
            : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
          resolve({
            status: res.statusCode ?? 0,
            headers,
            text,
            raw,
            body: body as T,
            cookies: res.headers['set-cookie'] ?? [],
          });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Headers carrying the bootstrap super_admin key. */
export function asSuperAdmin(): Record<string, string> {
  return { 'X-API-Key': inject('host').apiKey };
}

/** A unique name for test resources. */
export function uniqueName(prefix = 'ws'): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
