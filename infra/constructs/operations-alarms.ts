import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct, type IConstruct } from 'constructs';

/** The window every alarm evaluates (one period, one datapoint). */
export const alarmPeriod = Duration.minutes(5);

/** Default 5xx share of the API's requests, in percent, at which the API alarm fires. */
export const defaultServerErrorRatePercent = 5;

/** Default number of requests a window needs before its 5xx share counts (an idle API never alarms). */
export const defaultMinimumRequests = 20;

/** Metrics CloudWatch allows in one alarm's metric math (the expression and the metrics it reads). */
export const maxMetricsPerAlarm = 10;

/** How far behind its stream a consumer may read before its IteratorAge alarm fires. */
export const iteratorAgeThreshold = Duration.minutes(15);

/** The DynamoDB throttle metrics, per table and per global secondary index. */
const tableThrottleMetrics = ['ReadThrottleEvents', 'WriteThrottleEvents'] as const;

/** A construct's path below its top-level stack, alphanumerics only (`CatalogEvents/DeadLetters` → `CatalogEventsDeadLetters`). */
function pathName(construct: IConstruct): string {
  return construct.node.path
    .split('/')
    .slice(1)
    .join('')
    .replace(/[^A-Za-z0-9]/g, '');
}

export interface OperationsAlarmsProps {
  /** The REST API; its deployment stage is watched (AWS/ApiGateway, ApiName and Stage). */
  api: RestApi;
  /** The REQUEST authorizer's function: any error of it turns callers away with 500s. */
  authorizer: IFunction;
  /** The workflows whose failed, timed-out or aborted executions alarm, by name (e.g. deletion, import). */
  stateMachines: Readonly<Record<string, IStateMachine>>;
  /** The catalog table: its read and write throttle events alarm. */
  table: ITable;
  /** The table's global secondary indexes (their throttle events are reported per index). */
  tableIndexes?: readonly string[];
  /** Dead-letter queues: a message in one alarms (more with {@link OperationsAlarms.watchDeadLetterQueue}). */
  deadLetterQueues?: readonly IQueue[];
  /**
   * Functions no client waits on (e.g. the sweep), by name: nothing else reports their errors,
   * so any error alarms (more with {@link OperationsAlarms.watchFunctionErrors}).
   */
  backgroundFunctions?: Readonly<Record<string, IFunction>>;
  /**
   * The stack's functions whose throttles alarm, by name (ADR 0115): at most
   * {@link maxMetricsPerAlarm} (one metric math alarm). None: no throttles alarm.
   */
  throttleWatchedFunctions?: Readonly<Record<string, IFunction>>;
  /** Functions reading a stream (e.g. the table's), by name: their IteratorAge alarms (ADR 0115). */
  streamConsumers?: Readonly<Record<string, IFunction>>;
  /** cdk.json `alarmEmails`: each address gets an SNS e-mail subscription (confirmed once by its owner). */
  emails: readonly string[];
  /** 5xx share of requests, in percent, at which the API alarm fires (default 5). */
  serverErrorRatePercent?: number;
  /** Requests a 5-minute window needs before its 5xx share counts (default 20). */
  minimumRequests?: number;
}

/**
 * The operator's alarms (ADR 0091), each notifying one SNS topic when it fires and when it is OK
 * again: the API's 5xx rate, authorizer errors, throttles of the stack's own functions, the table's
 * throttle events, failed workflow executions, messages in dead-letter queues and errors of
 * background functions. The topic is encrypted with its own KMS key; CloudWatch may publish to it
 * (and use the key) for this stack's alarms only; `alarmEmails` are subscribed to it.
 */
