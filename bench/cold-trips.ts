/**
 * A cold request's round trips (section 2): what its fresh process reported beside its timing
 * (`BENCH_TRIPS`, see cold-lambda.ts), read as what the request waited for — how many calls, in how
 * many rounds (a call that starts while another is in flight joins its round), and how long the
 * rounds kept the request waiting. The rest of the request is the process's own work.
 */

/** One HTTP call of the request: its X-Amz-Target (or method and path), start and end in ms. */
interface Call {
  target: string;
  start: number;
  end: number;
}

/** What the probe prints: the HTTP calls and the port of every TCP connection opened. */
interface Trips {
  calls: Call[];
  sockets: number[];
}

/** Ports of the run's services, to name the connections. */
export interface TripPorts {
  dynamo: number;
  stepFunctions: number;
  postgis: number;
}

/** A request's round trips, summed up. */
export interface TripSummary {
  /** DynamoDB calls, their rounds; Step Functions calls; PostGIS connections opened; other connections. */
  dynamo: number;
  rounds: number;
  stepFunctions: number;
  postgis: number;
  other: number;
  /** How long the request waited on HTTP calls (the union of their intervals), ms. */
  waitMs: number;
  /** The calls in order, rounds joined by ‖: `GetItem → Query‖Query → TransactWriteItems`. */
  sequence: string;
}

/** The operation's name out of an X-Amz-Target (`DynamoDB_20120810.GetItem` → `GetItem`). */
const opName = (target: string) => target.replace(/^[A-Za-z0-9_]+\./, '');

/** The summary of a probe's output, or undefined when it printed none. */
export function tripsOf(out: string, ports: TripPorts): TripSummary | undefined {
  const m = /^BENCH_TRIPS (.*)$/m.exec(out);
  if (!m?.[1]) return undefined;
  const trips = JSON.parse(m[1]) as Trips;
  const calls = [...trips.calls].sort((a, b) => a.start - b.start);
  const rounds: Call[][] = [];
  let waitMs = 0;
  let until = Number.NEGATIVE_INFINITY;
  for (const call of calls) {
    if (call.start < until) {
      (rounds.at(-1) as Call[]).push(call);
      waitMs += Math.max(0, call.end - until);
    } else {
      rounds.push([call]);
      waitMs += call.end - call.start;
    }
    until = Math.max(until, call.end);
  }
  const dynamoCalls = calls.filter((c) => c.target.startsWith('DynamoDB'));
  return {
    dynamo: dynamoCalls.length,
    rounds: rounds.filter((r) => r.some((c) => c.target.startsWith('DynamoDB'))).length,
    stepFunctions: calls.filter((c) => c.target.startsWith('AWSStepFunctions')).length,
    postgis: trips.sockets.filter((p) => p === ports.postgis).length,
    other: trips.sockets.filter((p) => p !== ports.postgis && p !== ports.dynamo && p !== ports.stepFunctions)
      .length,
    waitMs,
    sequence: rounds.map((r) => r.map((c) => opName(c.target)).join('‖')).join(' → '),
  };
}

/** A table cell: `13 in 8 rounds · SFN 1 · PostGIS 1`. */
export function tripsCell(t: TripSummary | undefined): string {
  if (!t) return '';
  const parts = [t.dynamo ? `${t.dynamo} in ${t.rounds} round${t.rounds === 1 ? '' : 's'}` : '0'];
  if (t.stepFunctions) parts.push(`SFN ${t.stepFunctions}`);
  if (t.postgis) parts.push(`PostGIS ${t.postgis}`);
  if (t.other) parts.push(`other ${t.other}`);
  return parts.join(' · ');
}
