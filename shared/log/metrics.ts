import { getStringFromEnv, isRunningInLambda } from '@aws-lambda-powertools/commons/utils/env';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/*
 * Metrics (ADR 0092): Powertools Metrics, CloudWatch Embedded Metric Format — one JSON line on
 * stdout that CloudWatch Logs turns into metrics, so no IAM and no API call. Namespace from
 * POWERTOOLS_METRICS_NAMESPACE (default `GeoPlane`), the `service` dimension from
 * POWERTOOLS_SERVICE_NAME. Like the tracer, on only where the lines mean something: in Lambda,
 * unless POWERTOOLS_METRICS_DISABLED says otherwise (the local host sets it to true; an operator
 * may set it to false to see the lines). These are Powertools' own variables, read by Powertools'
 * own helpers, as the logger reads its level.
 */

/** The namespace when POWERTOOLS_METRICS_NAMESPACE is not set. */
export const DEFAULT_NAMESPACE = 'GeoPlane';

/** What a finished request is counted as: its operation, its status, how long it took, whether it was throttled. */
export interface RequestOutcome {
  operation: string;
  status: number;
  latencyMs: number;
  throttled: boolean;
}

/** A workflow with outcome metrics. */
export type WorkflowName = 'deletion' | 'import';

function enabled(): boolean {
  const setting = getStringFromEnv({ key: 'POWERTOOLS_METRICS_DISABLED', defaultValue: '' })
    .trim()
    .toLowerCase();
  if (setting !== '') return !['1', 'y', 'yes', 't', 'true', 'on'].includes(setting);
  return isRunningInLambda();
}

let instance: Metrics | null | undefined;

/** The process's Metrics, built on first use (null when metrics are off). */
function metrics(): Metrics | null {
  if (instance === undefined) {
    instance = enabled()
      ? new Metrics({
          namespace: getStringFromEnv({
            key: 'POWERTOOLS_METRICS_NAMESPACE',
            defaultValue: DEFAULT_NAMESPACE,
          }),
        })
      : null;
  }
  return instance;
}

/**
 * One EMF line for one API request, dimension `operation`: `Requests` 1, `Latency` in ms, and
 * `4xx`, `5xx`, `Throttled` as 0 or 1 (so their Average is a rate and their Sum a count).
 * Synchronous from the first dimension to the flush: requests running concurrently in one process
 * (the local host) can't mix their values.
 */
export function recordRequest(outcome: RequestOutcome): void {
  const m = metrics();
  if (!m) return;
  const { status } = outcome;
  m.addDimension('operation', outcome.operation);
  m.addMetric('Requests', MetricUnit.Count, 1);
  m.addMetric('Latency', MetricUnit.Milliseconds, Math.round(outcome.latencyMs * 100) / 100);
  m.addMetric('4xx', MetricUnit.Count, status >= 400 && status < 500 ? 1 : 0);
  m.addMetric('5xx', MetricUnit.Count, status >= 500 ? 1 : 0);
  m.addMetric('Throttled', MetricUnit.Count, outcome.throttled ? 1 : 0);
  m.publishStoredMetrics();
}

/** One EMF line for the end of a workflow run: `WorkflowSucceeded` or `WorkflowFailed`, dimension `workflow`. */
export function recordWorkflowOutcome(workflow: WorkflowName, succeeded: boolean): void {
  const m = metrics();
  if (!m) return;
  const single = m.singleMetric();
  single.addDimension('workflow', workflow);
  single.addMetric(succeeded ? 'WorkflowSucceeded' : 'WorkflowFailed', MetricUnit.Count, 1);
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
