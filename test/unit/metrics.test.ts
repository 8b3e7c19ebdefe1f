import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '../../shared/api/operation.ts';
import {
  type ChunkedWorkflow,
  type OperationLedger,
  recordFailure,
  runBatch,
  type WorkflowOperation,
} from '../../shared/domain/chunked-workflow.ts';
import type { ImportJob } from '../../shared/domain/import-model.ts';
import { fail, type ImportStepDeps, runImportStep } from '../../shared/domain/import-steps.ts';
import { created } from '../../shared/http/responses.ts';
import { storeCall } from '../../shared/store/errors.ts';
import { makeChangeHandler, makeHandler as makeReadHandler } from '../../shared/wiring/handler.ts';

/** The wired factory of the operation's kind (reads and changes have their own; ADR 0094). */
// No table here: a refusal's audit record (ADR 0094) goes nowhere (test/e2e/audit.test.ts covers it).
vi.mock('../../shared/store/repositories.ts', async (original) => ({
  ...(await original<typeof import('../../shared/store/repositories.ts')>()),
  auditTrail: () => ({ recordRefusal: async () => {}, list: async () => ({ items: [] }) }),
}));

const makeHandler: typeof makeReadHandler = (op, fn) =>
  op.method === 'GET' ? makeReadHandler(op, fn) : makeChangeHandler(op, fn);

import { workflowLog } from '../../shared/wiring/workflows.ts';

// As a Lambda with metrics on (ADR 0092): the process's Metrics is built on first use, after this.
vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', undefined);
vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'geoplane-test');

/** One EMF document as Powertools writes it. */
interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [field: string]: unknown;
}

let written: string[] = [];

