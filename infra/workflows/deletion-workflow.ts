import type { DataAction } from '#api/operation.ts';

/**
 * The recursive-deletion state machine, as plain Amazon States Language built in code (ADR 0070).
 * CDK deploys exactly this object (with `definitionSubstitutions` for the task ARNs) as a Standard
 * state machine; the local host runs the very same object under `aws-local-stepfunctions`, each
 * task mapped to the same handler function the Lambda runs.
 *
 * The batch task loops over pages inside one invocation until its time budget is spent, so a
 * service with 100,000 layers takes a few dozen loop turns (~7 history events each), far below
 * Step Functions' 25,000-event limit.
 */

/** The Lambda task functions of the workflow: entry modules relative to the repository root. */
export const deletionTaskHandlers = {
  begin: 'functions/workflow-tasks/begin-deletion.ts',
  deleteBatch: 'functions/workflow-tasks/delete-next-batch.ts',
  recordFailure: 'functions/workflow-tasks/record-deletion-failure.ts',
} as const;

export type DeletionTask = keyof typeof deletionTaskHandlers;

/** What each task function may do to the table (CDK grants exactly this). */
export const deletionTaskAccess: Record<DeletionTask, { data: readonly DataAction[] }> = {
  // Every task's transactions carry their audit records (ADR 0094).
  begin: { data: ['GetItem', 'Query', 'UpdateItem', 'PutAuditRecord'] },
  deleteBatch: {
    data: [
      'GetItem',
      'Query',
      'BatchGetItem',
      'BatchWriteItem',
      'PutItem',
      'UpdateItem',
      'DeleteItem',
      'ConditionCheckItem',
      'PutAuditRecord',
    ],
  },
  recordFailure: { data: ['GetItem', 'UpdateItem', 'PutAuditRecord'] },
};

/** The `definitionSubstitutions` placeholder of each task's function ARN. */
export const deletionTaskArnPlaceholders: Record<DeletionTask, string> = {
  begin: 'BeginDeletionFunctionArn',
  deleteBatch: 'DeleteNextBatchFunctionArn',
  recordFailure: 'RecordDeletionFailureFunctionArn',
};

/** State names (sentences) of the task states, and the task each runs. */
export const deletionTaskStates: Record<string, DeletionTask> = {
  'Mark the operation running': 'begin',
  'Delete the next batch of dependents': 'deleteBatch',
  'Record why the deletion failed': 'recordFailure',
};

/** Errors worth retrying with backoff: the tasks' own transient failures and Lambda's. */
export const transientErrors = [
  'TransientError',
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

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

const catchAll = [
  { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Record why the deletion failed' },
];

const arn = (task: DeletionTask) => `\${${deletionTaskArnPlaceholders[task]}}`;

/**
 * The definition. Execution input: `{operation_id, attempt}`. Every task returns `{operation_id, attempt, ...}` and is
 * idempotent: progress lives in the operation item, so a re-run (retry, restart) resumes.
 */
export function deletionWorkflowDefinition() {
  return {
    Comment: 'GeoPlane: removes a service or workspace and everything that depends on it, in batches',
    StartAt: 'Mark the operation running',
    TimeoutSeconds: 86400,
    States: {
      'Mark the operation running': {
        Type: 'Task',
        Resource: arn('begin'),
        Parameters: { 'operation_id.$': '$.operation_id', 'attempt.$': '$.attempt' },
        Retry: retry,
        Catch: catchAll,
        Next: 'Delete the next batch of dependents',
      },
      'Delete the next batch of dependents': {
        Type: 'Task',
        Resource: arn('deleteBatch'),
        Parameters: { 'operation_id.$': '$.operation_id', 'attempt.$': '$.attempt' },
        TimeoutSeconds: 300,
        Retry: retry,
        Catch: catchAll,
        Next: 'Is anything left to delete?',
      },
      'Is anything left to delete?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.done', BooleanEquals: false, Next: 'Delete the next batch of dependents' }],
        Default: 'The deletion is complete',
      },
      'Record why the deletion failed': {
        Type: 'Task',
        Resource: arn('recordFailure'),
        Parameters: { 'operation_id.$': '$.operation_id', 'attempt.$': '$.attempt', 'error.$': '$.error' },
        Retry: retry,
        Next: 'The deletion failed',
      },
      'The deletion failed': {
        Type: 'Fail',
        Error: 'DeletionFailed',
        Cause: 'See the operation last_error.',
      },
      'The deletion is complete': { Type: 'Succeed' },
    },
  } as const;
}

/** The definition with the task ARNs filled in (what `definitionSubstitutions` does in AWS). */
export function substitutedDeletionDefinition(arns: Record<DeletionTask, string>) {
  let text = JSON.stringify(deletionWorkflowDefinition());
  for (const [task, placeholder] of Object.entries(deletionTaskArnPlaceholders)) {
    text = text.replaceAll(`\${${placeholder}}`, arns[task as DeletionTask]);
  }
  return JSON.parse(text) as ReturnType<typeof deletionWorkflowDefinition>;
}
