import type { IncomingHttpHeaders } from 'node:http';
import { type Agent, request } from 'node:https';

/** One answered request. */
export interface Reply {
  status: number;
  text: string;
  /** Bytes of the answer's body (a tile's are binary: `text` is only for JSON). */
  bytes: number;
  headers: IncomingHttpHeaders;
  ms: number;
  /** False when the request had to open a new TLS connection. */
  reused: boolean;
}

/** Sends one request over `agent` and times it from the call to the last byte of the answer. */
export function send(
  agent: Agent,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      url,
      {
        agent,
        method,
        headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('error', reject);
        res.once('end', () => {
          // As before: the body's decoding is inside the timed span.
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            text,
            bytes: body.length,
            headers: res.headers,
            ms: performance.now() - t0,
            reused: req.reusedSocket,
          });
        });
      },
    );
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${url}: no answer in 15 s`)));
    req.once('error', reject);
    req.end(body);
  });
}

/** Sends one request that must answer `status` and returns its parsed JSON body (setup, not measured). */
export async function call(
  agent: Agent,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
  status = method === 'POST' ? 201 : 200,
): Promise<any> {
  const reply = await send(
    agent,
    method,
    url,
    headers,
    body === undefined ? undefined : JSON.stringify(body),
  );
  if (reply.status !== status) {
    throw new Error(
      `${method} ${url} answered ${reply.status} (expected ${status}): ${reply.text.slice(0, 500)}`,
    );
  }
  return reply.text ? JSON.parse(reply.text) : undefined;
}

/** One thing to measure: a request that must answer `status` (200 unless told). */
export interface LatencyCase {
  id: string;
  url: string;
  /** GET unless told. */
  method?: string;
  headers?: Record<string, string>;
  /** The request body, asked anew for every request (a create needs a unique name each time). */
  body?: () => string;
  status?: number;
  /** Overrides of the plan's counts for this case (e.g. fewer validated creates). */
  warmup?: number;
  perRound?: number;
  /** Throws when an answer is not the expected one (checked on the first and last warm-up answer). */
  check?: (body: unknown) => void;
}

/** Samples of one case. */
export interface LatencyResult {
  id: string;
  samples: number[];
  /** Measured requests that had to open a new connection (the server closed an idle one). */
  reconnects: number;
}

export interface LatencyPlan {
  warmup: number;
  rounds: number;
  perRound: number;
  /** Stop starting new rounds after this long, asked after the warm-up (the counts above are an upper bound). */
  budgetMs: () => number;
}

/** One request of a case: its answer, checked for the expected status (one retry on a reset keep-alive socket). */
export async function once(agent: Agent, c: LatencyCase, retry = true): Promise<Reply> {
  const method = c.method ?? 'GET';
  let reply: Reply;
  try {
    reply = await send(agent, method, c.url, c.headers, c.body?.());
  } catch (error) {
    // A keep-alive socket closed by the server between two uses: one retry on a new connection
    // (with a new body, so a create's unique name is never sent twice).
    const code = (error as NodeJS.ErrnoException).code;
    if (retry && (code === 'ECONNRESET' || code === 'EPIPE')) return once(agent, c, false);
    throw error;
  }
  const expected = c.status ?? 200;
  if (reply.status !== expected) {
    throw new Error(
      `${c.id}: ${method} ${c.url} answered ${reply.status} (expected ${expected}): ${reply.text.slice(0, 500)}`,
    );
  }
  return reply;
}

/**
 * Sequential requests over one keep-alive connection per server: warm-up first (answers checked),
 * then `rounds` rounds in which every case runs `perRound` requests (or its own count), the case order rotating per
 * round, so drift of the machine (JIT, GC, DynamoDB Local's own warm-up) spreads over all cases.
 */
export async function measureLatency(
  agent: Agent,
  cases: readonly LatencyCase[],
  plan: LatencyPlan,
  progress: (s: string) => void,
): Promise<{ results: LatencyResult[]; truncated: boolean; budgetMs: number }> {
  for (const c of cases) {
    const warmup = c.warmup ?? plan.warmup;
    for (let i = 0; i < warmup; i++) {
      const reply = await once(agent, c);
      if (i === 0 || i === warmup - 1) c.check?.(JSON.parse(reply.text));
    }
  }
  const results = cases.map((c) => ({ id: c.id, samples: [] as number[], reconnects: 0 }));
  const budgetMs = plan.budgetMs();
  const started = Date.now();
  let truncated = false;
  for (let round = 0; round < plan.rounds; round++) {
    if (Date.now() - started > budgetMs) {
      truncated = true;
      break;
    }
    progress(`latency: round ${round + 1}/${plan.rounds}`);
    for (let k = 0; k < cases.length; k++) {
      const index = (k + round) % cases.length;
      const c = cases[index] as LatencyCase;
      const result = results[index] as LatencyResult;
      for (let i = 0; i < (c.perRound ?? plan.perRound); i++) {
        const reply = await once(agent, c);
        result.samples.push(reply.ms);
        if (!reply.reused) result.reconnects++;
      }
    }
  }
  return { results, truncated, budgetMs };
}