beforeEach(() => {
  written = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The EMF lines written to stdout since the test began. */
function emf(): Emf[] {
  return written
    .join('')
    .split('\n')
    .filter((line) => line.includes('"CloudWatchMetrics"'))
    .map((line) => JSON.parse(line) as Emf);
}

/** The unit of each metric of a document. */
function units(doc: Emf): Record<string, string> {
  return Object.fromEntries(doc._aws.CloudWatchMetrics[0]?.Metrics.map((m) => [m.Name, m.Unit]) ?? []);
}

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/rest-proxy-event.json', import.meta.url), 'utf8'),
) as APIGatewayProxyEvent;

function event(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return { ...structuredClone(fixture), ...overrides };
}

const context = {
  awsRequestId: 'lambda-request',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

const operation = defineOperation({
  operationId: 'metricsCreate',
  method: 'POST',
  path: '/api/v1/workspaces',
  handler: 'test',
  permission: 'global',
  summary: 'test',
  tags: ['test'],
  request: { body: z.strictObject({ name: z.string().check(z.minLength(1)) }) },
  responses: { 201: { description: 'created' } },
  data: [],
});

/** A DynamoDB error as the SDK throws it. */
function awsError(name: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} from DynamoDB`), {
    name,
    $metadata: { httpStatusCode: 400 },
    ...extra,
  });
}

/** The handler: answers by the body's name — created, a bug, or the store refusing the call. */
const handler = makeHandler(operation, async ({ body }) => {
  if (body.name === 'bug') throw new Error('a bug');
  if (body.name === 'throttled') await storeCall(() => Promise.reject(awsError('ThrottlingException')));
  if (body.name === 'tx-throttled') {
    await storeCall(() =>
      Promise.reject(
        awsError('TransactionCanceledException', {
          CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }],
        }),
      ),
    );
  }
  if (body.name === 'refused') {
    await storeCall(() =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    );
  }
  return created({ name: body.name }, '/api/v1/workspaces/x');
});

async function invoke(body: string) {
  return handler(event({ body }), context);
}

describe('request metrics (ADR 0092)', () => {
  it.each([
    ['a 201', '{"name":"ok"}', 201, { '4xx': 0, '5xx': 0 }],
    ['a 400', '{"name":', 400, { '4xx': 1, '5xx': 0 }],
    ['a 500', '{"name":"bug"}', 500, { '4xx': 0, '5xx': 1 }],
  ])(
    'writes one EMF line for %s: Requests, Latency, 4xx, 5xx, Throttled by operation',
    async (_case, body, status, counts) => {
      const result = await invoke(body);

      expect(result.statusCode).toBe(status);
      const docs = emf();
      expect(docs).toHaveLength(1);
      const doc = docs[0] as Emf;
      expect(doc._aws.CloudWatchMetrics).toEqual([
        {
          Namespace: 'GeoPlane',
          Dimensions: [['service', 'operation']],
          Metrics: expect.any(Array),
        },
      ]);
      expect(units(doc)).toEqual({
        Requests: 'Count',
        Latency: 'Milliseconds',
        '4xx': 'Count',
        '5xx': 'Count',
        Throttled: 'Count',
      });
      expect(doc).toMatchObject({
        service: 'geoplane-test',
        operation: 'metricsCreate',
        Requests: 1,
        Throttled: 0,
        ...counts,
      });
      expect(doc.Latency).toBeTypeOf('number');
      expect(doc.Latency as number).toBeGreaterThanOrEqual(0);
      expect(doc.Latency as number).toBeLessThan(5_000);
    },
  );

  it.each([
    ['a throttled call', 'throttled', 1],
    ['a transaction cancelled for throttling', 'tx-throttled', 1],
    ['a refused connection (an outage, not a throttle)', 'refused', 0],
  ])('answers 503 for %s (%s) and counts Throttled = %i', async (_case, name, throttled) => {
    const result = await invoke(JSON.stringify({ name }));

    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body).reason).toBe('store_unavailable');
    expect(emf()).toHaveLength(1);
    expect(emf()[0]).toMatchObject({
      operation: 'metricsCreate',
      Requests: 1,
      '5xx': 1,
      '4xx': 0,
      Throttled: throttled,
    });
  });

  it('keeps the throttle mark out of the answer', async () => {
    const result = await invoke('{"name":"throttled"}');

    expect(result.body).not.toMatch(/throttl/i);
  });
});

type Phase = 'work' | 'done';
type Op = WorkflowOperation<Phase>;

/** A deletion-like workflow on the engine whose operation is already at its last phase. */
function deletion(op: Partial<Op>): ChunkedWorkflow<Op> {
  const state = { id: 'op-1', status: 'running', phase: 'done', attempt_count: 1, ...op } as Op;
  const ledger: OperationLedger<Op> = {
    load: async () => ({ ...state }),
    markRunning: async () => true,
    advance: async () => {},
    settle: async () => {},
    markFailed: async () => {
      state.status = 'failed';
    },
  };
  return {
    label: 'Deletion',
    kind: 'deletion',
    log: workflowLog(),
    ledger,
    done: 'done',
    next: () => 'done',
    phase: () => ({ run: async () => true }),
  };
}

/** An import job of run 1 and the step's ports around it (only what these steps touch). */
function importRun(job: Partial<ImportJob>) {
  const current = {
    id: 'imp-1',
    workspace_id: 'ws-1',
    run: 1,
    version: 1,
    phase: 'load',
    service_name: 'roads',
    updated_at: new Date(0).toISOString(),
    ...job,
  } as ImportJob;
  const deps = {
    repo: { find: async () => current, save: async () => {} },
    engine: {
      dropStaging: async () => {},
      publishTables: async () => {},
      servingConnection: async () => ({ schemas: ['import_1'] }),
      tableName: (id: string) => id,
    },
    services: {
      findByName: async () => ({ id: 'svc-1', type: 'postgis', connection: { schemas: ['import_1'] } }),
    },
    log: workflowLog(),
  } as unknown as ImportStepDeps;
  return { deps, input: { import_id: current.id, workspace_id: current.workspace_id, run: 1 } };
}

describe('workflow outcome metrics (ADR 0092)', () => {
  it('counts a deletion that completes as WorkflowSucceeded', async () => {
    await runBatch(deletion({}), 'op-1', 1, 1_000);

    expect(emf()).toHaveLength(1);
    expect(emf()[0]).toMatchObject({ workflow: 'deletion', WorkflowSucceeded: 1, service: 'geoplane-test' });
    expect(emf()[0]?._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'GeoPlane',
      Dimensions: [['service', 'workflow']],
    });
  });

  it('counts a deletion whose failure is recorded as WorkflowFailed, and a stale execution not at all', async () => {
    await recordFailure(deletion({ phase: 'work' }), 'op-1', 1, 'Error: boom');
    await recordFailure(deletion({ phase: 'work', attempt_count: 2 }), 'op-1', 1, 'Error: stale');

    expect(emf()).toHaveLength(1);
    expect(emf()[0]).toMatchObject({ workflow: 'deletion', WorkflowFailed: 1 });
    expect(emf()[0]).not.toHaveProperty('WorkflowSucceeded');
  });

  it('counts a published import as WorkflowSucceeded and a failed one as WorkflowFailed', async () => {
    const published = importRun({ status: 'publishing', service_id: 'svc-1', plan: { layers: [] } as never });
    await runImportStep(published.deps, published.input, 1_000);
    const failed = importRun({ status: 'running' });
    await fail(failed.deps, failed.input, 'the file is not GeoJSON');

    expect(emf().map((d) => [d.workflow, d.WorkflowSucceeded ?? 0, d.WorkflowFailed ?? 0])).toEqual([
      ['import', 1, 0],
      ['import', 0, 1],
    ]);
  });
});

describe('where metrics are written', () => {
  async function freshMetrics() {
    vi.resetModules();
    return import('../../shared/log/metrics.ts');
  }
  const outcome = { operation: 'x', status: 200, latencyMs: 1, throttled: false };

  afterEach(() => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', undefined);
  });

  it('writes nothing outside Lambda unless POWERTOOLS_METRICS_DISABLED=false asks for it', async () => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', undefined);
    (await freshMetrics()).recordRequest(outcome);
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    (await freshMetrics()).recordRequest(outcome);

    expect(emf()).toHaveLength(0);
  });

  it('writes in Lambda by default, and not when POWERTOOLS_METRICS_DISABLED=true', async () => {
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', undefined);
    (await freshMetrics()).recordRequest(outcome);
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    (await freshMetrics()).recordRequest(outcome);

    expect(emf()).toHaveLength(1);
  });

  it('takes the namespace from POWERTOOLS_METRICS_NAMESPACE', async () => {
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'GeoPlaneStaging');
    (await freshMetrics()).recordRequest(outcome);
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', undefined);

    expect(emf()[0]?._aws.CloudWatchMetrics[0]?.Namespace).toBe('GeoPlaneStaging');
  });
});
