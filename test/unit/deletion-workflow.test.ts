import { describe, expect, it } from 'vitest';
import '#infra/local/promise-with-resolvers.ts';
import { executionName } from '#domain/deletions.ts';
import { TransientError } from '#domain/workflows.ts';
import {
  deletionTaskArnPlaceholders,
  deletionTaskHandlers,
  deletionTaskStates,
  deletionWorkflowDefinition,
  substitutedDeletionDefinition,
  transientErrors,
} from '#infra/workflows/deletion-workflow.ts';
import { failureMessage, taskFailure } from '#workflows/tasks.ts';

const arns = {
  begin: 'arn:aws:lambda:us-east-1:000000000000:function:begin',
  deleteBatch: 'arn:aws:lambda:us-east-1:000000000000:function:delete-batch',
  recordFailure: 'arn:aws:lambda:us-east-1:000000000000:function:record-failure',
};

const BEGIN = 'Mark the operation running';
const BATCH = 'Delete the next batch of dependents';
const RECORD = 'Record why the deletion failed';

type Handler = (input: unknown) => Promise<unknown>;
type Calls = Record<string, unknown[]>;

function named(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

/** Runs the substituted definition with stub task handlers; resolves with the outcome and the calls. */
async function run(stubs: Record<string, Handler>, retryZero = true) {
  const { StateMachine } = await import('aws-local-stepfunctions');
  const calls: Calls = {};
  const handlers: Record<string, Handler> = {};
  for (const [state, fn] of Object.entries(stubs)) {
    handlers[state] = async (input) => {
      calls[state] ??= [];
      calls[state].push(input);
      return fn(input);
    };
  }
  const machine = new StateMachine(substitutedDeletionDefinition(arns) as never, {
    validationOptions: { checkArn: true, checkPaths: true },
  });
  const execution = machine.run({ operation_id: 'op-1', attempt: 1 } as never, {
    overrides: {
      taskResourceLocalHandlers: handlers as never,
      ...(retryZero ? { retryIntervalOverrides: { [BEGIN]: 0, [BATCH]: 0, [RECORD]: 0 } } : {}),
    },
  });
  const events: { type: string; state?: { name: string } }[] = [];
  const collecting = (async () => {
    for await (const e of execution.eventLogs) events.push(e as never);
  })();
  let outcome: { ok: true; output: unknown } | { ok: false; error: Error };
  try {
    outcome = { ok: true, output: await execution.result };
  } catch (error) {
    outcome = { ok: false, error: error as Error };
  }
  await collecting;
  return { outcome, calls, events };
}

const ok: Handler = async (input) => {
  const { operation_id, attempt } = input as { operation_id: string; attempt: number };
  return { operation_id, attempt };
};

describe('the deletion workflow (ASL) under aws-local-stepfunctions', () => {
  it('loops the batch task while done is false and ends in Succeed', async () => {
    let turns = 0;
    const { outcome, calls, events } = await run({
      [BEGIN]: ok,
      [BATCH]: async (input) => {
        turns++;
        return { ...((await ok(input)) as object), done: turns > 3 };
      },
      [RECORD]: ok,
    });
    expect(outcome.ok, outcome.ok ? '' : String((outcome as { error: Error }).error)).toBe(true);
    expect(turns).toBe(4);
    expect(calls[BEGIN]).toEqual([{ operation_id: 'op-1', attempt: 1 }]);
    // Every turn receives only the operation id (Parameters), not the previous `done`.
    expect(calls[BATCH]).toEqual(Array(4).fill({ operation_id: 'op-1', attempt: 1 }));
    expect(calls[RECORD]).toBeUndefined();
    expect(events.map((e) => e.type)).toContain('ExecutionSucceeded');
    const entered = events.filter((e) => e.type === 'StateEntered').map((e) => e.state?.name);
    expect(entered.at(-1)).toBe('The deletion is complete');
    expect(entered.filter((n) => n === 'Is anything left to delete?')).toHaveLength(4);
  });

  it('retries a TransientError (backoff overridden to 0) and then succeeds', async () => {
    let beginCalls = 0;
    let batchCalls = 0;
    const { outcome, calls, events } = await run({
      [BEGIN]: async (input) => {
        beginCalls++;
        if (beginCalls === 1) throw new TransientError('store unavailable');
        return ok(input);
      },
      [BATCH]: async (input) => {
        batchCalls++;
        if (batchCalls <= 2) throw named('TransientError', 'throttled');
        return { ...(await (ok(input) as Promise<object>)), done: true };
      },
      [RECORD]: ok,
    });
    expect(outcome.ok, outcome.ok ? '' : String((outcome as { error: Error }).error)).toBe(true);
    expect(beginCalls).toBe(2);
    expect(batchCalls).toBe(3);
    expect(calls[RECORD]).toBeUndefined();
    expect(events.filter((e) => e.type === 'StateRetried')).toHaveLength(3);
  });

  it('gives up after MaxAttempts transient failures and records the failure', async () => {
    let batchCalls = 0;
    const { outcome, calls } = await run({
      [BEGIN]: ok,
      [BATCH]: async () => {
        batchCalls++;
        throw new TransientError('always down');
      },
      [RECORD]: ok,
    });
    expect(outcome.ok).toBe(false);
    expect(batchCalls).toBe(1 + 6);
    expect(calls[RECORD]).toEqual([
      { operation_id: 'op-1', attempt: 1, error: { Error: 'TransientError', Cause: 'always down' } },
    ]);
  });

  it('sends any other error to "Record why the deletion failed" with $.error and ends Failed', async () => {
    let batchCalls = 0;
    const { outcome, calls, events } = await run({
      [BEGIN]: ok,
      [BATCH]: async () => {
        batchCalls++;
        throw named('InvalidItemError', "layer item without public_id: 'zz-broken'");
      },
      [RECORD]: ok,
    });
    // Not retried: only transient errors are.
    expect(batchCalls).toBe(1);
    expect(calls[RECORD]).toEqual([
      {
        operation_id: 'op-1',
        attempt: 1,
        error: { Error: 'InvalidItemError', Cause: "layer item without public_id: 'zz-broken'" },
      },
    ]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.name).toBe('ExecutionError');
    const entered = events.filter((e) => e.type === 'StateEntered').map((e) => e.state?.name);
    expect(entered.slice(-2)).toEqual([RECORD, 'The deletion failed']);
    expect(events.map((e) => e.type)).toContain('ExecutionFailed');
    expect(events.map((e) => e.type)).not.toContain('ExecutionSucceeded');
  });

  it('a failure of "Mark the operation running" is recorded too', async () => {
    const { outcome, calls } = await run({
      [BEGIN]: async () => {
        throw new Error('boom');
      },
      [BATCH]: ok,
      [RECORD]: ok,
    });
    expect(outcome.ok).toBe(false);
    expect(calls[BATCH]).toBeUndefined();
    expect(calls[RECORD]).toEqual([
      { operation_id: 'op-1', attempt: 1, error: { Error: 'Error', Cause: 'boom' } },
    ]);
  });
});

describe('the deletion workflow definition', () => {
  const definition = deletionWorkflowDefinition() as unknown as {
    StartAt: string;
    TimeoutSeconds: number;
    States: Record<string, Record<string, unknown>>;
  };
  const states = Object.entries(definition.States);

  it('names its states as sentences', () => {
    for (const [name] of states) {
      expect(name, name).toMatch(/^[A-Z][a-z]+( [a-z]+)*[.?]?$/);
      expect(name.split(' ').length, name).toBeGreaterThanOrEqual(3);
    }
    expect(definition.StartAt).toBe(BEGIN);
  });

  it('retries every Task on exactly the transient errors, and catches everything else (but the recorder)', () => {
    const tasks = states.filter(([, s]) => s.Type === 'Task');
    expect(tasks.map(([n]) => n).sort()).toEqual(Object.keys(deletionTaskStates).sort());
    for (const [name, s] of tasks) {
      const retry = s.Retry as { ErrorEquals: string[]; MaxAttempts: number; BackoffRate: number }[];
      expect(retry, name).toHaveLength(1);
      const [retrier] = retry as [(typeof retry)[number]];
      expect([...retrier.ErrorEquals].sort(), name).toEqual([...transientErrors].sort());
      expect(retrier.ErrorEquals, name).not.toContain('States.ALL');
      expect(retrier.MaxAttempts).toBeGreaterThan(0);
      expect(retrier.BackoffRate).toBeGreaterThanOrEqual(1);
      if (name === RECORD) expect(s.Catch, name).toBeUndefined();
      else
        expect(s.Catch, name).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: RECORD }]);
    }
    expect(transientErrors).toContain('TransientError');
  });

  it('every Next points to a state, every state is reachable, and the ends are Succeed/Fail', () => {
    const targets = new Set<string>([definition.StartAt]);
    for (const [, s] of states) {
      if (typeof s.Next === 'string') targets.add(s.Next);
      if (typeof s.Default === 'string') targets.add(s.Default);
      for (const c of (s.Choices as { Next: string }[] | undefined) ?? []) targets.add(c.Next);
      for (const c of (s.Catch as { Next: string }[] | undefined) ?? []) targets.add(c.Next);
    }
    expect([...targets].sort()).toEqual(Object.keys(definition.States).sort());
    expect(definition.States['The deletion is complete']?.Type).toBe('Succeed');
    expect(definition.States['The deletion failed']?.Type).toBe('Fail');
    expect(definition.TimeoutSeconds).toBeGreaterThan(0);
  });

  it('substitutes every task ARN placeholder', () => {
    const text = JSON.stringify(deletionWorkflowDefinition());
    for (const placeholder of Object.values(deletionTaskArnPlaceholders))
      expect(text).toContain(`\${${placeholder}}`);
    const substituted = JSON.stringify(substitutedDeletionDefinition(arns));
    expect(substituted).not.toMatch(/\$\{/);
    for (const [state, task] of Object.entries(deletionTaskStates)) {
      expect(
        (substitutedDeletionDefinition(arns).States as Record<string, { Resource?: string }>)[state]
          ?.Resource,
      ).toBe(arns[task]);
      expect(deletionTaskHandlers[task]).toMatch(/^functions\/workflow-tasks\/.+\.ts$/);
    }
  });
});

