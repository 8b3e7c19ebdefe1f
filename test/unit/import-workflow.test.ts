import { describe, expect, it } from 'vitest';
import '#infra/local/promise-with-resolvers.ts';
import {
  importTaskStates,
  nestedDeletionState,
  substitutedImportDefinition,
} from '#infra/workflows/import-workflow.ts';

const arns = {
  step: 'arn:aws:lambda:us-east-1:000000000000:function:import-step',
  recordFailure: 'arn:aws:lambda:us-east-1:000000000000:function:record-import-failure',
};
const deletionMachine = 'arn:aws:states:us-east-1:000000000000:stateMachine:deletion';

const STEP = Object.keys(importTaskStates).find((state) => importTaskStates[state] === 'step') as string;
const RECORD = Object.keys(importTaskStates).find(
  (state) => importTaskStates[state] === 'recordFailure',
) as string;
const WAIT = 'Wait before looking again';

type Handler = (input: unknown) => Promise<unknown>;
const ids = { import_id: 'imp-1', workspace_id: 'ws-1', run: 2 };
const deletion = { name: 'op-1-attempt-2', input: { operation_id: 'op-1', attempt: 2 } };

/** Runs the import definition with stub tasks; the step answers from `answers` in turn. */
async function run(answers: Record<string, unknown>[], nested: Handler) {
  const { StateMachine } = await import('aws-local-stepfunctions');
  const calls: Record<string, unknown[]> = {};
  const record =
    (state: string, fn: Handler): Handler =>
    async (input) => {
      calls[state] ??= [];
      calls[state].push(input);
      return fn(input);
    };
  let turn = 0;
  const machine = new StateMachine(substitutedImportDefinition(arns, deletionMachine) as never, {
    validationOptions: { checkArn: true, checkPaths: true },
  });
  const execution = machine.run(ids as never, {
    overrides: {
      taskResourceLocalHandlers: {
        [STEP]: record(STEP, async () => ({ ...ids, ...answers[turn++] })),
        [RECORD]: record(RECORD, async () => ({})),
        [nestedDeletionState]: record(nestedDeletionState, nested),
      } as never,
      waitTimeOverrides: { [WAIT]: 0 },
    },
  });
  const states: string[] = [];
  const collecting = (async () => {
    for await (const e of execution.eventLogs) {
      const event = e as { type: string; state?: { name: string } };
      if (event.type === 'StateEntered' && event.state) states.push(event.state.name);
    }
  })();
  const output = await execution.result;
  await collecting;
  return { output, calls, states };
}

describe("the import workflow (ASL) composes a rollback's deletion (aws-local-stepfunctions)", () => {
  it('runs the deletion the step names as a nested execution, then takes the next step without waiting', async () => {
    const { calls, states } = await run(
      [
        { done: false, wait_seconds: 30, deletion },
        { done: true, wait_seconds: 0 },
      ],
      async () => ({ Status: 'SUCCEEDED' }),
    );

    expect(calls[nestedDeletionState]).toEqual([
      { StateMachineArn: deletionMachine, Name: deletion.name, Input: deletion.input },
    ]);
    expect(calls[STEP]).toHaveLength(2);
    // The step gets the execution's ids only, never the nested execution's answer.
    expect(calls[STEP]?.[1]).toEqual(ids);
    expect(states).not.toContain(WAIT);
    expect(calls[RECORD]).toBeUndefined();
  });

  it('a nested deletion that fails is caught: the import waits, then its step looks again', async () => {
    const { calls, states } = await run(
      [
        { done: false, wait_seconds: 5, deletion },
        { done: true, wait_seconds: 0 },
      ],
      async () => {
        const error = new Error('the deletion failed');
        error.name = 'States.TaskFailed';
        throw error;
      },
    );

    expect(calls[nestedDeletionState]).toHaveLength(1);
    expect(states.indexOf(WAIT)).toBeGreaterThan(states.indexOf(nestedDeletionState));
    expect(calls[STEP]).toHaveLength(2);
    expect(calls[RECORD]).toBeUndefined();
  });

  it('a step that names no deletion never enters the nested state', async () => {
    const { calls, states } = await run(
      [
        { done: false, wait_seconds: 3 },
        { done: true, wait_seconds: 0 },
      ],
      async () => ({}),
    );

    expect(states).toContain(WAIT);
    expect(calls[nestedDeletionState]).toBeUndefined();
  });
});
