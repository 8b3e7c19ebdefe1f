/**
 * The concurrency run of `npm run bench` (issue #15): listWorkspaces and listLayers (limit 100)
 * with 10 requests in flight over 10 keep-alive connections, against the local host and against
 * the floor server doing the same Query, and the same at 1 connection. The ratios host / floor at
 * 10 beside those at 1 show what contention inside the host adds (its event loop, the authorizer,
 * the middy stack) beyond what DynamoDB Local and TLS cost both. Reported, no target.
 *
 * In the full run it uses the scaling stack (section 3) and its 100-layer service;
 * `BENCH_ONLY=concurrency npm run bench` starts that stack alone, creates a service with 100 draft
 * layers through the API and writes `.bench/results-concurrency.md`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { keys } from '#store/keys.ts';
import { FAULT_HOST } from '../test/support/host-process.ts';
import { root } from './bundles.ts';
import { cleanup, installExitHandlers, onCleanup } from './cleanup.ts';
import { call, send } from './latency.ts';
import type { ScalingStack } from './scaling.ts';
import { fixed, percentile, ratio, table } from './stats.ts';

/** Requests in flight (and keep-alive connections) of the concurrent runs. */
export const CONCURRENCY = 10;
const LEVELS = [1, CONCURRENCY] as const;
const LIST_LIMIT = 100;
/** Requests per (case, target, level) and round; the rounds rotate the order. */
const PER_ROUND: Record<number, number> = { 1: 40, [CONCURRENCY]: 200 };
const ROUNDS = 5;
const WARMUP = 30;
const BUDGET_MS = 90_000;

/** Where the run sends its requests: a host, its floor server, and a service with ≥ 100 layers. */
export interface ConcurrencyTarget {
  url: string;
  floorPort: number;
  auth: Record<string, string>;
  /** The host's certificate authority (the scaling stack's agent's). */
  ca: Agent['options']['ca'];
  workspaceId: string;
  serviceId: string;
}

/** The target on a filled scaling stack (its service with 100 API-created layers). */
export function concurrencyTarget(
  stack: ScalingStack,
  small: { workspaceId: string; serviceId: string },
): ConcurrencyTarget {
  return { ...stack, ca: stack.agent.options.ca, workspaceId: small.workspaceId, serviceId: small.serviceId };
}

interface Case {
  id: 'listWorkspaces' | 'listLayers';
  host: string;
  floor: string;
  count: (body: unknown) => number;
}

/** Samples of one (case, target, level). */
export interface ConcurrencySamples {
  case: Case['id'];
  target: 'host' | 'floor';
  level: number;
  samples: number[];
  /** Requests per second over the measured batches (wall time of each batch). */
  throughput: number;
}

export interface ConcurrencyOutcome {
  results: ConcurrencySamples[];
  rounds: number;
  workspaces: number;
}

