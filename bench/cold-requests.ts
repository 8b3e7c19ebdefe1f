import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import type { Bundle } from './bundles.ts';
import type { Fixed, PerRun } from './cold-fixtures.ts';
import { hostClient } from './cold-host-client.ts';
import {
  authorizerEvent,
  type ColdStack,
  lambdaEnv,
  probe,
  proxyEvent,
  startStepFunctionsStandIn,
} from './cold-lambda.ts';
import { prepare } from './cold-prepare.ts';
import { byId, type Case, kit, type Made, type RouteRequest } from './cold-request-kit.ts';
import { accessRequests } from './cold-requests-access.ts';
import { importRequests } from './cold-requests-imports.ts';
import { operationRequests } from './cold-requests-operations.ts';
import { serviceRequests } from './cold-requests-services.ts';
import { styleRequests } from './cold-requests-styles.ts';
import { type TripPorts, type TripSummary, tripsCell, tripsOf } from './cold-trips.ts';
import { pairedOutcome, spreadOf } from './paired.ts';
import { fixed, median } from './stats.ts';

/*
 * Section 2's cold requests (issue #27, target 2: "cold requests, every route"): for every route of
 * the route table and for the authorizer, a fresh `node` imports the route's bundle and answers one
 * request with it, against the run's DynamoDB Local and embedded PostGIS, as a Lambda's first
 * invocation does (init, then the handler). A route's authorizer context comes from the authorizer
 * bundle, run first in a process of its own (not timed), as API Gateway would hand it over. What a
 * request needs (a layer to read, a key to revoke, a session to end, an import in the right state)
 * is made beforehand through the local host's API, one throwaway item per run where the request
 * deletes or changes its state. The workflows a request starts go to a Step Functions stand-in on
 * 127.0.0.1 that accepts the StartExecution (the execution never runs).
 * The fresh process and its events are in cold-lambda.ts, what the requests need is made by
 * cold-prepare.ts, and each area's requests are in cold-requests-<area>.ts; this module measures
 * and reports.
 */

/**
 * The requests that need an import the host has loaded: measured after all the others, once the
 * host has loaded those imports, so that a load that fails (and the embedded PostGIS with it) can't
 * take the other routes' requests down.
 */
const LOADED: ReadonlySet<string> = new Set([
  'previewImport',
  'publishImport',
  'rollbackImport',
  'retryImport',
]);

// ---- measuring ----------------------------------------------------------------------------------

export interface ColdRequest {
  /** The operation (or `authorizer`, or the floor). */
  id: string;
  bundle: string;
  /** Minified bundle bytes (the sidecars it loads not included). */
  bytes: number;
  importMs: number[];
  requestMs: number[];
  /** The statuses answered, one per run. */
  statuses: number[];
  /**
   * The floor's cold request (import + request) run beside each measured run, in the same order
   * as importMs: each run is a pair, the floor and the route one after the other in the same slot
   * (the floor first in every other pair). Empty for the floor's own row.
   */
  floorMs: number[];
  /** Each run's round trips (what its request waited on), in the order of importMs. */
  trips: (TripSummary | undefined)[];
  /** Why a run failed: its status and body, or the error. */
  error?: string;
}

const FLOOR = 'floor/floor-handler';
const AUTHORIZER = 'authorizer/index';

