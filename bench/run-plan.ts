/**
 * What `npm run bench` (bench/run.ts) measures how often and for how long, and the run's clock: its
 * start, the load average then, the progress lines and the time budgets derived from them.
 */
import { loadavg } from 'node:os';
import type { PairPlan } from './paired.ts';

// ---- plan (bounded in count and in time) --------------------------------------------------------
export const WORKSPACES = 100;
export const LIST_LIMIT = 50;
export const LAYER_LIST_LIMIT = 100;
/** Services in the demo workspace for listServices: demo-postgis and 9 more. */
export const SERVICES = 10;
export const WARMUP = 30;
export const ROUNDS = 10;
export const PER_ROUND = 50; // ROUNDS × PER_ROUND = 500 measured requests per case at most (1000 before 0021)
/** Validated creates run against PGlite (one backend): fewer, 10 rounds × 20 = 200 at most. */
export const VALIDATED_WARMUP = 10;
export const VALIDATED_PER_ROUND = 20;
const LATENCY_BUDGET_MS = 75_000;
/** Section 1 alone (`BENCH_ONLY=latency`): a shorter unpaired block, the paired rounds as in the full run. */
export const ALONE_LATENCY_BUDGET_MS = 40_000;
/** The paired verdicts (ADR 0140): up to 30 rounds of 20 + 20 interleaved requests per target, at least 20. */
export const PAIRED: PairPlan = { rounds: 30, perSide: 20, budgetMs: 60_000, minRounds: 20 };
/** The lists' phase profile: in-process requests per list after its warm-up. */
export const PHASES = { warmup: 30, requests: 150 };
export const SCALING = { seedBudgetMs: 150_000, warmup: 10, rounds: 10, perRound: 20 };
export const SCALING_BUDGET_MS = 60_000;
/** The whole run aims to end by then (section 4 adds ~90 s): on a busy machine the measured rounds shrink to their minimum (25 s and 40 s). */
const RUN_TARGET_MS = 440_000;
export const IMPORT_RUNS = 5;
/**
 * Runs per cold request case (import plus the first request, section 2), each a pair of fresh
 * processes (the floor's and the route's): ten, so that p10–p90 of the pairs' ratios (nearest
 * rank) leaves out the one lowest and the one highest pair rather than being their min–max.
 */
export const COLD_REQUEST_RUNS = 10;
export const IMPORT_BUDGET_MS = 45_000;
export const WATCHDOG_MS = 10 * 60_000;

export const startedAt = Date.now();
export const loadAtStart = loadavg();
export const progress = (s: string) =>
  process.stderr.write(`[bench ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${s}\n`);

/** What is left of the run's time target for section 1's measured rounds (they start after the warm-up). */
export function latencyBudget(): number {
  const left = RUN_TARGET_MS - (Date.now() - startedAt) - 10_000;
  return Math.max(40_000, Math.min(LATENCY_BUDGET_MS, left));
}

/** The same for the scaling run's rounds, which come first and leave section 1 its share. */
export function scalingBudget(): number {
  // Section 1's warm-up (~15–25 s) and its rounds come after: the scaling rounds get 40 % of the rest.
  const left = RUN_TARGET_MS - (Date.now() - startedAt) - 35_000;
  return Math.max(25_000, Math.min(SCALING_BUDGET_MS, 0.4 * left));
}