/** `n` requests to `url` with `level` in flight over `agent`; their times and the batch's wall time. */
async function batch(agent: Agent, url: string, headers: Record<string, string>, n: number, level: number) {
  const times: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const reply = await send(agent, 'GET', url, headers);
      if (reply.status !== 200)
        throw new Error(`GET ${url} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
      times.push(reply.ms);
    }
  };
  await Promise.all(Array.from({ length: level }, worker));
  return { times, wallMs: performance.now() - t0 };
}

/** Measures both cases on both targets at 1 and at `CONCURRENCY` requests in flight. */
export async function measureConcurrency(
  t: ConcurrencyTarget,
  progress: (s: string) => void,
): Promise<ConcurrencyOutcome> {
  const floor = `https://127.0.0.1:${t.floorPort}`;
  const partition = keys.workspacePartition(t.workspaceId);
  const cases: Case[] = [
    {
      id: 'listWorkspaces',
      host: `${t.url}/workspaces?limit=${LIST_LIMIT}`,
      floor: `${floor}/floor-list?limit=${LIST_LIMIT}`,
      count: (b) => ((b as { workspaces?: unknown[] }).workspaces ?? []).length,
    },
    {
      id: 'listLayers',
      host: `${t.url}/workspaces/${t.workspaceId}/services/${t.serviceId}/layers?limit=${LIST_LIMIT}`,
      floor: `${floor}/floor-layers?pk=${encodeURIComponent(partition)}&prefix=${encodeURIComponent(keys.layerPrefix(t.serviceId))}&limit=${LIST_LIMIT}`,
      count: (b) => ((b as { layers?: unknown[] }).layers ?? []).length,
    },
  ];
  // One agent per (target, level): its own keep-alive connections, opened in the warm-up.
  const agents = new Map<string, Agent>();
  const agentFor = (target: 'host' | 'floor', level: number) => {
    const key = `${target}:${level}`;
    let a = agents.get(key);
    if (!a) {
      a = new Agent({ keepAlive: true, maxSockets: level, ca: t.ca });
      agents.set(key, a);
      onCleanup(`concurrency: agent ${key}`, () => a?.destroy());
    }
    return a;
  };
  // The answers: the host and the floor return the same number of items.
  let workspaces = 0;
  for (const c of cases) {
    const h = c.count(await call(agentFor('host', 1), 'GET', c.host, t.auth));
    const f = c.count(await call(agentFor('floor', 1), 'GET', c.floor, {}));
    if (h !== f || h === 0)
      throw new Error(`concurrency: ${c.id} answers ${h} items on the host, ${f} on the floor`);
    if (c.id === 'listWorkspaces') workspaces = h;
  }
  const results: ConcurrencySamples[] = [];
  const wall = new Map<ConcurrencySamples, number>();
  const runs: [Case, 'host' | 'floor', number][] = [];
  for (const c of cases) {
    for (const target of ['host', 'floor'] as const) {
      for (const level of LEVELS) {
        runs.push([c, target, level]);
        const r: ConcurrencySamples = { case: c.id, target, level, samples: [], throughput: 0 };
        results.push(r);
        wall.set(r, 0);
      }
    }
  }
  progress(`concurrency: warm-up (${WARMUP} requests per case, target and level)`);
  for (const [c, target, level] of runs) {
    await batch(
      agentFor(target, level),
      target === 'host' ? c.host : c.floor,
      target === 'host' ? t.auth : {},
      WARMUP,
      level,
    );
  }
  const started = Date.now();
  let rounds = 0;
  for (let round = 0; round < ROUNDS && Date.now() - started < BUDGET_MS; round++) {
    progress(`concurrency: round ${round + 1}/${ROUNDS}`);
    for (let k = 0; k < runs.length; k++) {
      const index = (k + round) % runs.length;
      const [c, target, level] = runs[index] as (typeof runs)[number];
      const r = results[index] as ConcurrencySamples;
      const n = PER_ROUND[level] ?? 40;
      const out = await batch(
        agentFor(target, level),
        target === 'host' ? c.host : c.floor,
        target === 'host' ? t.auth : {},
        n,
        level,
      );
      r.samples.push(...out.times);
      wall.set(r, (wall.get(r) ?? 0) + out.wallMs);
    }
    rounds++;
  }
  for (const r of results) r.throughput = r.samples.length / ((wall.get(r) ?? 1) / 1000);
  for (const a of agents.values()) a.destroy();
  return { results, rounds, workspaces };
}

/** The report's concurrency section. */
export function concurrencySection(o: ConcurrencyOutcome, heading = '## 7.'): string {
  const find = (c: string, target: string, level: number) =>
    o.results.find((r) => r.case === c && r.target === target && r.level === level)?.samples ?? [];
  const p = (s: number[], q: number) => percentile(s, q);
  const rows = o.results.map((r) => [
    r.case,
    r.target === 'host' ? 'local host (API key)' : 'floor (same Query)',
    String(r.level),
    String(r.samples.length),
    fixed(p(r.samples, 50)),
    fixed(p(r.samples, 99)),
    fixed(r.throughput, 0),
  ]);
  const ratioRows = (['listWorkspaces', 'listLayers'] as const).flatMap((c) =>
    LEVELS.map((level) => {
      const host = find(c, 'host', level);
      const floor = find(c, 'floor', level);
      return [c, String(level), ratio(p(host, 50), p(floor, 50)), ratio(p(host, 99), p(floor, 99))];
    }),
  );
  const growth = (['listWorkspaces', 'listLayers'] as const).map((c) => {
    const at = (target: string, level: number) => p(find(c, target, level), 50);
    return (
      `${c}: host p50 ${fixed(at('host', 1))} → ${fixed(at('host', CONCURRENCY))} ms ` +
      `(${ratio(at('host', CONCURRENCY), at('host', 1))}), floor ${fixed(at('floor', 1))} → ${fixed(at('floor', CONCURRENCY))} ms ` +
      `(${ratio(at('floor', CONCURRENCY), at('floor', 1))})`
    );
  });
  return [
    `${heading} Concurrency: listWorkspaces and listLayers with ${CONCURRENCY} requests in flight`,
    '',
    `The scaling stack's host (DynamoDB Local in memory, no PostGIS) and its floor server (the same Query the ` +
      `repository sends, nothing else), each with ${CONCURRENCY} keep-alive connections and ${CONCURRENCY} requests in ` +
      `flight, then with 1. listWorkspaces (limit ${LIST_LIMIT}; ${o.workspaces} workspaces) and listLayers (limit ` +
      `${LIST_LIMIT}, a service with ${LIST_LIMIT} layers); the floor's \`/floor-list\` and \`/floor-layers\` answer ` +
      `the same items. ${WARMUP} warm-up requests per row, then ${o.rounds} rounds of ${PER_ROUND[CONCURRENCY]} ` +
      `(at ${CONCURRENCY}) or ${PER_ROUND[1]} (at 1) requests per row, the order rotating; times from the call to the ` +
      'last byte, in ms; req/s over the batches. No target: the ratios show what contention inside the host adds.',
    '',
    table(
      ['case', 'server', 'in flight', 'n', 'p50', 'p99', 'req/s'],
      rows,
      '---|---|---:|---:|---:|---:|---:',
    ),
    '',
    table(['case', 'in flight', 'p50 host / floor', 'p99 host / floor'], ratioRows, '---|---:|---:|---:'),
    '',
    `From 1 to ${CONCURRENCY} in flight: ${growth.join('; ')}.`,
    '',
  ].join('\n');
}

/** The section alone (`BENCH_ONLY=concurrency`): the scaling stack, 100 layers through the API, the run. */
export async function concurrencyAlone(
  startStack: () => Promise<ScalingStack>,
  progress: (s: string) => void,
): Promise<number> {
  installExitHandlers(10 * 60_000);
  const load0 = loadavg();
  const started = Date.now();
  progress('BENCH_ONLY=concurrency: starting the scaling stack');
  const stack = await startStack();
  const ws = await call(stack.agent, 'POST', `${stack.url}/workspaces`, stack.auth, {
    name: 'bench-concurrency',
  });
  const svc = await call(stack.agent, 'POST', `${stack.url}/workspaces/${ws.id}/services`, stack.auth, {
    name: 'concurrency',
    type: 'postgis',
    connection: { host: FAULT_HOST, port: 5432, database: 'gis', user: 'reader' },
    enabled: false,
  });
  progress(`concurrency: creating ${LIST_LIMIT} draft layers through the API`);
  for (let i = 0; i < LIST_LIMIT; i++) {
    await call(
      stack.agent,
      'POST',
      `${stack.url}/workspaces/${ws.id}/services/${svc.id}/layers`,
      stack.auth,
      {
        source_layer: 'places',
        public_id: `c-${String(i).padStart(3, '0')}`,
        enabled: false,
      },
    );
  }
  const outcome = await measureConcurrency(
    concurrencyTarget(stack, { workspaceId: ws.id, serviceId: svc.id }),
    progress,
  );
  await cleanup();
  const load = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');
  const report = [
    '# GeoPlane benchmark — the concurrency section alone (`BENCH_ONLY=concurrency`)',
    '',
    `${new Date().toISOString()} · Node ${process.version} · ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'} · ` +
      `load average ${load(load0)} at start, ${load(loadavg())} at end · run took ${fixed((Date.now() - started) / 1000, 0)} s`,
    '',
    concurrencySection(outcome),
  ].join('\n');
  const file = join(root, '.bench', 'results-concurrency.md');
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(file, report);
  process.stdout.write(`${report}\n(also written to ${file})\n`);
  return 0;
}
