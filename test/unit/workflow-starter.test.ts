import { afterEach, describe, expect, it } from 'vitest';
import { workflowStarter } from '#wiring/workflows.ts';
import { StepFunctionsStarter } from '#workflows/starter.ts';

const ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:';
const saved = { ...process.env };

afterEach(() => {
  for (const name of ['DELETION_STATE_MACHINE_ARN', 'IMPORT_STATE_MACHINE_ARN']) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('workflowStarter (shared/wiring/workflows.ts)', () => {
  it('builds the Step Functions starter once per process, and again only for other state machines', () => {
    process.env.DELETION_STATE_MACHINE_ARN = `${ARN}deletion`;
    const first = workflowStarter();
    expect(first).toBeInstanceOf(StepFunctionsStarter);
    expect(workflowStarter()).toBe(first);
    process.env.IMPORT_STATE_MACHINE_ARN = `${ARN}import`;
    const other = workflowStarter();
    expect(other).toBeInstanceOf(StepFunctionsStarter);
    expect(other).not.toBe(first);
    expect(workflowStarter()).toBe(other);
  });
});
