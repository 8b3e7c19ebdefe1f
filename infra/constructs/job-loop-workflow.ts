import { Duration, RemovalPolicy, type Size, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  type JobLoopSpec,
  type JobLoopTask,
  jobLoopDefinition,
  jobLoopTaskStates,
} from '../workflows/job-loop-workflow.ts';
import { ApiFunction, InlinePolicyRole } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';
import type { VpcPlacement } from './vpc-placement.ts';

/** Entry points of a job loop's task functions (bundled with the API's, in one run). */
export function jobLoopTaskEntries(spec: JobLoopSpec): string[] {
  return Object.values(spec.handlers);
}

/** The tasks of a job loop, in the order of its handlers. */
export function jobLoopTasks(spec: JobLoopSpec): JobLoopTask[] {
  return Object.keys(spec.handlers) as JobLoopTask[];
}

/** Lambda description of a task function; the contract test finds functions by the part before ":". */
export function jobLoopTaskDescription(spec: JobLoopSpec, task: JobLoopTask): string {
  const state = Object.entries(jobLoopTaskStates(spec)).find(([, t]) => t === task)?.[0] ?? task;
  return `${spec.name}-${task}: "${state}" of the ${spec.title} workflow`;
}

/**
 * Lambda timeout of a task: the step works for its budget plus the chunk in flight (the ASL's
 * task timeout covers it); recording a failure is one small transaction.
 */
export function jobLoopTaskTimeout(task: JobLoopTask): Duration {
  return task === 'step' ? Duration.seconds(180) : Duration.seconds(30);
}

/** What one task function gets beyond its table actions (which the spec declares). */
export interface JobLoopTaskOptions {
  /** Added to the environment every function gets (the step gets its budget without asking). */
  environment?: Record<string, string>;
  /** Default 1024 MB. */
  memorySize?: number;
  ephemeralStorageSize?: Size;
}

/** What the stack hands every job loop's construct. */
export interface JobLoopHostProps {
  table: CatalogTable;
  bundles: FunctionBundles;
  /** The environment of every function (as the API functions get it). */
  environment: Record<string, string>;
  logRetention: RetentionDays;
}

export interface JobLoopWorkflowProps extends JobLoopHostProps {
  /** The loop: names, handlers, table access, placeholders, state names (infra/workflows/job-loop-workflow.ts). */
  spec: JobLoopSpec;
  tasks?: Partial<Record<JobLoopTask, JobLoopTaskOptions>>;
  /**
   * The operator's VPC (cdk.json `vpc`, ADR 0112): the tasks whose access says `postgres` (they open
   * PostgreSQL connections) run in it; the others never do.
   */
  vpc?: VpcPlacement;
  /** Called with each task function once it exists: grants beyond the table, acknowledgments. */
  configure?: (task: JobLoopTask, fn: ApiFunction) => void;
}

/**
 * A chunked job's workflow (ADR 0136, 0139): a Standard state machine deployed from the ASL of
 * {@link jobLoopDefinition}, one Lambda function per task with exactly the table actions the spec
 * declares for it (plus what `configure` adds), and a role that may invoke those two functions and
 * nothing else. The construct ids (`Tasks/<task>`, `Logs`, `Role`, `StateMachine`) are those the
 * mosaic harvest workflow was deployed with.
 */
export class JobLoopWorkflow extends Construct {
  readonly spec: JobLoopSpec;
  readonly stateMachine: StateMachine;
  /** The function of each task. */
  readonly functions = new Map<JobLoopTask, ApiFunction>();
  readonly logGroup: LogGroup;
  readonly role: InlinePolicyRole;

  constructor(scope: Construct, id: string, props: JobLoopWorkflowProps) {
    super(scope, id);
    const { spec } = props;
    this.spec = spec;
    const tasks = new Construct(this, 'Tasks');
    for (const task of jobLoopTasks(spec)) {
      const options = props.tasks?.[task] ?? {};
      const budget = task === 'step' ? { [spec.stepBudget.variable]: String(spec.stepBudget.ms) } : {};
      const fn = new ApiFunction(tasks, task, {
        entry: spec.handlers[task],
        bundles: props.bundles,
        description: jobLoopTaskDescription(spec, task),
        table: props.table,
        data: spec.access[task].data,
        environment: { ...props.environment, ...options.environment, ...budget },
        logRetention: props.logRetention,
        timeout: jobLoopTaskTimeout(task),
        ...(options.memorySize ? { memorySize: options.memorySize } : {}),
        ...(options.ephemeralStorageSize ? { ephemeralStorageSize: options.ephemeralStorageSize } : {}),
        ...(props.vpc && spec.access[task].postgres ? { vpc: props.vpc } : {}),
      });
      this.functions.set(task, fn);
    }
    for (const [task, fn] of this.functions) props.configure?.(task, fn);
    const arnOf = (task: JobLoopTask) => (this.functions.get(task) as ApiFunction).function.functionArn;

    // Vended-logs prefix: Step Functions then needs no entry in the account's CloudWatch Logs resource policy.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${Stack.of(this).stackName}-${spec.name}`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Our own role, so that its only Lambda permission is invoking the two task functions.
    this.role = new InlinePolicyRole(this, 'Role', {
      assumedBy: new ServicePrincipal('states.amazonaws.com'),
      description: `Runs the GeoPlane ${spec.title} workflow`,
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: jobLoopTasks(spec).map(arnOf),
      }),
    );

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(jobLoopDefinition(spec))),
      definitionSubstitutions: Object.fromEntries(
        jobLoopTasks(spec).map((task) => [spec.placeholders[task], arnOf(task)]),
      ),
      role: this.role,
      // ALL events for the audit trail (AwsSolutions-SF1), but never the payloads.
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the CloudWatch Logs log-delivery actions (added by the logging configuration) and X-Ray ' +
        '(added by tracing) use Resource "*": neither supports resource-level permissions. ' +
        'lambda:InvokeFunction names the two task functions; test/infra asserts both.',
    });
  }
}
