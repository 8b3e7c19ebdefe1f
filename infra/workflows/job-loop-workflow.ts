import type { DataAction } from '#api/operation.ts';
import { transientErrors } from './deletion-workflow.ts';

/**
 * The state machine of a chunked job (ADR 0136, 0139), as plain Amazon States Language built in
 * code: one task runs chunks for its time budget and says whether the job is finished; the job
 * item holds the cursor and the progress, so a re-run resumes; a failure is recorded on the job by
 * a second task. The mosaic harvest and the tile cache jobs are two instances of it. CDK deploys
 * exactly this object; the local host runs the very same object under `aws-local-stepfunctions`.
 */
export interface JobLoopSpec {
  comment: string;
  /** Short name: function descriptions (`<name>-<task>: …`) and the log group (`…-<name>`). */
  name: string;
  /** What the workflow does, in words: "… of the <title> workflow", "Runs the GeoPlane <title> workflow". */
  title: string;
  /** The step's time budget per invocation (well under its timeout) and the variable that gives it to the step. */
  stepBudget: { ms: number; variable: string };
  /** The two task functions' entry modules, relative to the repository root. */
  handlers: { step: string; recordFailure: string };
  /** What each task function may do to the table (CDK grants exactly this); `postgres`: it opens PostgreSQL connections (ADR 0112). */
  access: Record<JobLoopTask, { data: readonly DataAction[]; postgres?: true }>;
  /** `definitionSubstitutions` placeholders of the two functions' ARNs. */
  placeholders: Record<JobLoopTask, string>;
  /** State names (sentences). */
  states: { step: string; finished: string; record: string; failed: string; succeeded: string };
  /** The Fail state's error name. */
  error: string;
  /** Input fields the tasks receive besides `job_id`. */
  ids: readonly string[];
}

export type JobLoopTask = 'step' | 'recordFailure';

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

/** The definition of a job loop. Execution input: `{job_id, …ids}`; the job item holds the progress. */
export function jobLoopDefinition(spec: JobLoopSpec) {
  const arn = (task: JobLoopTask) => `\${${spec.placeholders[task]}}`;
  const ids = Object.fromEntries(['job_id', ...spec.ids].map((f) => [`${f}.$`, `$.${f}`]));
  return {
    Comment: spec.comment,
    StartAt: spec.states.step,
    TimeoutSeconds: 7 * 86400,
    States: {
      [spec.states.step]: {
        Type: 'Task',
        Resource: arn('step'),
        Parameters: ids,
        TimeoutSeconds: 300,
        Retry: retry,
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: spec.states.record }],
        Next: spec.states.finished,
      },
      [spec.states.finished]: {
        Type: 'Choice',
        Choices: [{ Variable: '$.done', BooleanEquals: false, Next: spec.states.step }],
        Default: spec.states.succeeded,
      },
      [spec.states.record]: {
        Type: 'Task',
        Resource: arn('recordFailure'),
        Parameters: { ...ids, 'error.$': '$.error' },
        Retry: retry,
        Next: spec.states.failed,
      },
      [spec.states.failed]: { Type: 'Fail', Error: spec.error, Cause: 'See the job error.' },
      [spec.states.succeeded]: { Type: 'Succeed' },
    },
  };
}

/** The task each task state runs. */
export function jobLoopTaskStates(spec: JobLoopSpec): Record<string, JobLoopTask> {
  return { [spec.states.step]: 'step', [spec.states.record]: 'recordFailure' };
}

/** The definition with the task ARNs filled in (what `definitionSubstitutions` does in AWS). */
export function substitutedJobLoopDefinition(spec: JobLoopSpec, arns: Record<JobLoopTask, string>) {
  let text = JSON.stringify(jobLoopDefinition(spec));
  for (const [task, placeholder] of Object.entries(spec.placeholders)) {
    text = text.replaceAll(`\${${placeholder}}`, arns[task as JobLoopTask]);
  }
  return JSON.parse(text) as ReturnType<typeof jobLoopDefinition>;
}
