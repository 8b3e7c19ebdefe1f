import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { defineOperation } from '#api/operation.ts';
import {
  type ChunkedWorkflow,
  type OperationLedger,
  recordFailure,
  runBatch,
  type WorkflowOperation,
} from '#domain/chunked-workflow.ts';
import type { ImportJob } from '#domain/import-model.ts';
import { fail, type ImportStepDeps, runImportStep } from '#domain/import-steps.ts';
import { created } from '#http/responses.ts';
import { storeCall } from '#store/errors.ts';

/** The wired factory of the operation's kind (reads and changes have their own; ADR 0094). */
// No table here: a refusal's audit record (ADR 0094) goes nowhere (test/e2e/audit.test.ts covers it).
vi.mock('#wiring/repositories.ts', async (original) => ({
  ...(await original<typeof import('#wiring/repositories.ts')>()),
  auditTrail: () => ({ recordRefusal: async () => {}, list: async () => ({ items: [] }) }),
}));

const makeHandler = makeHandlerOfKind;

import { workflowLog } from '#wiring/workflows.ts';
import { makeHandlerOfKind } from '../support/handlers.ts';

// As a Lambda with measurements on (ADR 0092, 0115): the setting is read on every line.
vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'geoplane-test');

/** One JSON log line. */
type Line = Record<string, unknown>;

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

/** The JSON lines written to stdout since the test began. */
function lines(): Line[] {
  return written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

/** The lines of finished requests. */
function measured(): Line[] {
  return lines().filter((line) => line.message === 'request measured');
}

/** The lines of finished workflow runs. */
function finished(): Line[] {
  return lines().filter((line) => line.message === 'workflow finished');
}

/** Lines CloudWatch would turn into custom metrics (EMF): there must be none (ADR 0115). */
function emfLines(): string[] {
  return written
    .join('')
    .split('\n')
    .filter((line) => line.includes('"_aws"') || line.includes('CloudWatchMetrics'));
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

describe('request measurements (ADR 0092, 0115)', () => {
  it.each([
    ['a 201', '{"name":"ok"}', 201, '2xx'],
    ['a 400', '{"name":', 400, '4xx'],
    ['a 500', '{"name":"bug"}', 500, '5xx'],
  ])(
    'writes one log line for %s (operation, status, latency, throttled) and no metric',
    async (_case, body, status, statusClass) => {
      const result = await invoke(body);

      expect(result.statusCode).toBe(status);
      expect(measured()).toHaveLength(1);
      const line = measured()[0] as Line;
      expect(line).toMatchObject({
        level: 'INFO',
        operation: 'metricsCreate',
        status,
        status_class: statusClass,
        throttled: false,
      });
      expect(line.latency_ms).toBeTypeOf('number');
      expect(line.latency_ms as number).toBeGreaterThanOrEqual(0);
      expect(line.latency_ms as number).toBeLessThan(5_000);
      expect(emfLines()).toEqual([]);
    },
  );

  it.each([
    ['a throttled call', 'throttled', true],
    ['a transaction cancelled for throttling', 'tx-throttled', true],
    ['a refused connection (an outage, not a throttle)', 'refused', false],
  ])('answers 503 for %s (%s) and logs throttled = %s', async (_case, name, throttled) => {
    const result = await invoke(JSON.stringify({ name }));

    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body).reason).toBe('store_unavailable');
    expect(measured()).toHaveLength(1);
    expect(measured()[0]).toMatchObject({
      operation: 'metricsCreate',
      status: 503,
      status_class: '5xx',
      throttled,
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
      findById: async () => ({ id: 'svc-1', type: 'postgis', connection: { schemas: ['import_1'] } }),
      findByName: async () => ({ id: 'svc-1', type: 'postgis', connection: { schemas: ['import_1'] } }),
    },
    // The publish checks its names first (ADR 0126): none is taken by anything else.
    layers: { findPublicId: async () => undefined },
    log: workflowLog(),
  } as unknown as ImportStepDeps;
  return { deps, input: { import_id: current.id, workspace_id: current.workspace_id, run: 1 } };
}

describe('workflow outcome lines (ADR 0092, 0115)', () => {
  it('logs a deletion that completes as succeeded', async () => {
    await runBatch(deletion({}), 'op-1', 1, 1_000);

    expect(finished()).toEqual([expect.objectContaining({ workflow: 'deletion', outcome: 'succeeded' })]);
    expect(emfLines()).toEqual([]);
  });

  it('logs a deletion whose failure is recorded as failed, and a stale execution not at all', async () => {
    await recordFailure(deletion({ phase: 'work' }), 'op-1', 1, 'Error: boom');
    await recordFailure(deletion({ phase: 'work', attempt_count: 2 }), 'op-1', 1, 'Error: stale');

    expect(finished()).toEqual([expect.objectContaining({ workflow: 'deletion', outcome: 'failed' })]);
  });

  it('logs a published import as succeeded and a failed one as failed', async () => {
    const published = importRun({ status: 'publishing', service_id: 'svc-1', plan: { layers: [] } as never });
    await runImportStep(published.deps, published.input, 1_000);
    const failed = importRun({ status: 'running' });
    await fail(failed.deps, failed.input, 'the file is not GeoJSON');

    expect(finished().map((line) => [line.workflow, line.outcome])).toEqual([
      ['import', 'succeeded'],
      ['import', 'failed'],
    ]);
  });
});

describe('where the lines are written', () => {
  async function freshMetrics() {
    vi.resetModules();
    return import('#telemetry/metrics.ts');
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

    expect(measured()).toHaveLength(0);
  });

  it('writes in Lambda by default, and not when POWERTOOLS_METRICS_DISABLED=true', async () => {
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', undefined);
    (await freshMetrics()).recordRequest(outcome);
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    (await freshMetrics()).recordRequest(outcome);

    expect(measured()).toHaveLength(1);
    expect(emfLines()).toEqual([]);
  });
});
