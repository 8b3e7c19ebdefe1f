import { getStringFromEnv, isRunningInLambda } from '@aws-lambda-powertools/commons/utils/env';
import { logger } from '#log/logger.ts';

/*
 * Request and workflow measurements (ADR 0092, amended by ADR 0115): one structured log line each,
 * not CloudWatch metrics. Per-operation custom metrics (5 per operation) were the largest line of
 * the bill and no alarm or dashboard read them; the same values as log fields cost only their
 * ingestion and stay queryable (CloudWatch Logs Insights, or a metric filter an operator adds).
 * The alarms read AWS's own metrics (API Gateway, Lambda, DynamoDB, Step Functions, SQS).
 *
 * Written where they mean something: in Lambda, unless POWERTOOLS_METRICS_DISABLED says otherwise
 * (the local host sets it to true; an operator may set it to false to see the lines), as before.
 */

/** The message of the line each finished API request writes. */
export const REQUEST_MEASURED = 'request measured';

/** The message of the line each finished workflow run writes. */
export const WORKFLOW_FINISHED = 'workflow finished';

/** What a finished request is counted as: its operation, its status, how long it took, whether it was throttled. */
export interface RequestOutcome {
  operation: string;
  status: number;
  latencyMs: number;
  throttled: boolean;
}

/** A workflow with outcome lines. */
export type WorkflowName = 'deletion' | 'import';

function enabled(): boolean {
  const setting = getStringFromEnv({ key: 'POWERTOOLS_METRICS_DISABLED', defaultValue: '' })
    .trim()
    .toLowerCase();
  if (setting !== '') return !['1', 'y', 'yes', 't', 'true', 'on'].includes(setting);
  return isRunningInLambda();
}

/** The status class of an answer (`2xx`, `4xx`, `5xx`, …). */
function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/**
 * One INFO line for one API request: `operation`, `status`, its class (`status_class`),
 * `latency_ms` and `throttled` (the store marks an outage caused by DynamoDB throttling).
 * Logs Insights gives the former metrics, e.g. `stats count(*), pct(latency_ms, 99) by operation`.
 */
export function recordRequest(outcome: RequestOutcome): void {
  if (!enabled()) return;
  logger.info(REQUEST_MEASURED, {
    operation: outcome.operation,
    status: outcome.status,
    status_class: statusClass(outcome.status),
    latency_ms: Math.round(outcome.latencyMs * 100) / 100,
    throttled: outcome.throttled,
  });
}

/** One INFO line for the end of a workflow run: `workflow` and `outcome` (`succeeded` or `failed`). */
export function recordWorkflowOutcome(workflow: WorkflowName, succeeded: boolean): void {
  if (!enabled()) return;
  logger.info(WORKFLOW_FINISHED, { workflow, outcome: succeeded ? 'succeeded' : 'failed' });
}

/** Marks errors caused by throttling; a symbol, so the mark never reaches a log line or an answer. */
const THROTTLED = Symbol.for('geoplane.throttled');

/**
 * Marks `error` as caused by throttling (the store marks its outage when DynamoDB throttled), so
 * the edge can count it without knowing the store. Returns the error.
 */
export function markThrottled<E extends Error>(error: E): E {
  Object.defineProperty(error, THROTTLED, { value: true, enumerable: false });
  return error;
}

/** True when `error`, or an error in its chain of causes, was marked by `markThrottled`. */
export function isThrottled(error: unknown): boolean {
  let current: unknown = error;
  for (let i = 0; i < 5 && current instanceof Error; i++) {
    if ((current as Error & { [THROTTLED]?: boolean })[THROTTLED] === true) return true;
    current = current.cause;
  }
  return false;
}
