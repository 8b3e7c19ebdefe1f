import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  type HarvestTask,
  harvestStepBudgetMs,
  harvestTaskAccess,
  harvestTaskArnPlaceholders,
  harvestTaskHandlers,
  harvestTaskStates,
  harvestWorkflowDefinition,
} from '../workflows/harvest-workflow.ts';
import { ApiFunction, InlinePolicyRole } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';

/** Entry points of the harvest workflow's task functions (bundled with the API's, in one run). */
export const harvestTaskEntries: readonly string[] = Object.values(harvestTaskHandlers);

/** The tasks of the workflow, in the order of {@link harvestTaskHandlers}. */
export const harvestTasks = Object.keys(harvestTaskHandlers) as HarvestTask[];

/** Lambda timeout of a task: the step chunks for its budget plus the chunk in flight (header reads). */
export function harvestTaskTimeout(task: HarvestTask): Duration {
  return task === 'step' ? Duration.seconds(180) : Duration.seconds(30);
}

/** Lambda description of a task function; the contract test finds functions by the part before ":". */
export function harvestTaskDescription(task: HarvestTask): string {
  const state = Object.entries(harvestTaskStates).find(([, t]) => t === task)?.[0] ?? task;
  return `harvest-${task}: "${state}" of the mosaic harvest workflow`;
}

export interface HarvestWorkflowProps {
  table: CatalogTable;
  bundles: FunctionBundles;
  /** The environment of every function (as the API functions get it). */
  environment: Record<string, string>;
  logRetention: RetentionDays;
  /** The S3 buckets raster mosaics may read (cdk.json `mosaicBuckets`). */
  mosaicBuckets: readonly string[];
}

/**
 * The mosaic harvest workflow (ADR 0136): a Standard state machine deployed from the ASL in
 * `infra/workflows/harvest-workflow.ts`, one Lambda function per task with exactly the table
 * actions the workflow declares for it (the step also reads the stage's mosaic buckets), and a
 * role that may invoke those functions and nothing else.
 */
export class HarvestWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  /** The function of each task. */
  readonly functions = new Map<HarvestTask, ApiFunction>();
  readonly logGroup: LogGroup;
  readonly role: InlinePolicyRole;

  constructor(scope: Construct, id: string, props: HarvestWorkflowProps) {
    super(scope, id);
    const tasks = new Construct(this, 'Tasks');
    for (const task of harvestTasks) {
      const fn = new ApiFunction(tasks, task, {
        entry: harvestTaskHandlers[task],
        bundles: props.bundles,
        description: harvestTaskDescription(task),
        table: props.table,
        data: harvestTaskAccess[task].data,
        environment:
          task === 'step'
            ? { ...props.environment, HARVEST_STEP_BUDGET_MS: String(harvestStepBudgetMs) }
            : props.environment,
        logRetention: props.logRetention,
        timeout: harvestTaskTimeout(task),
      });
      this.functions.set(task, fn);
    }
    const fnOf = (task: HarvestTask) => this.functions.get(task) as ApiFunction;

    const step = fnOf('step');
    if (props.mosaicBuckets.length > 0) {
      // Only reads, only of the buckets the stage names for raster mosaics.
      step.role.addToPolicy(
        new PolicyStatement({
          actions: ['s3:GetObject', 's3:ListBucket'],
          resources: props.mosaicBuckets.flatMap((b) => [
            Stack.of(this).formatArn({ service: 's3', region: '', account: '', resource: b }),
            Stack.of(this).formatArn({ service: 's3', region: '', account: '', resource: `${b}/*` }),
          ]),
        }),
      );
      for (const b of props.mosaicBuckets) {
        Validations.of(step.role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${b}/*]`,
          reason: 'Mosaic granules are any objects under the service root in this bucket, named at run time.',
        });
      }
    }

    // Vended-logs prefix: Step Functions then needs no entry in the account's CloudWatch Logs resource policy.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${Stack.of(this).stackName}-harvest`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Our own role, so that its only Lambda permission is invoking the two task functions.
    this.role = new InlinePolicyRole(this, 'Role', {
      assumedBy: new ServicePrincipal('states.amazonaws.com'),
      description: 'Runs the GeoPlane mosaic harvest workflow',
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: harvestTasks.map((task) => fnOf(task).function.functionArn),
      }),
    );

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(harvestWorkflowDefinition())),
      definitionSubstitutions: Object.fromEntries(
        harvestTasks.map((task) => [harvestTaskArnPlaceholders[task], fnOf(task).function.functionArn]),
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
