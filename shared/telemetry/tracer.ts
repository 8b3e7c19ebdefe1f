import { getStringFromEnv } from '@aws-lambda-powertools/commons/utils/env';
import type { Tracer } from '@aws-lambda-powertools/tracer';

/*
 * Traces (ADR 0092): Powertools Tracer over the X-Ray SDK, on where Powertools turns it on — in a
 * Lambda execution environment (AWS_EXECUTION_ENV), not under SAM, unless POWERTOOLS_TRACE_ENABLED
 * is false. Anywhere else the tracer is not even loaded: the X-Ray SDK installs a process-wide
 * async hook (cls-hooked) when it is imported, which the local host and the tests don't pay for.
 * In a bundle it is not even there: it ships as a sidecar beside the bundle (`tracer.sidecar.mjs`,
 * ADR 0100), loaded during the init phase only where tracing is on.
 * Outbound HTTP(S) is not captured: URLs of import sources may carry credentials.
 */

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

function tracingWanted(): boolean {
  if (getStringFromEnv({ key: 'POWERTOOLS_TRACE_ENABLED', defaultValue: '' }).toLowerCase() === 'false')
    return false;
  if (getStringFromEnv({ key: 'AWS_SAM_LOCAL', defaultValue: '' }) !== '') return false;
  return getStringFromEnv({ key: 'AWS_EXECUTION_ENV', defaultValue: '' }) !== '';
}

/** The process's tracer where tracing is on; undefined elsewhere (every helper below is then a no-op). */
/** The Powertools Tracer module: the sidecar beside the bundle, or the package when run from source. */
function tracerModule(): Promise<{ Tracer: typeof Tracer }> {
  return typeof GEOPLANE_BUNDLE !== 'undefined'
    ? import(new URL('./tracer.sidecar.mjs', import.meta.url).href)
    : import('@aws-lambda-powertools/tracer');
}

export const tracer: Tracer | undefined = tracingWanted()
  ? new (await tracerModule()).Tracer({ captureHTTPsRequests: false })
  : undefined;

/** The segment type the tracer hands out (a Segment or a Subsegment of the X-Ray SDK). */
export type TraceSegment = NonNullable<ReturnType<Tracer['getSegment']>>;

/** An AWS SDK v3 client whose calls become X-Ray subsegments (the client itself when tracing is off). */
export function captureClient<T>(client: T): T {
  return tracer?.isTracingEnabled() ? tracer.captureAWSv3Client(client) : client;
}

/**
 * Runs `work` in a subsegment `name` of the current segment, closed when it settles (flagged as an
 * error when it throws). The current segment is not switched to it, so units of work running
 * concurrently don't nest into each other: for work that makes no traced calls itself (a database
 * connection's queries). `annotations` are plain identifiers, never secrets. A failure is flagged
 * as a fault without its message (the log line has the cause).
 */
export async function inSubsegment<T>(
  name: string,
  work: () => Promise<T>,
  annotations: Record<string, string | number | boolean> = {},
): Promise<T> {
  const parent = tracer?.isTracingEnabled() ? tracer.getSegment() : undefined;
  if (!parent) return work();
  const sub = parent.addNewSubsegment(name);
  for (const [key, value] of Object.entries(annotations)) sub.addAnnotation(key, value);
  try {
    return await work();
  } catch (error) {
    sub.addFaultFlag();
    throw error;
  } finally {
    sub.close();
  }
}

/** The subsegment of one API request, current while it runs (closed by `close`). */
export interface RequestTrace {
  /** An indexed annotation: identifiers only (operation, workspace), never a secret. */
  annotate(key: string, value: string | number | boolean): void;
  /** Records the answer's status (4xx error, 429 throttle, 5xx fault) and ends the subsegment. */
  close(status: number): void;
}

/**
 * Opens `## <name>` under the invocation's segment and makes it current, so the AWS SDK's and
 * PostGIS' subsegments of the request nest under it; annotated with `ColdStart` and `Service` like
 * Powertools' own handler middleware. Neither the response nor the error is recorded (an answer
 * may hold a created key; the log line has the cause). Undefined where tracing is off.
 */
export function traceRequest(name: string): RequestTrace | undefined {
  const t = tracer;
  const parent = t?.isTracingEnabled() ? t.getSegment() : undefined;
  if (!t || !parent) return undefined;
  const sub = parent.addNewSubsegment(`## ${name}`);
  t.setSegment(sub);
  t.annotateColdStart();
  t.addServiceNameAnnotation();
  let open = true;
  return {
    annotate: (key, value) => sub.addAnnotation(key, value),
    close: (status) => {
      if (!open) return;
      open = false;
      sub.addAnnotation('status', status);
      if (status === 429) sub.addThrottleFlag();
      if (status >= 500) sub.addFaultFlag();
      else if (status >= 400) sub.addErrorFlag();
      sub.close();
      t.setSegment(parent);
    },
  };
}
