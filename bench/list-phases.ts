import { spawn } from 'node:child_process';
import { root } from './bundles.ts';
import { onCleanup } from './cleanup.ts';
import { stopChild } from './floor-process.ts';
import type { PhaseCaseResult, PhaseInput } from './list-phases-child.ts';
import { fixed, table } from './stats.ts';

/**
 * Where a list's time goes (ADR 0140): runs bench/list-phases-child.ts (the host's gateway,
 * authorizer and handler in a process of its own, timed by a middleware on the document client)
 * and turns its medians into section 1's breakdown. Benchmark code only: the product has no timing
 * hooks for it. `BENCH_LIST_PHASES=off` skips it.
 */
export async function measureListPhases(
  input: PhaseInput,
  progress: (s: string) => void,
): Promise<PhaseCaseResult[] | Error> {
  if (process.env.BENCH_LIST_PHASES === 'off') return new Error('skipped (BENCH_LIST_PHASES=off)');
  progress(`list phases: ${input.warmup} + ${input.requests} in-process requests per list`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/list-phases-child.ts'], {
    cwd: root,
    env: { ...process.env, BENCH_PHASES: JSON.stringify(input) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup('list phases', () => stopChild(child));
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d;
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  const line = /^BENCH_PHASES (.*)$/m.exec(output)?.[1];
  if (code !== 0 || !line) return new Error(`exited ${code}: ${output.trim().slice(-600)}`);
  return JSON.parse(line) as PhaseCaseResult[];
}

/**
 * The breakdown table: per list, its p50 over HTTPS and its reference's (from the paired rounds),
 * then the in-process medians of the host's timeline and of the floor's two requests, and a line
 * per list saying where the in-process difference goes. Medians do not add up exactly; the HTTPS
 * p50 minus the in-process total is what the HTTP server, TLS and the client cost each side (and,
 * for the host, the load of its other work).
 */
export function listPhasesSection(
  outcome: PhaseCaseResult[] | Error,
  https: Map<string, { host: number; floor: number; max: number }>,
  label: (id: string) => string,
): string {
  const title = "### Where a list's time goes (phase profile)";
  if (outcome instanceof Error) return `${title}\n\nNot measured: \`${outcome.message.slice(0, 600)}\``;
  const gateway = (r: PhaseCaseResult) => r.gatewayBefore + r.gatewayBetween + r.gatewayAfter;
  const handler = (r: PhaseCaseResult) => r.handlerBefore + r.handlerAfter;
  const rows = outcome.map((r) => {
    const h = https.get(r.id);
    return [
      label(r.id),
      h ? fixed(h.host) : 'n/a',
      h ? fixed(h.floor) : 'n/a',
      h ? `${fixed(h.host - h.floor)} (${fixed(h.max * h.floor - h.floor)})` : 'n/a',
      fixed(r.total),
      `${fixed(gateway(r))} (${fixed(r.gatewayBefore)} · ${fixed(r.gatewayBetween)} · ${fixed(r.gatewayAfter)})`,
      fixed(r.authorizerWork),
      fixed(r.read),
      `${fixed(handler(r))} (${fixed(r.handlerBefore)} · ${fixed(r.handlerAfter)})`,
      fixed(r.query),
      `${fixed(r.floorTotal)} (${fixed(r.floorRead)} + ${fixed(r.floorQuery)})`,
      h ? fixed(h.host - r.total) : 'n/a',
      h ? fixed(h.floor - r.floorTotal) : 'n/a',
    ];
  });
  const where = outcome.map(
    (r) =>
      `- ${r.id}: ${fixed(r.total - r.floorTotal)} ms more than the floor in process; the code around the two ` +
      `requests takes ${fixed(gateway(r) + r.authorizerWork + handler(r))} ms (gateway emulation ${fixed(gateway(r))}, ` +
      `authorizer ${fixed(r.authorizerWork)}, handler ${fixed(handler(r))}), the two requests ` +
      `${fixed(r.read + r.query)} ms vs the floor's ${fixed(r.floorRead + r.floorQuery)}.`,
  );
  const mismatches = outcome.filter((r) => !r.sameAsFloor);
  return [
    title,
    '',
    "Where each list's p50 goes beyond its floor. HTTPS columns: the paired rounds' p50 of the list and of its " +
      'reference (authorizer read + Query on the floor server), and the difference (in brackets: what the 1.15× target allows). ' +
      "In-process columns: `bench/list-phases-child.ts` loads the local host's gateway emulation (`handleRequest`) in a process " +
      "of its own, with the host's configuration and data-access check, and times each request: the authorizer's and the " +
      "handler's invocations from the gateway's `withDataAccess` scope, the DynamoDB requests from a middleware on the document " +
      'client. **Gateway** (before the authorizer · between it and the handler · after the handler): route match, the events, ' +
      "policy evaluation, the proxy event's size check, the answer. **Authorizer**: its invocation without its read (SHA-256 of " +
      'the key, the principal, the context JSON). **Handler** (before its Query · after it): middleware, validation, the context ' +
      "parsed; presenting and the JSON body. Beside each request, the floor's two requests through a plain document client. " +
      'The last two columns are HTTPS p50 minus the in-process total: the HTTP server, TLS and client on each side (the host ' +
      'also runs its sweeps, change stream and PostGIS worker). Medians of ' +
      `${outcome[0]?.n ?? 0} requests per list, in ms; they do not add up exactly.`,
    '',
    table(
      [
        'list',
        'HTTPS p50',
        'reference p50',
        'over (allowed)',
        'in-process total',
        'gateway (before · between · after)',
        'authorizer work',
        'authorizer read',
        'handler work (before · after Query)',
        'Query',
        'floor in-process (read + Query)',
        'host HTTP layer',
        'floor HTTP layer',
      ],
      rows,
      '---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:',
    ),
    '',
    ...where,
    '',
    mismatches.length
      ? `**The host's requests differ from the floor's** (the reference is then not this list's floor): ${mismatches
          .map((r) => `${r.id}: ${r.mismatch?.slice(0, 300)}`)
          .join('; ')}.`
      : `Checked: each list sends exactly the floor's two requests (${outcome
          .map((r) => `${r.id}: ${r.commands.join(' then ')}`)
          .join('; ')}), same keys, consistency and Query input.`,
  ].join('\n');
}
