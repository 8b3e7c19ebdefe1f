import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  type DeletionTask,
  deletionTaskAccess,
  deletionTaskArnPlaceholders,
  deletionTaskHandlers,
  deletionTaskStates,
  deletionWorkflowDefinition,
} from '../workflows/deletion-workflow.ts';
import { ApiFunction, InlinePolicyRole } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';

/** Entry points of the deletion workflow's task functions (bundled with the API's, in one run). */
export const deletionTaskEntries: readonly string[] = Object.values(deletionTaskHandlers);

/** The tasks of the workflow, in the order of {@link deletionTaskHandlers}. */
export const deletionTasks = Object.keys(deletionTaskHandlers) as DeletionTask[];

/** Time the batch task spends on pages per invocation before it returns (well under its timeout). */
export const deletionBatchBudgetMs = 60_000;

/** Lambda timeout of a task: the batch task loops for its budget plus the page in flight. */
export function deletionTaskTimeout(task: DeletionTask): Duration {
  return task === 'deleteBatch' ? Duration.seconds(120) : Duration.seconds(30);
}

/** Lambda description of a task function; the contract test finds functions by the part before ":". */
export function deletionTaskDescription(task: DeletionTask): string {
  const state = Object.entries(deletionTaskStates).find(([, t]) => t === task)?.[0] ?? task;
  return `deletion-${task}: "${state}" of the deletion workflow`;
}

export interface DeletionWorkflowProps {
  table: CatalogTable;
  bundles: FunctionBundles;
  /** The environment of every function (as the API functions get it). */
  environment: Record<string, string>;
  logRetention: RetentionDays;
}

/**
 * The recursive-deletion workflow (ADR 0070): a Standard state machine deployed from the ASL in
 * `infra/workflows/deletion-workflow.ts`, one Lambda function per task with exactly the table
 * actions the workflow declares for it, and a role that may invoke those functions and nothing else.
 */
export class DeletionWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  /** The function of each task. */
  readonly functions = new Map<DeletionTask, ApiFunction>();
  readonly logGroup: LogGroup;
  readonly role: InlinePolicyRole;

  constructor(scope: Construct, id: string, props: DeletionWorkflowProps) {
    super(scope, id);
    const tasks = new Construct(this, 'Tasks');
    for (const task of deletionTasks) {
      const access = deletionTaskAccess[task];
      const fn = new ApiFunction(tasks, task, {
        entry: deletionTaskHandlers[task],
        bundles: props.bundles,
        description: deletionTaskDescription(task),
        table: props.table,
        data: access.data,
        environment:
          task === 'deleteBatch'
            ? { ...props.environment, DELETION_BATCH_BUDGET_MS: String(deletionBatchBudgetMs) }
            : props.environment,
        logRetention: props.logRetention,
        timeout: deletionTaskTimeout(task),
      });
      this.functions.set(task, fn);
    }
    const fnOf = (task: DeletionTask) => this.functions.get(task) as ApiFunction;

    // Vended-logs prefix: Step Functions then needs no entry in the account's CloudWatch Logs resource policy.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${Stack.of(this).stackName}-deletion`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Our own role, so that its only Lambda permission is invoking the three task functions
    // (by their unqualified ARNs: the definition names no versions or aliases).
    this.role = new InlinePolicyRole(this, 'Role', {
      assumedBy: new ServicePrincipal('states.amazonaws.com'),
      description: 'Runs the GeoPlane deletion workflow',
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: deletionTasks.map((task) => fnOf(task).function.functionArn),
      }),
    );

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(deletionWorkflowDefinition())),
      definitionSubstitutions: Object.fromEntries(
        deletionTasks.map((task) => [deletionTaskArnPlaceholders[task], fnOf(task).function.functionArn]),
      ),
      role: this.role,
      // ALL events for the audit trail (AwsSolutions-SF1), but never the payloads.
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the CloudWatch Logs log-delivery actions (logs:CreateLogDelivery, …, added by the logging ' +
        'configuration) and X-Ray (added by tracing) use Resource "*": neither supports resource-level ' +
        'permissions. lambda:InvokeFunction names the three task functions; test/infra asserts both.',
    });
  }
}
