import { getStringFromEnv, isRunningInLambda } from '@aws-lambda-powertools/commons/utils/env';

/*
 * Metrics (ADR 0092): CloudWatch Embedded Metric Format — one JSON line on stdout that CloudWatch
 * Logs turns into metrics, so no IAM and no API call. Written here, in the shape Powertools
 * Metrics writes, without Powertools Metrics (ADR 0100: 10 KB in every bundle for two fixed
 * documents whose names and units are constants of this file). Namespace from
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

/** Where the documents go: namespace and the `service` dimension, read once. */
interface Sink {
  namespace: string;
  service: string;
}

let instance: Sink | null | undefined;

/** The process's metrics settings, read on first use (null when metrics are off). */
function metrics(): Sink | null {
  if (instance === undefined) {
    instance = enabled()
      ? {
          namespace: getStringFromEnv({
            key: 'POWERTOOLS_METRICS_NAMESPACE',
            defaultValue: DEFAULT_NAMESPACE,
          }),
          // Powertools' default when POWERTOOLS_SERVICE_NAME is unset.
          service: getStringFromEnv({ key: 'POWERTOOLS_SERVICE_NAME', defaultValue: 'service_undefined' }),
        }
      : null;
  }
  return instance;
}

type Unit = 'Count' | 'Milliseconds';

/**
 * Writes one EMF document: the dimensions (`service` first) and the metrics, each with its unit,
 * as one line on stdout (CloudWatch Logs reads it from the function's log stream).
 */
function publish(
  sink: Sink,
  dimensions: Record<string, string>,
  values: readonly (readonly [name: string, unit: Unit, value: number])[],
): void {
  const dims = { service: sink.service, ...dimensions };
  const doc = {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [
        {
          Namespace: sink.namespace,
          Dimensions: [Object.keys(dims)],
          Metrics: values.map(([Name, Unit]) => ({ Name, Unit })),
        },
      ],
    },
    ...dims,
    ...Object.fromEntries(values.map(([name, , value]) => [name, value])),
  };
  process.stdout.write(`${JSON.stringify(doc)}\n`);
}

/**
 * One EMF line for one API request, dimension `operation`: `Requests` 1, `Latency` in ms, and
 * `4xx`, `5xx`, `Throttled` as 0 or 1 (so their Average is a rate and their Sum a count). One
 * document built and written at once: requests running concurrently in one process (the local
 * host) can't mix their values.
 */
export function recordRequest(outcome: RequestOutcome): void {
  const m = metrics();
  if (!m) return;
  const { status } = outcome;
  publish(m, { operation: outcome.operation }, [
    ['Requests', 'Count', 1],
    ['Latency', 'Milliseconds', Math.round(outcome.latencyMs * 100) / 100],
    ['4xx', 'Count', status >= 400 && status < 500 ? 1 : 0],
    ['5xx', 'Count', status >= 500 ? 1 : 0],
    ['Throttled', 'Count', outcome.throttled ? 1 : 0],
  ]);
}

/** One EMF line for the end of a workflow run: `WorkflowSucceeded` or `WorkflowFailed`, dimension `workflow`. */
export function recordWorkflowOutcome(workflow: WorkflowName, succeeded: boolean): void {
  const m = metrics();
  if (!m) return;
  publish(m, { workflow }, [[succeeded ? 'WorkflowSucceeded' : 'WorkflowFailed', 'Count', 1]]);
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