function bundleName(handler: string): string {
  return handler.replace(/^functions\//, '').replace(/\.ts$/, '');
}

/**
 * The floor, the authorizer and every route, `runs` times each, round-robin (each run goes through
 * all of them, in the route table's order with a run's producers before the requests that use
 * what they made), each one a fresh process: import time and the first request's time (a route's
 * authorizer context made beforehand, untimed). Two processes at a time (`parallel`, 2 at most): the
 * floor runs among them, so it meets the same contention.
 */
export async function measureColdRequests(
  bundles: readonly Bundle[],
  stack: ColdStack,
  runs: number,
  progress: (message: string) => void,
  parallel = 2,
  only?: ReadonlySet<string>,
): Promise<ColdRequest[]> {
  const standIn = await startStepFunctionsStandIn();
  const api = hostClient(stack);
  try {
    const env = await lambdaEnv(stack, standIn.endpoint);
    const byName = new Map(bundles.map((b) => [b.name, b]));
    const authorizer = byName.get(AUTHORIZER);
    const { fixed, perRun, loadImports } = await prepare(stack, api, runs, progress);
    const table = requests(fixed, perRun);
    const cases: Case[] = routes.map((operation) => ({
      operation,
      ...(table[operation.operationId] ?? {
        request: () => {
          throw new Error('no request written for this route');
        },
      }),
    }));
    // A run's producers first: the requests that use a queued job come after the one that queues it.
    const consumers = new Set([
      'getMosaicHarvestJob',
      'cancelMosaicHarvestJob',
      'getTileCacheJob',
      'getTileCacheJobProgress',
      'cancelTileCacheJob',
    ]);
    cases.sort(
      (a, b) =>
        Number(consumers.has(a.operation.operationId)) - Number(consumers.has(b.operation.operationId)),
    );
    const results: ColdRequest[] = [
      { id: 'FLOOR', bundle: FLOOR },
      { id: 'authorizer', bundle: AUTHORIZER },
      ...cases.map((c) => ({ id: c.operation.operationId, bundle: bundleName(c.operation.handler) })),
    ].map((r) => ({
      ...r,
      bytes: byName.get(r.bundle)?.bytes ?? 0,
      importMs: [],
      requestMs: [],
      statuses: [],
      floorMs: [],
      trips: [],
    }));
    const ports: TripPorts = {
      dynamo: Number(new URL(stack.dynamoEndpoint).port),
      stepFunctions: Number(new URL(standIn.endpoint).port),
      postgis: stack.postgis.port,
    };
    const superAdmin = { 'X-API-Key': stack.apiKey };
    // The authorizer's answer depends on the request's path and credentials, and it carries what it
    // read (the workspace and its version, ADR 0099): a change route's is made afresh each run, as
    // API Gateway's authorizer (TTL 0) runs for every request, so no run writes against the version
    // an earlier run changed; a read's is reused.
    const contexts = new Map<string, Record<string, unknown>>();
    const authorize = async (
      op: Operation,
      request: RouteRequest,
      headers: Record<string, string>,
      run: number,
    ) => {
      const event = authorizerEvent(op, request, headers);
      const fresh = op.method === 'GET' ? '' : ` run ${run}`;
      const key = `${op.method} ${event.path} ${JSON.stringify(headers)}${fresh}`;
      const known = contexts.get(key);
      if (known) return known;
      if (!authorizer || authorizer.buildError) throw new Error('the authorizer does not build');
      const out = await probe(authorizer.file, event, 'authorize', env);
      const m = /^BENCH_AUTHORIZED (.*)$/m.exec(out);
      if (!m?.[1]) throw new Error(`the authorizer answered nothing usable: ${out.slice(0, 300)}`);
      const result = JSON.parse(m[1]) as {
        principalId: string;
        context?: Record<string, unknown>;
        policyDocument?: { Statement?: { Effect: string }[] };
      };
      if (!result.policyDocument?.Statement?.some((s) => s.Effect === 'Allow'))
        throw new Error(`the authorizer denied the request: ${m[1].slice(0, 300)}`);
      const context = { ...(result.context ?? {}), principalId: result.principalId };
      contexts.set(key, context);
      return context;
    };
    /** A fresh process's timing line: import and request ms, the status and the body. */
    const timing = (out: string) => {
      const m = /^BENCH_COLD (\S+) (\S+) (\d+)$/m.exec(out);
      if (!m) throw new Error(`no timing: ${out.slice(0, 300)}`);
      const body = /^BENCH_BODY (.*)$/m.exec(out)?.[1];
      return {
        importMs: Number(m[1]),
        requestMs: Number(m[2]),
        status: Number(m[3]),
        text: body ? (JSON.parse(body) as string) : '',
        trips: tripsOf(out, ports),
      };
    };
    const floorRow = results[0] as ColdRequest;
    const floorBundle = byName.get(FLOOR);
    /** One floor run (its row keeps every one); its cold total. */
    const floorRun = async () => {
      if (!floorBundle || floorBundle.buildError) throw new Error('the floor does not build');
      const t = timing(await probe(floorBundle.file, { pathParameters: { id: fixed.ws } }, 'request', env));
      floorRow.statuses.push(t.status);
      if (t.status !== 200) throw new Error(`the floor answered ${t.status}: ${t.text.slice(0, 300)}`);
      floorRow.importMs.push(t.importMs);
      floorRow.requestMs.push(t.requestMs);
      floorRow.trips.push(t.trips);
      return t.importMs + t.requestMs;
    };
    /**
     * A measured run paired with a floor run in the same slot, the floor first when `floorFirst`;
     * recorded only when both answered.
     */
    const paired = async (
      result: ColdRequest,
      floorFirst: boolean,
      run: () => Promise<string>,
      expected: (status: number) => boolean,
    ) => {
      const floorBefore = floorFirst ? await floorRun() : undefined;
      const t = timing(await run());
      result.statuses.push(t.status);
      if (!expected(t.status)) throw new Error(`answered ${t.status}: ${t.text.slice(0, 300)}`);
      const floorMs =
        floorBefore ??
        (await floorRun().catch((error: Error) => {
          throw new Error(`the paired floor run failed: ${error.message}`);
        }));
      result.importMs.push(t.importMs);
      result.requestMs.push(t.requestMs);
      result.trips.push(t.trips);
      result.floorMs.push(floorMs);
      return t.text;
    };
    const one = async (index: number, run: number, made: Made) => {
      const result = results[index] as ColdRequest;
      const bundle = byName.get(result.bundle);
      // Which goes first alternates by run and by route, so neither side always starts the pair.
      const floorFirst = (run + index) % 2 === 0;
      try {
        if (!bundle || bundle.buildError) throw new Error('the bundle does not build');
        if (result.id === 'authorizer') {
          const op = byId.get('getWorkspace') as Operation;
          const request: RouteRequest = { method: 'GET', path: '', pathParameters: { workspace: fixed.ws } };
          const event = authorizerEvent(op, request, superAdmin);
          await paired(
            result,
            floorFirst,
            () => probe(bundle.file, event, 'authorize', env),
            (s) => s === 200,
          );
          return;
        }
        const c = cases[index - 2] as Case;
        const op = c.operation;
        const request = c.request(run, made);
        const auth = request.as ?? superAdmin;
        // The authorizer's context is made before the pair (API Gateway's own Lambda, not timed).
        const context = op.permission === 'public' ? null : await authorize(op, request, auth, run);
        const documented = Object.keys(op.responses)
          .map(Number)
          .filter((s) => s >= 200 && s < 300);
        const text = await paired(
          result,
          floorFirst,
          () => probe(bundle.file, proxyEvent(op, request, auth, context), 'request', env),
          (s) => documented.includes(s),
        );
        if (c.keep) c.keep(JSON.parse(text), made);
      } catch (error) {
        const message = (error as Error).message;
        // The first failure is kept; a later run that fails otherwise adds its reason.
        result.error = result.error ? result.error : `run ${run + 1}: ${message}`;
      }
    };
    // Warm the disk cache and the node binary (not measured).
    if (floorBundle)
      await probe(floorBundle.file, { pathParameters: { id: fixed.ws } }, 'request', env).catch(() => '');
    const rounds = async (indexes: number[], what: string) => {
      for (let run = 0; run < runs; run++) {
        progress(`cold requests: run ${run + 1}/${runs} (${indexes.length} ${what})`);
        const made: Made = new Map();
        let next = 0;
        const worker = async () => {
          for (let at = next++; at < indexes.length; at = next++) await one(indexes[at] as number, run, made);
        };
        await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, 2)) }, worker));
      }
    };
    // The floor's row is filled by the pairs: every measured run has its floor run beside it.
    const all = results
      .map((_, i) => i)
      .filter((i) => i > 0 && (!only || only.has((results[i] as ColdRequest).id)));
    await rounds(
      all.filter((i) => !LOADED.has((results[i] as ColdRequest).id)),
      'routes and the authorizer',
    );
    await loadImports();
    await rounds(
      all.filter((i) => LOADED.has((results[i] as ColdRequest).id)),
      'routes that need an import the host loaded',
    );
    return results;
  } finally {
    api.agent.destroy();
    await new Promise((r) => standIn.server.close(r));
  }
}

