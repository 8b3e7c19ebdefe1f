import {
  deletionStateMachineArn,
  harvestStateMachineArn,
  importStateMachineArn,
  tileCacheStateMachineArn,
} from '#config/env.ts';
import { UnavailableError } from '#domain/errors.ts';
import type { WorkflowLog } from '#domain/workflow-log.ts';
import type { DeletionWorkflowSteps } from '#domain/workflows.ts';
import { logger } from '#log/logger.ts';
import { runInChange } from '#store/change-context.ts';
import { DeletionSteps } from '#store/deletion-steps.ts';
import { recordWorkflowOutcome } from '#telemetry/metrics.ts';
import { StepFunctionsStarter, type WorkflowStarters } from '#workflows/starter.ts';
import { taskFailure } from '#workflows/tasks.ts';

let local: WorkflowStarters | undefined;

/** The local host installs its in-process runner here (it runs the same ASL; `useLocalAdapters`). */
export function installLocalWorkflowStarter(starter: WorkflowStarters | undefined): void {
  local = starter;
}

/** The Step Functions starter, built once per process for the state machines it was given. */
let stepFunctions: { arns: string; starter: StepFunctionsStarter } | undefined;

/**
 * The configured starter: Step Functions when a state machine is configured, else the local
 * runner. The Step Functions starter (its SDK client and connections) is built once, as the other
 * adapters are, not on every request that starts a workflow.
 */
export function workflowStarter(): WorkflowStarters {
  const deletion = deletionStateMachineArn();
  const imports = importStateMachineArn();
  const harvest = harvestStateMachineArn();
  const tileCache = tileCacheStateMachineArn();
  if (deletion || imports || harvest || tileCache) {
    const arns = [deletion, imports, harvest, tileCache].join(' ');
    if (stepFunctions?.arns !== arns) {
      stepFunctions = {
        arns,
        starter: new StepFunctionsStarter({ deletion, import: imports, harvest, tileCache }),
      };
    }
    return stepFunctions.starter;
  }
  if (local) return local;
  throw new UnavailableError('workflow_unavailable', 'No workflow runner is configured.');
}

/**
 * The deletion workflow's steps against the table, one per task invocation: they count the write
 * units of their own operation (the local host runs several executions in one process).
 */
export function deletionSteps(): DeletionWorkflowSteps {
  return new DeletionSteps(workflowLog());
}

/** The domain's workflow log port on the logger (ADR 0090) and the outcome metrics (ADR 0092). */
export function workflowLog(): WorkflowLog {
  return {
    info: (message, fields) => logger.info(message, fields),
    warn: (message, fields) => logger.warn(message, fields),
    outcome: (workflow, outcome) => recordWorkflowOutcome(workflow, outcome === 'succeeded'),
  };
}

/**
 * A background entry point (a workflow task, the sweep, a custom resource) whose changes are
 * attributed to the system in the audit trail and the catalog events (ADR 0094): principal
 * `system:<name>`, operation `workflow:<name>`, and the run (a deletion's or an import's id) as
 * the request id.
 */
export function asSystemChange<E, R>(
  name: string,
  runOf: (event: E) => string,
  fn: (event: E) => Promise<R>,
): (event: E) => Promise<R> {
  return (event) =>
    runInChange(
      {
        principalId: `system:${name}`,
        authMethod: 'system',
        operation: `workflow:${name}`,
        requestId: runOf(event),
      },
      () => fn(event),
    );
}

/**
 * A workflow task's entry point: a system change (above) whose failure reaches the state machine
 * as `toTaskError` makes it — by default `taskFailure`: an outage becomes a TransientError the
 * state machine retries with backoff, anything else is logged and fails the task.
 */
export function asWorkflowTask<E, R>(
  name: string,
  runOf: (event: E) => string,
  fn: (event: E) => Promise<R>,
  toTaskError: (error: unknown) => Error = taskFailure,
): (event: E) => Promise<R> {
  return asSystemChange(name, runOf, async (event) => {
    try {
      return await fn(event);
    } catch (error) {
      throw toTaskError(error);
    }
  });
}
