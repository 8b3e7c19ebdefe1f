import { ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { sweepData, sweepEntry } from '../workflows/sweep-access.ts';
import { ApiFunction } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';
import { bucketArn } from './import-uploads.ts';
import type { StageConfig } from './stage-config.ts';
import { tileObjectsArn, tileObjectsFinding } from './tile-cache.ts';
import { grantUsageKeys } from './usage-keys.ts';

export { sweepData, sweepEntry };

/** Lambda description of the sweep function; the contract test finds functions by the part before ":". */
export const sweepDescription =
  'sweep: restarts or fails stuck deletions, imports, harvest and tile cache jobs, on a schedule';

export interface SweepsProps {
  table: CatalogTable;
  bundles: FunctionBundles;
  /** The environment of every function (as the API functions get it). */
  environment: Record<string, string>;
  logRetention: RetentionDays;
  deletionStateMachine: StateMachine;
  importStateMachine: StateMachine;
  /** The mosaic harvest jobs' state machine (ADR 0136): lost executions are restarted too. */
  harvestStateMachine: StateMachine;
  /** The tile cache jobs' state machine (ADR 0139): lost executions are restarted too. */
  tileCacheStateMachine: StateMachine;
  /** How often the sweep runs (default every 5 minutes). */
  every?: Duration;
  /** No progress for this many minutes (and no running execution): stuck (default 15). */
  stuckAfterMinutes?: number;
  /** Restarts in a row without progress before the work is failed (default 3). */
  maxRestarts?: number;
  /** The usage plan whose orphaned pool keys the sweep deletes (ADR 0111). */
  usageKeys?: { usagePlanName: string; config: StageConfig };
  /** The tile cache bucket whose deleted workspaces' tiles the sweep removes (ADR 0139), with its logical id. */
  tileCache?: { bucketName: string; bucketRef: string };
}

/** `arn:…:states:<region>:<account>:execution:<machine>:*`: the executions of one state machine. */
export function executionsArn(scope: Construct, machine: StateMachine): string {
  return Stack.of(scope).formatArn({
    service: 'states',
    resource: 'execution',
    resourceName: `${machine.stateMachineName}:*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}

/** The cdk-nag finding of {@link executionsArn}: `machineRef` is the state machine's logical id. */
export function executionsFinding(machineRef: string): string {
  return `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<${machineRef}.Name>:*]`;
}

/**
 * The scheduled sweep (ADR 0093): an EventBridge rule invokes one function every few minutes that
 * restarts (or, after `maxRestarts`, fails) deletions, imports, mosaic harvest jobs and tile cache
 * jobs without progress whose execution no longer runs. Its role holds its table actions,
 * StartExecution on those four state machines and DescribeExecution on their executions — nothing
 * else. Expired sessions and keys are DynamoDB
 * TTL's work (the table's `expires_at_epoch`), not this function's.
 */
export class Sweeps extends Construct {
  readonly function: ApiFunction;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: SweepsProps) {
    super(scope, id);
    const machines = [
      props.deletionStateMachine,
      props.importStateMachine,
      props.harvestStateMachine,
      props.tileCacheStateMachine,
    ];
    this.function = new ApiFunction(this, 'Handler', {
      entry: sweepEntry,
      bundles: props.bundles,
      description: sweepDescription,
      table: props.table,
      data: sweepData,
      environment: {
        ...props.environment,
        DELETION_STATE_MACHINE_ARN: props.deletionStateMachine.stateMachineArn,
        IMPORT_STATE_MACHINE_ARN: props.importStateMachine.stateMachineArn,
        HARVEST_STATE_MACHINE_ARN: props.harvestStateMachine.stateMachineArn,
        TILE_CACHE_STATE_MACHINE_ARN: props.tileCacheStateMachine.stateMachineArn,
        SWEEP_STUCK_AFTER_MINUTES: String(props.stuckAfterMinutes ?? 15),
        SWEEP_MAX_RESTARTS: String(props.maxRestarts ?? 3),
        ...(props.tileCache ? { TILE_CACHE_BUCKET: props.tileCache.bucketName } : {}),
      },
      logRetention: props.logRetention,
      timeout: Duration.minutes(2),
      memorySize: 512,
    });
    for (const machine of machines) machine.grantStartExecution(this.function.role);
    // Keys of the pool no slot records (a failed or lost creation whose delete failed too).
    if (props.usageKeys)
      grantUsageKeys(
        this.function,
        ['list', 'delete'],
        props.usageKeys.usagePlanName,
        props.usageKeys.config,
      );
    // Tiles of workspaces that are gone (ADR 0139): it lists the tile bucket and deletes under tiles/.
    if (props.tileCache) {
      this.function.role.addToPolicy(
        new PolicyStatement({
          actions: ['s3:DeleteObject'],
          resources: [tileObjectsArn(this, props.tileCache.bucketName)],
        }),
      );
      this.function.role.addToPolicy(
        new PolicyStatement({
          actions: ['s3:ListBucket'],
          resources: [bucketArn(this, props.tileCache.bucketName)],
        }),
      );
      Validations.of(this.function.role).acknowledge({
        id: tileObjectsFinding(props.tileCache.bucketRef),
        reason:
          'The tiles of a deleted workspace are any objects under tiles/<workspace>/, named at run time; only ' +
          'DeleteObject under the tiles/ prefix of the tile cache bucket (ADR 0139).',
      });
    }
    this.function.role.addToPolicy(
      new PolicyStatement({
        actions: ['states:DescribeExecution'],
        resources: machines.map((machine) => executionsArn(this, machine)),
      }),
    );
    this.rule = new Rule(this, 'Schedule', {
      description: 'Runs the GeoPlane sweep of stuck deletions, imports and jobs',
      schedule: Schedule.rate(props.every ?? Duration.minutes(5)),
      // A missed run is made up by the next one: no retries of an old sweep.
      targets: [new LambdaFunction(this.function.function, { retryAttempts: 0 })],
    });
    const parent = Stack.of(this);
    for (const machine of machines) {
      const ref = parent.getLogicalId(machine.node.defaultChild as never);
      Validations.of(this.function.role).acknowledge({
        id: executionsFinding(ref),
        reason:
          'states:DescribeExecution acts on executions, whose names are made at run time (an operation id and ' +
          'attempt, an import or job id and run): the grant names every execution of this one state machine, nothing ' +
          'else; test/infra/sweeps.test.ts asserts it.',
      });
    }
  }
}