/**
 * What the section adds to a run's watchdog: ~125 fresh processes per run (and the authorizer's,
 * the first run), the items made beforehand and the host's loads, on a busy machine.
 */
export const COLD_REQUESTS_WATCHDOG_MS = 25 * 60_000;

/** Cold request ≤ this × the floor's (issue #27, target 2). */
export const COLD_REQUEST_MAX = 1.5;

/** Each run's ratio: the route's cold total over its paired floor run's. */
const pairRatios = (r: ColdRequest): number[] =>
  r.importMs.map((imp, i) => (imp + (r.requestMs[i] ?? 0)) / (r.floorMs[i] ?? Number.NaN));

/**
 * The section's table and its verdict line. Each route's runs are paired with floor runs (see
 * measureColdRequests); its verdict reads p10–p90 of the per-pair ratios as the paired latency
 * targets do (ADR 0140): PASS when all of it is at or under the target, FAIL when all of it is
 * above, no verdict (counted as FAIL) when it straddles the target.
 */
export function coldRequestSection(results: readonly ColdRequest[], verdicts: string[] = []): string {
  const floor = results.find((r) => r.id === 'FLOOR');
  const floorTotal = floor?.importMs.length ? median(floor.importMs) + median(floor.requestMs) : undefined;
  const measured = results.filter((r) => r !== floor);
  const within: string[] = [];
  const above: string[] = [];
  const straddling: string[] = [];
  const failed: string[] = [];
  const waits: string[] = [];
  const rows = results.map((r) => {
    const isFloor = r === floor;
    const kb = r.bytes ? (r.bytes / 1024).toFixed(1) : '';
    const name = isFloor ? `**${r.id}**` : r.id;
    if ((r.error && !isFloor) || !r.importMs.length) {
      if (!isFloor) failed.push(r.id);
      const why = (r.error ?? 'not measured').replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 240);
      return [
        name,
        `\`${r.bundle}\``,
        kb,
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        `${r.importMs.length}`,
        `**FAIL** (${why})`,
      ];
    }
    const imp = median(r.importMs);
    const req = median(r.requestMs);
    const trips = r.trips.filter((t): t is TripSummary => t !== undefined);
    const waited = trips.length ? median(trips.map((t) => t.waitMs)).toFixed(1) : '';
    const lead = [
      name,
      `\`${r.bundle}\``,
      kb,
      imp.toFixed(1),
      req.toFixed(1),
      waited,
      tripsCell(trips.at(-1)),
    ];
    if (isFloor) {
      const total = r.importMs.map((x, i) => x + (r.requestMs[i] ?? 0));
      return [...lead, median(total).toFixed(1), '', '1.00×', '', String(r.importMs.length), '—'];
    }
    const ratios = pairRatios(r);
    const s = spreadOf(ratios);
    const outcome = pairedOutcome(ratios, COLD_REQUEST_MAX);
    (outcome === 'pass' ? within : outcome === 'fail' ? above : straddling).push(r.id);
    const last = trips.at(-1);
    if (outcome === 'fail' && last)
      waits.push(
        `- **${r.id}**: first request ${req.toFixed(1)} ms, ${waited} ms of it waiting on its calls` +
          `${last.postgis ? ` (and ${last.postgis} PostGIS connection${last.postgis === 1 ? '' : 's'}, not in that wait)` : ''}: ` +
          `${last.sequence || 'no HTTP call'}`,
      );
    return [
      ...lead,
      (imp + req).toFixed(1),
      median(r.floorMs).toFixed(1),
      `${fixed(s.median)}×`,
      `${fixed(s.p10)}–${fixed(s.p90)}×`,
      String(ratios.length),
      outcome === 'pass' ? 'PASS' : outcome === 'fail' ? '**FAIL**' : '**FAIL** (straddles: no verdict)',
    ];
  });
  const all = within.length === measured.length;
  verdicts.push(
    `- cold request (import + first request) ≤ ${COLD_REQUEST_MAX}× the floor's, paired run by run` +
      `${floorTotal ? ` (the floor's median ${floorTotal.toFixed(1)} ms)` : ''}, every route and the authorizer: ` +
      `${all ? 'PASS' : '**FAIL**'} (${within.length} of ${measured.length} within by their whole p10–p90; ` +
      `${above.length} above it by all of it` +
      `${above.length ? ` (${above.join(', ')})` : ''}; ${straddling.length} straddle it, no verdict` +
      `${straddling.length ? ` (${straddling.join(', ')})` : ''}` +
      `${failed.length ? `; not measured: ${failed.join(', ')}` : ''})`,
  );
  const head = [
    'route',
    'bundle',
    'bundle KB',
    'import ms',
    'first request ms',
    'of it waiting on calls ms',
    'round trips (DynamoDB calls in rounds)',
    'cold total ms',
    'paired floor ms',
    '× floor (median pair)',
    'p10–p90',
    'pairs',
    `≤ ${COLD_REQUEST_MAX}×`,
  ];
  return [
    '### Cold requests: every route, import plus its first request',
    '',
    "Every route of the route table and the authorizer: a fresh `node` imports the route's bundle (as built above) " +
      "and answers one valid request with it, against this run's DynamoDB Local and embedded PostGIS — what a Lambda " +
      'does on its first invocation (the init, then the handler; its first connections to DynamoDB and PostGIS are in ' +
      'the request). The floor is `bench/floor-handler.ts` answering one GetItem the same way (import plus the request, a ' +
      "fresh connection). A route's authorizer context comes from the authorizer bundle, run before in a process of its " +
      "own and not timed (API Gateway runs the authorizer as a Lambda of its own; a change route's afresh for every run, " +
      'as the authorizer with TTL 0 runs for every request, since what it read — the workspace and its version — is ' +
      "handed to the route); the authorizer's row is its own cold " +
      'request (import plus the authorization of a getWorkspace request with the bootstrap API key). What a request needs ' +
      "is made beforehand through the local host's API (a layer, a key, a session, an import loaded to the state the " +
      'request needs; one throwaway item per run for each request that deletes or moves one on). A workflow a request ' +
      'starts goes to a Step Functions stand-in on 127.0.0.1 that accepts the StartExecution (the execution never runs). ' +
      '**Paired** (ADR 0140): every run of a route is one pair, the floor and the route one after the other in the same slot ' +
      '(the floor first in every other pair), each in a fresh process; the routes round-robin over the runs, two slots at ' +
      "a time. A pair's ratio is the route's cold total over its floor run's; the verdict reads p10–p90 of a route's " +
      'ratios (nearest rank): PASS when all of it is at or under the target, FAIL when all of it is above, no verdict ' +
      "(FAIL) when it straddles the target. The floor's row is every floor run of the section; the other timings are " +
      'medians. A run that does not answer a documented 2xx fails its route, with the status and body. Bundle KB: the ' +
      "route's own bundle, not the sidecars it loads on its path (they are in the cold time). **Round trips**: the fresh " +
      "process also records, through Node's diagnostics channel, every HTTP call of the request (DynamoDB, Step " +
      "Functions) with its start and end, and, by a wrapper around `net.Socket`'s connect, every TCP connection it opens " +
      '(PostGIS connections counted by port); a call that starts while another ' +
      'is in flight joins its round. "Waiting on calls" is the union of the calls\' intervals (the median run): the time ' +
      'the request spent waiting on DynamoDB Local and the Step Functions stand-in; the rest of the first request is the ' +
      "process's own work (and a PostGIS route's connection and queries).",
    '',
    `| ${head.join(' | ')} |`,
    `| ${head.map((_, i) => (i < 2 || i === 6 || i === head.length - 1 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    ...(waits.length
      ? [
          '',
          'The routes above the target by their whole spread, and the calls their first request waited on (the last ' +
            'run; rounds in order, calls made together joined by ‖):',
          '',
          ...waits,
        ]
      : []),
  ].join('\n');
}

/** The request of every route: the operation's example where it fits, with this run's ids. */
function requests(f: Fixed, perRun: PerRun[]): Record<string, Omit<Case, 'operation'>> {
  const k = kit(f, perRun);
  return {
    ...accessRequests(k),
    ...serviceRequests(k),
    ...styleRequests(k),
    ...importRequests(k),
    ...operationRequests(k),
  };
}
