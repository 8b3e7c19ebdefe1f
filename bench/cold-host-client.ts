/** The local host's API, as the cold requests' preparation calls it (the bootstrap super_admin's key). */
import { readFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import type { ColdStack } from './cold-lambda.ts';

// ---- the local host's API: what the requests need, made beforehand ------------------------------

export interface Reply {
  status: number;
  body: any;
  text: string;
  cookies: string[];
  location?: string;
}

/** A client of the local host's API as the bootstrap super_admin (or `headers`). */
export function hostClient(stack: ColdStack) {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 1,
    ca: readFileSync(join(stack.dataDir, 'tls-cert.pem')),
  });
  const send = (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = { 'X-API-Key': stack.apiKey },
    url = `${stack.hostUrl}${path}`,
  ): Promise<Reply> => {
    const raw = Buffer.isBuffer(body)
      ? body
      : body === undefined
        ? undefined
        : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        url,
        {
          method,
          agent,
          headers: {
            ...headers,
            ...(raw
              ? {
                  'Content-Type': headers['Content-Type'] ?? 'application/json',
                  'Content-Length': String(raw.length),
                }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            const setCookie = res.headers['set-cookie'];
            resolve({
              status: res.statusCode ?? 0,
              body: parsed,
              text,
              cookies: setCookie ?? [],
              location: res.headers.location,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(raw);
    });
  };
  /** The request must answer `status` (any 2xx unless told); its body. */
  const must = async (
    method: string,
    path: string,
    body?: unknown,
    status?: number,
    headers?: Record<string, string>,
  ) => {
    const reply = await send(method, path, body, headers);
    const ok = status === undefined ? reply.status >= 200 && reply.status < 300 : reply.status === status;
    if (!ok) throw new Error(`${method} ${path} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
    return reply;
  };
  return { agent, send, must };
}

/** The client hostClient makes. */
export type HostClient = ReturnType<typeof hostClient>;
