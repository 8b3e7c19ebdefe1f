import type { DataAction } from '#api/operation.ts';
import { transientErrors } from './deletion-workflow.ts';

/**
 * The import state machine, as plain Amazon States Language built in code (ADR 0083): CDK deploys
 * exactly this object as a Standard state machine; the local host runs the very same object under
 * `aws-local-stepfunctions`. One task takes the next step of the import (acquire, discover, load
 * a budget's worth of chunks, publish, tear down) and says whether to come back, after how long.
 * A 10-minute budget per load step keeps a multi-GB file inside Lambda's 15 minutes and the
 * history at a few events per step, far below 25,000.
 *
 * A rollback's teardown composes the deletion workflow: the step names the service's deletion
 * (its execution name and input) and "Delete the import's service" runs it as a nested execution
 * (`states:startExecution.sync:2`), the next step coming once it has ended — no start by hand, no
 * polling. The same name and input as any other start of that attempt make the start idempotent
 * (StartExecution joins a running execution of that name and input); when it can't be run (the
 * attempt's execution ended, a sweep runs a newer attempt), the import waits and looks again.
 */

/** The Lambda task functions of the workflow: entry modules relative to the repository root. */
export const importTaskHandlers = {
  step: 'functions/workflow-tasks/import-step.ts',
  recordFailure: 'functions/workflow-tasks/record-import-failure.ts',
} as const;

export type ImportTask = keyof typeof importTaskHandlers;

/**
 * What each task function may do to the table (CDK grants exactly this). The step also reads the
 * upload bucket / allowed buckets, the import database secret, encrypts the service password and
 * starts the deletion workflow (rollback) — granted by the construct.
 */
export const importTaskAccess: Record<ImportTask, { data: readonly DataAction[]; postgres?: true }> = {
  // Both open PostgreSQL connections (the import database; the step also validates published
  // layers on their service's connection): in the operator's VPC when there is one (ADR 0112).
  step: {
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'ConditionCheckItem', 'BatchGetItem', 'DeleteItem'],
    postgres: true,
  },
  // UpdateItem: a failed load releases its reservation of the workspace's import quota (ADR 0110).
  // It drops the failed run's staging schema.
  recordFailure: { data: ['GetItem', 'PutItem', 'UpdateItem'], postgres: true },
};

/** The `definitionSubstitutions` placeholder of each task's function ARN. */
export const importTaskArnPlaceholders: Record<ImportTask, string> = {
  step: 'ImportStepFunctionArn',
  recordFailure: 'RecordImportFailureFunctionArn',
};

/** The `definitionSubstitutions` placeholder of the deletion state machine's ARN (the nested execution). */
export const deletionMachinePlaceholder = 'DeletionStateMachineArn';

/** The state that runs the deletion workflow as a nested execution (the local runner's override). */
export const nestedDeletionState = "Delete the import's service";

/** State names (sentences) of the task states, and the task each runs. */
export const importTaskStates: Record<string, ImportTask> = {
  'Take the next step of the import': 'step',
  'Record why the import failed': 'recordFailure',
};

const retry = [
  {
    ErrorEquals: [...transientErrors],
    IntervalSeconds: 2,
    MaxAttempts: 6,
    BackoffRate: 2,
    MaxDelaySeconds: 60,
    JitterStrategy: 'FULL',
  },
];

const arn = (task: ImportTask) => `\${${importTaskArnPlaceholders[task]}}`;
const ids = { 'import_id.$': '$.import_id', 'workspace_id.$': '$.workspace_id', 'run.$': '$.run' };

/** The definition. Execution input: `{import_id, workspace_id, run}`; the job item holds the progress. */
export function importWorkflowDefinition() {
  return {
    Comment: 'GeoPlane: loads a file into PostGIS and publishes it, or takes a published import away again',
    StartAt: 'Take the next step of the import',
    TimeoutSeconds: 7 * 86400,
    States: {
      'Take the next step of the import': {
        Type: 'Task',
        Resource: arn('step'),
        Parameters: ids,
        TimeoutSeconds: 900,
        Retry: retry,
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Record why the import failed' }],
        Next: 'Is the import at rest?',
      },
      'Is the import at rest?': {
        Type: 'Choice',
        Choices: [
          { Variable: '$.done', BooleanEquals: true, Next: 'The import is at rest' },
          { Variable: '$.deletion', IsPresent: true, Next: nestedDeletionState },
          { Variable: '$.wait_seconds', NumericGreaterThan: 0, Next: 'Wait before looking again' },
        ],
        Default: 'Take the next step of the import',
      },
      [nestedDeletionState]: {
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution.sync:2',
        Parameters: {
          StateMachineArn: `\${${deletionMachinePlaceholder}}`,
          'Name.$': '$.deletion.name',
          'Input.$': '$.deletion.input',
        },
        // The deletion records its own outcome; the next step reads it.
        ResultPath: null,
        Retry: [
          {
            ErrorEquals: ['StepFunctions.SdkClientException', 'StepFunctions.ServiceUnavailableException'],
            IntervalSeconds: 2,
            MaxAttempts: 6,
            BackoffRate: 2,
            MaxDelaySeconds: 60,
            JitterStrategy: 'FULL',
          },
        ],
        // A failed deletion, or one this attempt can't run: the step decides after a wait.
        Catch: [
          { ErrorEquals: ['States.ALL'], ResultPath: '$.deletion_error', Next: 'Wait before looking again' },
        ],
        Next: 'Take the next step of the import',
      },
      'Wait before looking again': {
        Type: 'Wait',
        SecondsPath: '$.wait_seconds',
        Next: 'Take the next step of the import',
      },
      'Record why the import failed': {
        Type: 'Task',
        Resource: arn('recordFailure'),
        Parameters: { ...ids, 'error.$': '$.error' },
        Retry: retry,
        Next: 'The import failed',
      },
      'The import failed': { Type: 'Fail', Error: 'ImportFailed', Cause: 'See the import error_message.' },
      'The import is at rest': { Type: 'Succeed' },
    },
  } as const;
}

/**
 * The definition with the task ARNs and the deletion state machine's ARN filled in (what
 * `definitionSubstitutions` does in AWS).
 */
export function substitutedImportDefinition(arns: Record<ImportTask, string>, deletionMachineArn: string) {
  let text = JSON.stringify(importWorkflowDefinition()).replaceAll(
    `\${${deletionMachinePlaceholder}}`,
    deletionMachineArn,
  );
  for (const [task, placeholder] of Object.entries(importTaskArnPlaceholders)) {
    text = text.replaceAll(`\${${placeholder}}`, arns[task as ImportTask]);
  }
  return JSON.parse(text) as ReturnType<typeof importWorkflowDefinition>;
}
