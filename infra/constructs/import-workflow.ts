import { ArnFormat, type CfnElement, Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import {
  deletionMachinePlaceholder,
  type ImportTask,
  importTaskAccess,
  importTaskArnPlaceholders,
  importTaskHandlers,
  importTaskStates,
  importWorkflowDefinition,
} from '../workflows/import-workflow.ts';
import { ApiFunction, InlinePolicyRole } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';
import {
  bucketArn,
  grantImportDatabaseSecret,
  grantUploads,
  type ImportUploads,
  importBucketsOf,
} from './import-uploads.ts';
import type { StageConfig } from './stage-config.ts';
import type { VpcPlacement } from './vpc-placement.ts';

/** Entry points of the import workflow's task functions (bundled with the API's, in one run). */
export const importTaskEntries: readonly string[] = Object.values(importTaskHandlers);

/** The tasks of the workflow, in the order of {@link importTaskHandlers}. */
export const importTasks = Object.keys(importTaskHandlers) as ImportTask[];

/**
 * Lambda timeout of the step: Lambda's maximum, 15 minutes (the ASL's task timeout is the same).
 * The step loads for {@link importStepBudgetMs} and then checkpoints and returns, so the 5 minutes
 * left cover the chunk in flight, the checkpoint and a slow database.
 */
export const importStepTimeout = Duration.minutes(15);

/** Time the step spends loading per invocation before it hands back to the state machine (IMPORT_STEP_BUDGET_MS). */
export const importStepBudgetMs = 10 * 60_000;

/**
 * Memory of the step, in MB. Lambda gives CPU in proportion (2048 MB ≈ 1.2 vCPU): the step parses
 * (zip, GeoPackage, Shapefile, CSV) and sends batched INSERTs, CPU-bound between round trips, and
 * holds one chunk of features plus the parser's buffers; the file itself is streamed from /tmp.
 */
export const importStepMemoryMb = 2048;

/** `/tmp` of the step: the source file is downloaded there (up to importMaxBytes, at most 5 GB) and unpacked. */
export const importStepEphemeralStorage = Size.gibibytes(10);

/** Lambda timeout of the failure recorder: it drops the import's staging schema, then records the failure. */
export const recordImportFailureTimeout = Duration.seconds(60);

/** What the step does with the connection-secrets key (see {@link ImportWorkflow.useSecretsKey}). */
export const importStepKmsActions = ['kms:Encrypt', 'kms:Decrypt'] as const;

/** Lambda description of a task function; the contract test finds functions by the part before ":". */
export function importTaskDescription(task: ImportTask): string {
  const state = Object.entries(importTaskStates).find(([, t]) => t === task)?.[0] ?? task;
  return `import-${task}: "${state}" of the import workflow`;
}

export interface ImportWorkflowProps {
  config: StageConfig;
  table: CatalogTable;
  bundles: FunctionBundles;
  /** The environment of every function (as the API functions get it). */
  environment: Record<string, string>;
  /** The import settings of the functions that handle imports (`importEnvironment`). */
  importEnvironment: Record<string, string>;
  uploads: ImportUploads;
  /** Rolling a published import back deletes its service through the deletion workflow. */
  deletionStateMachine: StateMachine;
  logRetention: RetentionDays;
  /** The operator's VPC (cdk.json `vpc`, ADR 0112): the tasks that open PostgreSQL connections run in it. */
  vpc?: VpcPlacement;
}

/**
 * What a state machine needs to run `deletion` as a nested execution and wait for it
 * (`states:startExecution.sync:2`, as AWS documents it for nested workflows): start that machine,
 * describe and stop its executions, and the managed EventBridge rule through which Step Functions
 * learns that the execution ended.
 */
export function nestedDeletionStatements(scope: Construct, deletion: StateMachine): PolicyStatement[] {
  const stack = Stack.of(scope);
  return [
    new PolicyStatement({ actions: ['states:StartExecution'], resources: [deletion.stateMachineArn] }),
    new PolicyStatement({
      actions: ['states:DescribeExecution', 'states:StopExecution'],
      resources: [
        stack.formatArn({
          service: 'states',
          resource: 'execution',
          resourceName: `${deletion.stateMachineName}:*`,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
    }),
    new PolicyStatement({
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resources: [
        stack.formatArn({
          service: 'events',
          resource: 'rule',
          resourceName: 'StepFunctionsGetEventsForStepFunctionsExecutionRule',
        }),
      ],
    }),
  ];
}

/**
 * The import workflow (ADR 0083, infrastructure in ADR 0086): a Standard state machine deployed from
 * the ASL in `infra/workflows/import-workflow.ts`, one Lambda function per task with exactly the
 * table actions the workflow declares for it plus what the task touches outside the table, and a
 * role that may invoke those two functions and run the deletion workflow as its nested execution
 * (a rollback), and nothing else.
 *
 * The step reads the upload (`uploads/*` of the upload bucket) or an allowed bucket's object, reads
 * the import database's secret and, once
 * {@link ImportWorkflow.useSecretsKey} is called, encrypts the published service's password.
 * The failure recorder reads the secret (it drops the staged tables) and its table items.
 */
export class ImportWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  /** The function of each task. */
  readonly functions = new Map<ImportTask, ApiFunction>();
  readonly logGroup: LogGroup;
  readonly role: InlinePolicyRole;
  private readonly deletionStateMachineArn: string;

  constructor(scope: Construct, id: string, props: ImportWorkflowProps) {
    super(scope, id);
    const { config, uploads } = props;
    this.deletionStateMachineArn = props.deletionStateMachine.stateMachineArn;
    const environment = { ...props.environment, ...props.importEnvironment };
    const tasks = new Construct(this, 'Tasks');
    const placement = (task: ImportTask) =>
      importTaskAccess[task].postgres && props.vpc ? { vpc: props.vpc } : {};

    const step = new ApiFunction(tasks, 'step', {
      entry: importTaskHandlers.step,
      bundles: props.bundles,
      description: importTaskDescription('step'),
      table: props.table,
      data: importTaskAccess.step.data,
      environment: {
        ...environment,
        IMPORT_STEP_BUDGET_MS: String(importStepBudgetMs),
      },
      logRetention: props.logRetention,
      timeout: importStepTimeout,
      memorySize: importStepMemoryMb,
      ephemeralStorageSize: importStepEphemeralStorage,
      ...placement('step'),
    });
    // The upload (read, and removed once the import is published, cancelled or rolled back — ADR 0106;
    // uploads/ only) and the buckets the stage allows for s3:// URIs. ListBucket makes a missing
    // object a NoSuchKey (the import fails with source_not_found) instead of a 403.
    grantUploads(
      step.role,
      step,
      uploads.bucket.bucketName,
      uploads.bucketLogicalId,
      ['s3:GetObject', 's3:DeleteObject'],
      true,
    );
    const buckets = importBucketsOf(config);
    if (buckets.length > 0) {
      step.role.addToPolicy(
        new PolicyStatement({
          actions: ['s3:GetObject', 's3:ListBucket'],
          resources: buckets.flatMap((b) => [bucketArn(step, b), `${bucketArn(step, b)}/*`]),
        }),
      );
      for (const b of buckets) {
        Validations.of(step.role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${b}/*]`,
          reason:
            'Imports may read any object of a bucket the operator lists in importBuckets (s3:// URIs named ' +
            'at run time); read only (ADR 0086).',
        });
      }
    }
    // At most `importStepConcurrency` imports load at once (ADR 0115): 15-minute steps can't take
    // the account's concurrency from the API. Reserved concurrency is also taken out of the
    // account's unreserved pool, which must keep 100; unset by default.
    if (config.importStepConcurrency !== undefined) {
      (step.function.node.defaultChild as CfnFunction).reservedConcurrentExecutions =
        config.importStepConcurrency;
    }
    this.functions.set('step', step);

    // The shared wiring of both tasks (importStepDeps) builds the secret box eagerly, and it
    // refuses to start unconfigured: the recorder gets the key's id without any permission on it.
    const recordFailure = new ApiFunction(tasks, 'recordFailure', {
      entry: importTaskHandlers.recordFailure,
      bundles: props.bundles,
      description: importTaskDescription('recordFailure'),
      table: props.table,
      data: importTaskAccess.recordFailure.data,
      environment,
      logRetention: props.logRetention,
      timeout: recordImportFailureTimeout,
      ...placement('recordFailure'),
    });
    this.functions.set('recordFailure', recordFailure);

    // Both connect to the import database with the loader login from its secret.
    if (config.importDatabase) {
      for (const fn of this.functions.values())
        grantImportDatabaseSecret(fn.role, config.importDatabase.secretArn);
    }
    const fnOf = (task: ImportTask) => this.functions.get(task) as ApiFunction;

    // Vended-logs prefix: Step Functions then needs no entry in the account's CloudWatch Logs resource policy.
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${Stack.of(this).stackName}-import`,
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new InlinePolicyRole(this, 'Role', {
      assumedBy: new ServicePrincipal('states.amazonaws.com'),
      description: 'Runs the GeoPlane import workflow',
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: importTasks.map((task) => fnOf(task).function.functionArn),
      }),
    );

    for (const statement of nestedDeletionStatements(this, props.deletionStateMachine))
      this.role.addToPolicy(statement);

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(importWorkflowDefinition())),
      definitionSubstitutions: {
        ...Object.fromEntries(
          importTasks.map((task) => [importTaskArnPlaceholders[task], fnOf(task).function.functionArn]),
        ),
        [deletionMachinePlaceholder]: this.deletionStateMachineArn,
      },
      role: this.role,
      // ALL events for the audit trail (AwsSolutions-SF1), but never the payloads.
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });

    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${Stack.of(this).getLogicalId(props.deletionStateMachine.node.defaultChild as CfnElement)}.Name>:*]`,
      reason:
        "A nested execution's executions: DescribeExecution and StopExecution on the executions of the " +
        'deletion state machine only, whose names are the operations’ ids (known at run time); AWS documents ' +
        'this resource for .sync nested workflows. test/infra asserts it.',
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the CloudWatch Logs log-delivery actions (logs:CreateLogDelivery, …, added by the logging ' +
        'configuration) and X-Ray (added by tracing) use Resource "*": neither supports resource-level ' +
        'permissions. lambda:InvokeFunction names the two task functions; test/infra asserts both.',
    });
  }

  /**
   * The key that encrypts connection passwords (it lives with the API, ADR 0077). Publishing is
   * createService (encrypts the serving password, as routes with `secrets: ['encrypt']`) and then
   * createLayer per table, which validates an enabled layer on the live connection and so decrypts
   * that password again (as createLayer's `secrets: ['decrypt']`): the step may Encrypt and Decrypt
   * with this key, and nothing else with any key. The recorder only learns its id (see above).
   */
  useSecretsKey(key: IKey): void {
    const step = this.functions.get('step') as ApiFunction;
    step.function.addEnvironment('KMS_KEY_ID', key.keyArn);
    step.role.addToPolicy(
      new PolicyStatement({ actions: [...importStepKmsActions], resources: [key.keyArn] }),
    );
    (this.functions.get('recordFailure') as ApiFunction).function.addEnvironment('KMS_KEY_ID', key.keyArn);
  }
}