describe('deletion task helpers', () => {
  it('failureMessage reads the Lambda JSON cause, a plain cause, or nothing', () => {
    expect(failureMessage(undefined)).toBe('The deletion failed.');
    expect(
      failureMessage({
        Error: 'InvalidItemError',
        Cause: JSON.stringify({ errorType: 'InvalidItemError', errorMessage: 'no public_id', trace: [] }),
      }),
    ).toBe('InvalidItemError: no public_id');
    expect(failureMessage({ Error: 'Error', Cause: 'boom' })).toBe('Error: boom');
    // JSON without errorMessage stays as it is.
    expect(failureMessage({ Error: 'States.Timeout', Cause: '{"a":1}' })).toBe('States.Timeout: {"a":1}');
    expect(failureMessage({ Cause: 'only a cause' })).toBe('Error: only a cause');
    expect(failureMessage({ Error: 'States.TaskFailed' })).toBe('States.TaskFailed:');
    expect(failureMessage({})).toBe('Error:');
  });

  it('taskFailure turns store outages into TransientError and keeps everything else', () => {
    const outage = named('UnavailableError', 'store unavailable');
    const transient = taskFailure(outage);
    expect(transient).toBeInstanceOf(TransientError);
    expect(transient.name).toBe('TransientError');
    expect(transient.message).toBe('store unavailable');

    const quiet = console.error;
    console.error = () => {};
    try {
      const other = named('InvalidItemError', 'bad item');
      expect(taskFailure(other)).toBe(other);
      const plain = taskFailure('a string');
      expect(plain).toBeInstanceOf(Error);
      expect(plain.message).toBe('a string');
      expect(plain.name).toBe('Error');
      expect(taskFailure(undefined)).toBeInstanceOf(Error);
    } finally {
      console.error = quiet;
    }
  });
});

describe('executionName', () => {
  it('is the operation id for the first attempt and <id>-attempt-<n> after', () => {
    const id = '6a1d3b2e-0000-4000-8000-000000000001';
    expect(executionName({ id, attempt_count: 1 })).toBe(id);
    expect(executionName({ id, attempt_count: 0 })).toBe(id);
    expect(executionName({ id, attempt_count: 2 })).toBe(`${id}-attempt-2`);
    expect(executionName({ id, attempt_count: 17 })).toBe(`${id}-attempt-17`);
    // Step Functions execution names: at most 80 characters of [A-Za-z0-9-_].
    const name = executionName({ id, attempt_count: 999_999 });
    expect(name.length).toBeLessThanOrEqual(80);
    expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});
