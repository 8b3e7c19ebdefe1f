import type { Agent } from 'node:https';
import { type LatencyCase, once } from './latency.ts';
import { fixed, median, percentile, table, verdict } from './stats.ts';

/**
 * Paired verdicts (issue #27 target 6, ADR 0140). A margin target compares A with B; measured in
 * separate blocks, the two see different moments of a shared machine (the floor itself moves
 * 2–4 ms between runs), and the verdict flips. So A and B are interleaved, A B A B … (B A B A … in
 * every other round, so neither side always goes first), over the same keep-alive agent, for many
 * rounds; each round gives one ratio, median(A) / median(B), and the verdict reads the spread of
 * those ratios: PASS when all of its p10–p90 is at or under the target, FAIL when all of it is
 * above, and otherwise FAIL with no verdict ("the spread straddles the target").
 */
export interface Pair {
  id: string;
  /** What the verdict line says: `getWorkspace (API key) p50 ≤ 1.5× floor`. */
  what: string;
  a: LatencyCase;
  b: LatencyCase;
  /** The target: the ratio A / B at most. */
  max: number;
}

export interface PairResult {
  pair: Pair;
  /** One ratio per round: median of A over median of B in that round. */
  ratios: number[];
  a: number[];
  b: number[];
  reconnects: number;
}

export interface PairPlan {
  rounds: number;
  /** Requests of each side per round (A and B alternate, so 2 × perSide per pair and round). */
  perSide: number;
  /** Rounds stop starting after this long, but never before `minRounds`. */
  budgetMs: number;
  minRounds: number;
}

/** The spread the verdict reads: p10 and p90 of the per-round ratios (nearest rank), with min, median, max. */
export function spreadOf(ratios: readonly number[]): {
  min: number;
  p10: number;
  median: number;
  p90: number;
  max: number;
} {
  return {
    min: ratios.length ? Math.min(...ratios) : Number.NaN,
    p10: percentile(ratios, 10),
    median: median(ratios),
    p90: percentile(ratios, 90),
    max: ratios.length ? Math.max(...ratios) : Number.NaN,
  };
}

/** `pass`, `fail`, or `straddles` (no verdict) by the p10–p90 spread against the target. */
export function pairedOutcome(ratios: readonly number[], max: number): 'pass' | 'fail' | 'straddles' {
  const s = spreadOf(ratios);
  if (!Number.isFinite(s.p10) || !Number.isFinite(s.p90)) return 'straddles';
  if (s.p90 <= max) return 'pass';
  if (s.p10 > max) return 'fail';
  return 'straddles';
}

/** Interleaves every pair's A and B, round after round (the pair order rotating per round). */
export async function measurePairs(
  agent: Agent,
  pairs: readonly Pair[],
  plan: PairPlan,
  progress: (s: string) => void,
): Promise<{ results: PairResult[]; rounds: number; truncated: boolean }> {
  const results: PairResult[] = pairs.map((pair) => ({ pair, ratios: [], a: [], b: [], reconnects: 0 }));
  const started = Date.now();
  let rounds = 0;
  let truncated = false;
  for (let round = 0; round < plan.rounds; round++) {
    if (round >= plan.minRounds && Date.now() - started > plan.budgetMs) {
      truncated = true;
      break;
    }
    if (round % 5 === 0) progress(`paired: round ${round + 1}/${plan.rounds}`);
    for (let k = 0; k < pairs.length; k++) {
      const result = results[(k + round) % pairs.length] as PairResult;
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < plan.perSide; i++) {
        const order = round % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const);
        for (const side of order) {
          const reply = await once(agent, result.pair[side]);
          (side === 'a' ? a : b).push(reply.ms);
          if (!reply.reused) result.reconnects++;
        }
      }
      result.a.push(...a);
      result.b.push(...b);
      result.ratios.push(median(a) / median(b));
    }
    rounds++;
  }
  return { results, rounds, truncated };
}

/** The verdict line of a pair. */
export function pairedVerdict(r: PairResult): string {
  const s = spreadOf(r.ratios);
  const outcome = pairedOutcome(r.ratios, r.pair.max);
  const spread = `${fixed(s.p10)}–${fixed(s.p90)}×`;
  const detail =
    `p10–p90 of ${r.ratios.length} paired rounds ${spread}, median ${fixed(s.median)}×; ` +
    `p50 ${fixed(median(r.a))} ms vs ${fixed(median(r.b))} ms`;
  if (outcome === 'straddles')
    return `- ${r.pair.what}, paired: ${verdict(false)} (spread straddles the target (${spread}): no verdict; median ${fixed(s.median)}×)`;
  return `- ${r.pair.what}, paired: ${verdict(outcome === 'pass')} (${detail})`;
}

/** The paired table of section 1 and its verdict lines (pushed onto `lines`). */
export function pairedSection(
  outcome: { results: PairResult[]; rounds: number; truncated: boolean },
  plan: PairPlan,
  lines: string[],
): string {
  const rows = outcome.results.map((r) => {
    const s = spreadOf(r.ratios);
    const result = pairedOutcome(r.ratios, r.pair.max);
    lines.push(pairedVerdict(r));
    return [
      r.pair.what,
      String(r.ratios.length),
      `${r.a.length} + ${r.b.length}`,
      fixed(median(r.a)),
      fixed(median(r.b)),
      fixed(s.min),
      fixed(s.p10),
      fixed(s.median),
      fixed(s.p90),
      fixed(s.max),
      `≤ ${r.pair.max}×`,
      result === 'straddles' ? '**FAIL** (straddles: no verdict)' : verdict(result === 'pass'),
    ];
  });
  const reconnects = outcome.results.filter((r) => r.reconnects > 0);
  return [
    '### Paired verdicts (ADR 0140)',
    '',
    `Each target's A and B interleaved request by request (A B A B …, B A B A … in every other round) over the same ` +
      `keep-alive agent, ${plan.perSide} requests of each side per pair and round, up to ${plan.rounds} rounds ` +
      `(the pair order rotating per round; at least ${plan.minRounds}, then until ${fixed(plan.budgetMs / 1000, 0)} s). ` +
      'Each round gives one ratio, median(A) / median(B) of that round; the table shows their spread. ' +
      '**The verdict reads p10–p90 of the per-round ratios** (nearest rank): PASS when all of it is at or under the target, ' +
      'FAIL when all of it is above, and FAIL with "no verdict" when it straddles the target. ' +
      'The unpaired table above is for orientation: its ratios compare blocks measured at different moments.',
    '',
    table(
      [
        'target (A vs B)',
        'rounds',
        'n (A + B)',
        'A p50',
        'B p50',
        'ratio min',
        'p10',
        'median',
        'p90',
        'max',
        'target',
        'result',
      ],
      rows,
      '---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---',
    ),
    '',
    ...(outcome.truncated ? [`Stopped at the time budget after ${outcome.rounds} rounds.\n`] : []),
    reconnects.length
      ? `New connections during the paired rounds: ${reconnects.map((r) => `${r.pair.id} ${r.reconnects}`).join(', ')}.`
      : 'No paired request had to open a new connection.',
  ].join('\n');
}