export class OperationsAlarms extends Construct {
  readonly topic: Topic;
  readonly key: Key;
  /** Every alarm, by construct id. */
  readonly alarms = new Map<string, Alarm>();
  /** Alarm names start with this (the stack's name): the topic and key policies name `<prefix>-*`. */
  readonly alarmNamePrefix: string;
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: OperationsAlarmsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.alarmNamePrefix = stack.stackName;
    const alarmArns = stack.formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: `${this.alarmNamePrefix}-*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    // CloudWatch acts for this account's alarms of this stack only (no confused deputy).
    const fromOurAlarms = {
      ArnLike: { 'aws:SourceArn': alarmArns },
      StringEquals: { 'aws:SourceAccount': stack.account },
    };
    const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');

    // A customer managed key: CloudWatch can't publish to a topic under the AWS managed SNS key,
    // whose policy can't be changed. Nothing outlives a message under it, so it goes with the stack.
    this.key = new Key(this, 'TopicKey', {
      description: 'GeoPlane: encrypts the alarm notification topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AlarmsEncryptNotifications',
        principals: [cloudWatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurAlarms,
      }),
    );
    this.topic = new Topic(this, 'Topic', {
      displayName: 'GeoPlane alarms',
      masterKey: this.key,
      enforceSSL: true,
    });
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AlarmsPublish',
        principals: [cloudWatch],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: fromOurAlarms,
      }),
    );
    for (const email of new Set(props.emails)) this.topic.addSubscription(new EmailSubscription(email));
    this.action = new SnsAction(this.topic);

    this.watchServerErrorRate(props);
    this.addAlarm('AuthorizerErrors', {
      name: 'authorizer-errors',
      description:
        'The REQUEST authorizer failed (Lambda Errors >= 1 in 5 minutes): callers get 500s instead of an ' +
        "answer. See the authorizer function's log group.",
      metric: props.authorizer.metricErrors({ period: alarmPeriod, statistic: 'Sum' }),
      threshold: 1,
    });
    this.watchThrottles(props.throttleWatchedFunctions ?? {});
    this.watchTableThrottles(props.table, props.tableIndexes ?? []);
    for (const [name, machine] of Object.entries(props.stateMachines)) this.watchWorkflow(name, machine);
    for (const queue of props.deadLetterQueues ?? []) this.watchDeadLetterQueue(queue);
    for (const [name, fn] of Object.entries(props.backgroundFunctions ?? {}))
      this.watchFunctionErrors(name, fn);
    for (const [name, fn] of Object.entries(props.streamConsumers ?? {})) this.watchIteratorAge(name, fn);
  }

  /**
   * Alarms when a stream consumer falls behind (ADR 0115): the age of the last record it read,
   * Lambda's IteratorAge (Maximum), reaches {@link iteratorAgeThreshold}. Its events are late by
   * as much, and records older than the event source's maximum age are set aside unread.
   */
  watchIteratorAge(name: string, fn: IFunction): Alarm {
    const id = name.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());
    return this.addAlarm(`${id}IteratorAge`, {
      name: `${name}-iterator-age`,
      description:
        `The ${name} function reads its stream ${iteratorAgeThreshold.toMinutes()} minutes or more behind (Lambda ` +
        'IteratorAge, Maximum, in 5 minutes): its events are that late. A record that keeps failing is retried ' +
        "before it is set aside; see the function's log group, its errors alarm and its dead-letter queue.",
      metric: fn.metric('IteratorAge', { period: alarmPeriod, statistic: 'Maximum' }),
      threshold: iteratorAgeThreshold.toMilliseconds(),
    });
  }

  /**
   * Throttled invocations of this stack's functions that nothing else reports (ADR 0115), summed
   * in one metric math alarm: at most {@link maxMetricsPerAlarm} functions, by FunctionName, never
   * the account-wide metric (another application's throttles are not this stack's alarm).
   */
  private watchThrottles(functions: Readonly<Record<string, IFunction>>): void {
    const entries = Object.entries(functions);
    if (entries.length === 0) return;
    if (entries.length > maxMetricsPerAlarm) {
      throw new Error(
        `the throttles alarm would read ${entries.length} functions' metrics, over CloudWatch's ` +
          `${maxMetricsPerAlarm} per alarm (ADR 0115)`,
      );
    }
    const metrics: Record<string, IMetric> = {};
    for (const [name, fn] of entries) {
      metrics[`t${Object.keys(metrics).length}`] = fn.metricThrottles({
        period: alarmPeriod,
        statistic: 'Sum',
        label: `${name} throttles`,
      });
    }
    this.addAlarm('LambdaThrottles', {
      name: 'lambda-throttles',
      description:
        `Lambda throttled this stack's ${entries.map(([name]) => name).join(', ')} (Throttles >= 1 in 5 minutes): ` +
        "the account's concurrency is exhausted (or the import step is at its importStepConcurrency), so " +
        'callers get 500s and workflow tasks retry. The API functions are not summed here: their throttles ' +
        'answer 5xx, which the api-5xx-rate alarm counts. Raise the concurrency quota or find the function that takes it.',
      metric: new MathExpression({
        expression: Object.keys(metrics)
          .map((m) => `FILL(${m}, 0)`)
          .join(' + '),
        usingMetrics: metrics,
        label: 'Throttled invocations',
        period: alarmPeriod,
      }),
      threshold: 1,
    });
  }

  /** Alarms when the queue holds a message (ApproximateNumberOfMessagesVisible >= 1), OK when it is drained. */
  watchDeadLetterQueue(queue: IQueue, name: string = pathName(queue)): Alarm {
    return this.addAlarm(`DeadLetters${name}`, {
      name: `dead-letters-${name}`,
      description:
        'A dead-letter queue holds messages (ApproximateNumberOfMessagesVisible >= 1): work that kept failing ' +
        "was set aside. Read the messages and the producer's log, fix the cause, then redrive or delete them.",
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: alarmPeriod, statistic: 'Maximum' }),
      threshold: 1,
    });
  }

  /** Alarms on any error of a function no client waits on (Lambda Errors >= 1 in 5 minutes). */
  watchFunctionErrors(name: string, fn: IFunction): Alarm {
    const id = name.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());
    return this.addAlarm(`${id}Errors`, {
      name: `${name}-errors`,
      description: `The ${name} function failed (Lambda Errors >= 1 in 5 minutes); nothing else reports it. See its log group.`,
      metric: fn.metricErrors({ period: alarmPeriod, statistic: 'Sum' }),
      threshold: 1,
    });
  }

  /** The API stage's 5xx share of requests over 5 minutes, once the window has enough requests. */
  private watchServerErrorRate(props: OperationsAlarmsProps): void {
    const stage = props.api.deploymentStage;
    const rate = props.serverErrorRatePercent ?? defaultServerErrorRatePercent;
    const minimum = props.minimumRequests ?? defaultMinimumRequests;
    this.addAlarm('ApiServerErrorRate', {
      name: 'api-5xx-rate',
      description:
        `At least ${rate}% of the management API's requests answered 5xx in 5 minutes (with ${minimum} or more ` +
        "requests). See the access log (status, errorType) and the failing functions' logs.",
      metric: new MathExpression({
        expression: `IF(requests >= ${minimum}, 100 * errors / requests, 0)`,
        usingMetrics: {
          errors: stage.metricServerError({ period: alarmPeriod, statistic: 'Sum' }),
          requests: stage.metricCount({ period: alarmPeriod, statistic: 'Sum' }),
        },
        label: '5xx share of requests (%)',
        period: alarmPeriod,
      }),
      threshold: rate,
    });
  }

  /** Read and write throttle events of the table and each index, summed (missing points count as 0). */
  private watchTableThrottles(table: ITable, indexes: readonly string[]): void {
    const dimensions: Record<string, string>[] = [
      { TableName: table.tableName },
      ...indexes.map((index) => ({ TableName: table.tableName, GlobalSecondaryIndexName: index })),
    ];
    const metrics: Record<string, IMetric> = {};
    for (const dimensionsMap of dimensions) {
      for (const metricName of tableThrottleMetrics) {
        metrics[`m${Object.keys(metrics).length}`] = new Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap,
          period: alarmPeriod,
          statistic: 'Sum',
          label: [metricName, dimensionsMap.GlobalSecondaryIndexName].filter(Boolean).join(' '),
        });
      }
    }
    if (Object.keys(metrics).length > maxMetricsPerAlarm) {
      throw new Error(
        `the table's throttle alarm would read ${Object.keys(metrics).length} metrics, over CloudWatch's ` +
          `${maxMetricsPerAlarm} per alarm: split it by index (ADR 0091)`,
      );
    }
    this.addAlarm('TableThrottles', {
      name: 'table-throttles',
      description:
        'DynamoDB throttled requests to the catalog table or its indexes (read + write throttle events >= 1 in ' +
        '5 minutes): calls answer 503 store_unavailable and workflow tasks retry. Look for a hot partition ' +
        'or the on-demand table limits.',
      metric: new MathExpression({
        expression: Object.keys(metrics)
          .map((m) => `FILL(${m}, 0)`)
          .join(' + '),
        usingMetrics: metrics,
        label: 'Throttle events',
        period: alarmPeriod,
      }),
      threshold: 1,
    });
  }

  /** Executions of the workflow that failed, timed out or were aborted. */
  private watchWorkflow(name: string, machine: IStateMachine): void {
    const id = name.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_m, _sep, c: string) => c.toUpperCase());
    const options = { period: alarmPeriod, statistic: 'Sum' };
    this.addAlarm(`${id}WorkflowFailures`, {
      name: `${name}-workflow-failures`,
      description:
        `An execution of the ${name} workflow failed, timed out or was aborted (>= 1 in 5 minutes). The ` +
        "execution's history and its task functions' logs say why; the sweep restarts or fails stuck work.",
      metric: new MathExpression({
        expression: 'FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)',
        usingMetrics: {
          failed: machine.metricFailed(options),
          timedOut: machine.metricTimedOut(options),
          aborted: machine.metricAborted(options),
        },
        label: 'Executions failed, timed out or aborted',
        period: alarmPeriod,
      }),
      threshold: 1,
    });
  }

  private addAlarm(
    id: string,
    spec: { name: string; description: string; metric: IMetric; threshold: number },
  ): Alarm {
    const alarm = new Alarm(this, id, {
      alarmName: `${this.alarmNamePrefix}-${spec.name}`,
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      // No data is no trouble: an idle API, an empty queue, a day without workflows.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.set(id, alarm);
    return alarm;
  }
}
