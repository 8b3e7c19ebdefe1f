import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { DefinitionBody, Pass, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  defaultMinimumRequests,
  defaultServerErrorRatePercent,
  iteratorAgeThreshold,
  maxMetricsPerAlarm,
  OperationsAlarms,
} from '#infra/constructs/operations-alarms.ts';
import { stageConfigOf } from '#infra/constructs/stage-config.ts';
import { createGeoPlaneApp, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { tableDefinition } from '#store/table.ts';
import { logicalId } from './iam.ts';
import { templatesOf } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

type Json = Record<string, any>;

/** The app as `cdk synth` makes it, minus bundling and CloudFormation validation (speed). */
function synthesize(context: Record<string, unknown> = {}) {
  const { stack } = createGeoPlaneApp({
    context: { ...cdkContext, ...context },
    bundling: false,
    builtinCloudFormationValidation: false,
  });
  return { stack, template: Template.fromStack(stack) };
}

const configWith = (context: Record<string, unknown>) => stageConfigOf(new App({ context }).node);

/** The alarm named `<stack>-<name>`, its properties. */
function alarmNamed(template: Template, name: string): Json {
  const found = Object.values(
    template.findResources('AWS::CloudWatch::Alarm', { Properties: { AlarmName: `GeoPlane-${name}` } }),
  );
  expect(found, name).toHaveLength(1);
  return (found[0] as Json).Properties as Json;
}

/** The metric queries of a metric math alarm, by id (the expression under `expr`). */
function queriesOf(alarm: Json): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const query of alarm.Metrics as Json[]) {
    if (query.Expression) out.expr = query;
    else out[query.Id] = query.MetricStat;
  }
  return out;
}

describe('alarmEmails (cdk.json context)', () => {
  it('is an empty list by default and in cdk.json', () => {
    expect(configWith({}).alarmEmails).toEqual([]);
    expect(configWith({ alarmEmails: '' }).alarmEmails).toEqual([]);
    expect(cdkContext.alarmEmails).toEqual([]);
    expect(configWith(cdkContext).alarmEmails).toEqual([]);
  });

  it('reads a list, its JSON text, and the comma-separated string of `-c alarmEmails=…`', () => {
    const both = ['ops@example.com', 'oncall@example.org'];
    expect(configWith({ alarmEmails: both }).alarmEmails).toEqual(both);
    expect(configWith({ alarmEmails: JSON.stringify(both) }).alarmEmails).toEqual(both);
    expect(configWith({ alarmEmails: 'ops@example.com,oncall@example.org' }).alarmEmails).toEqual(both);
    expect(configWith({ alarmEmails: ' ops@example.com , oncall@example.org, ' }).alarmEmails).toEqual(both);
    expect(configWith({ alarmEmails: 'ops@example.com' }).alarmEmails).toEqual(['ops@example.com']);
  });

  it('subscribes a repeated address once', () => {
    expect(configWith({ alarmEmails: 'ops@example.com,ops@example.com' }).alarmEmails).toEqual([
      'ops@example.com',
    ]);
  });

  it.each([
    ['not-an-address', /'not-an-address' is not an e-mail address[\s\S]*at alarmEmails\[0\]/],
    ['ops@example.com,ops@localhost', /'ops@localhost' is not an e-mail address[\s\S]*at alarmEmails\[1\]/],
    [['ops@example.com', 'two words@example.com'], /is not an e-mail address[\s\S]*at alarmEmails\[1\]/],
    [[42], /must be an e-mail address, got 42[\s\S]*at alarmEmails\[0\]/],
    [42, /must be a list of e-mail addresses[\s\S]*at alarmEmails/],
    ['["ops@example.com"', /must be a list of e-mail addresses[\s\S]*at alarmEmails/],
  ])('refuses %j, naming the key', (value, message) => {
    expect(() => configWith({ alarmEmails: value })).toThrow(/Invalid cdk\.json context/);
    expect(() => configWith({ alarmEmails: value })).toThrow(message);
  });
});

describe('OperationsAlarms in the GeoPlane stack', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  let topicId: string;
  const emails = ['ops@example.com', 'oncall@example.org'];

  beforeAll(() => {
    // The context as `cdk deploy -c alarmEmails=a,b` gives it (a string).
    ({ stack, template } = synthesize({ alarmEmails: emails.join(',') }));
    topicId = logicalId(stack.alarms.topic);
  });

  it('has one topic, encrypted with its own rotating key, publishable over TLS only', () => {
    template.resourceCountIs('AWS::SNS::Topic', 1);
    const keyId = logicalId(stack.alarms.key);
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      Description: Match.stringLikeRegexp('alarm'),
      EnableKeyRotation: true,
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it("lets CloudWatch publish and use the key for this stack's alarms only", () => {
    const sourceArn = Match.objectLike({
      'Fn::Join': ['', Match.arrayWith([':alarm:GeoPlane-*'])],
    });
    const conditions = {
      ArnLike: { 'aws:SourceArn': sourceArn },
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
    };
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Resource: { Ref: topicId },
            Condition: conditions,
          }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Condition: conditions,
          }),
        ]),
      },
    });
  });

  it('subscribes each address of alarmEmails by e-mail', () => {
    const subscriptions = Object.values(template.findResources('AWS::SNS::Subscription')).map(
      (s) => s.Properties,
    );
    expect(subscriptions).toEqual(
      emails.map((email) => ({ Protocol: 'email', Endpoint: email, TopicArn: { Ref: topicId } })),
    );
  });

  it('subscribes nobody with the cdk.json default', () => {
    synthesize().template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('outputs the topic ARN as AlarmTopicArn', () => {
    template.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
  });

  it('notifies the topic when each alarm fires and when it is OK again; no data is not breaching', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (a) => a.Properties as Json,
    );
    expect(alarms.map((a) => a.AlarmName).sort()).toEqual(
      [
        'GeoPlane-api-5xx-rate',
        'GeoPlane-authorizer-errors',
        'GeoPlane-lambda-throttles',
        'GeoPlane-table-throttles',
        'GeoPlane-deletion-workflow-failures',
        'GeoPlane-import-workflow-failures',
        // Mosaic harvest jobs (ADR 0136).
        'GeoPlane-harvest-workflow-failures',
        // Tile cache jobs (ADR 0139).
        'GeoPlane-tile-cache-workflow-failures',
        'GeoPlane-sweep-errors',
        // The catalog events' publisher and its dead-letter queue (ADR 0094).
        'GeoPlane-catalog-events-errors',
        'GeoPlane-dead-letters-catalog-events',
        // The stream reader's lag (ADR 0115).
        'GeoPlane-catalog-events-iterator-age',
      ].sort(),
    );
    for (const alarm of alarms) {
      expect(alarm.AlarmActions, alarm.AlarmName).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions, alarm.AlarmName).toEqual([{ Ref: topicId }]);
      expect(alarm.TreatMissingData, alarm.AlarmName).toBe('notBreaching');
      expect(alarm.ComparisonOperator, alarm.AlarmName).toBe('GreaterThanOrEqualToThreshold');
      expect([alarm.EvaluationPeriods, alarm.DatapointsToAlarm], alarm.AlarmName).toEqual([1, 1]);
      expect(alarm.AlarmDescription.length, alarm.AlarmName).toBeGreaterThan(60);
      // CloudFormation's schema takes ASCII descriptions only.
      expect(alarm.AlarmDescription, alarm.AlarmName).toMatch(/^[\x20-\x7e]+$/);
    }
  });

  it("alarms on the API stage's 5xx share of requests, once a window has enough of them", () => {
    const alarm = alarmNamed(template, 'api-5xx-rate');
    const queries = queriesOf(alarm);
    expect(queries.expr?.Expression).toBe(
      `IF(requests >= ${defaultMinimumRequests}, 100 * errors / requests, 0)`,
    );
    expect(alarm.Threshold).toBe(defaultServerErrorRatePercent);
    const dimensions = [
      { Name: 'ApiName', Value: 'GeoPlane-management' },
      { Name: 'Stage', Value: { Ref: logicalId(stack.api.api.deploymentStage) } },
    ];
    expect(queries.errors).toEqual({
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Dimensions: dimensions },
      Period: 300,
      Stat: 'Sum',
    });
    expect(queries.requests).toEqual({
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Count', Dimensions: dimensions },
      Period: 300,
      Stat: 'Sum',
    });
    // The API's name in the metric is the one the REST API is created with.
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'GeoPlane-management' });
  });

  it("alarms on any error of the authorizer's function", () => {
    const alarm = alarmNamed(template, 'authorizer-errors');
    expect(alarm).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [
        { Name: 'FunctionName', Value: { Ref: logicalId(stack.api.authorizerFunction.function) } },
      ],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
    });
  });

  it("alarms on throttles of the stack's own functions only, summed in one metric math alarm (ADR 0115)", () => {
    const alarm = alarmNamed(template, 'lambda-throttles');
    // Never the account-wide metric (no FunctionName): another application's throttles aren't ours.
    expect(alarm.MetricName).toBeUndefined();
    expect(alarm.Threshold).toBe(1);
    const { expr, ...metrics } = queriesOf(alarm);
    const ids = Object.keys(metrics);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThanOrEqual(maxMetricsPerAlarm);
    expect(expr?.Expression).toBe(ids.map((id) => `FILL(${id}, 0)`).join(' + '));
    const watched = [
      stack.api.authorizerFunction.function,
      ...[...stack.deletionWorkflow.functions.values()].map((fn) => fn.function),
      ...[...stack.importWorkflow.functions.values()].map((fn) => fn.function),
      ...[...stack.harvestWorkflow.functions.values()].map((fn) => fn.function),
      stack.sweeps.function.function,
      stack.catalogEvents.function.function,
    ];
    expect(Object.values(metrics)).toEqual(
      watched.map((fn) => ({
        Metric: {
          Namespace: 'AWS/Lambda',
          MetricName: 'Throttles',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(fn) } }],
        },
        Period: 300,
        Stat: 'Sum',
      })),
    );
  });

  it("alarms when the catalog events' stream reader falls 15 minutes behind (IteratorAge, ADR 0115)", () => {
    const alarm = alarmNamed(template, 'catalog-events-iterator-age');
    expect(alarm).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [
        { Name: 'FunctionName', Value: { Ref: logicalId(stack.catalogEvents.function.function) } },
      ],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: iteratorAgeThreshold.toMilliseconds(),
    });
    expect(iteratorAgeThreshold.toMinutes()).toBe(15);
  });

  it("alarms on the table's and each index's read and write throttle events", () => {
    const alarm = alarmNamed(template, 'table-throttles');
    const queries = queriesOf(alarm);
    const table = { Name: 'TableName', Value: { Ref: logicalId(stack.table.table) } };
    const scopes = [
      [table],
      // CDK sorts dimensions by name.
      ...tableDefinition.globalSecondaryIndexes.map((gsi) => [
        { Name: 'GlobalSecondaryIndexName', Value: gsi.indexName },
        table,
      ]),
    ];
    const metrics = Object.entries(queries)
      .filter(([id]) => id !== 'expr')
      .map(([, stat]) => stat);
    expect(metrics).toEqual(
      scopes.flatMap((Dimensions) =>
        ['ReadThrottleEvents', 'WriteThrottleEvents'].map((MetricName) => ({
          Metric: { Namespace: 'AWS/DynamoDB', MetricName, Dimensions },
          Period: 300,
          Stat: 'Sum',
        })),
      ),
    );
    expect(queries.expr?.Expression).toBe(metrics.map((_, i) => `FILL(m${i}, 0)`).join(' + '));
    expect(alarm.Threshold).toBe(1);
  });

  it.each([
    ['deletion', (s: GeoPlaneStack) => s.deletionWorkflow.stateMachine],
    ['import', (s: GeoPlaneStack) => s.importWorkflow.stateMachine],
    ['harvest', (s: GeoPlaneStack) => s.harvestWorkflow.stateMachine],
    // Tile cache jobs (ADR 0139).
    ['tile-cache', (s: GeoPlaneStack) => s.tileCacheWorkflow.stateMachine],
  ])('alarms on failed, timed-out and aborted executions of the %s workflow', (name, machineOf) => {
    const alarm = alarmNamed(template, `${name}-workflow-failures`);
    const queries = queriesOf(alarm);
    expect(queries.expr?.Expression).toBe('FILL(failed, 0) + FILL(timedOut, 0) + FILL(aborted, 0)');
    const dimensions = [{ Name: 'StateMachineArn', Value: { Ref: logicalId(machineOf(stack)) } }];
    for (const [id, metricName] of [
      ['failed', 'ExecutionsFailed'],
      ['timedOut', 'ExecutionsTimedOut'],
      ['aborted', 'ExecutionsAborted'],
    ] as const) {
      expect(queries[id], id).toEqual({
        Metric: { Namespace: 'AWS/States', MetricName: metricName, Dimensions: dimensions },
        Period: 300,
        Stat: 'Sum',
      });
    }
    expect(alarm.Threshold).toBe(1);
  });

  it("alarms on any error of the sweep's function", () => {
    const alarm = alarmNamed(template, 'sweep-errors');
    expect(alarm).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack.sweeps.function.function) } }],
      Threshold: 1,
    });
  });

  it('lives in the parent stack (no nested stack of its own, none of the operation stacks)', () => {
    for (const [s, t] of templatesOf(stack).slice(1)) {
      expect(Object.keys(t.findResources('AWS::CloudWatch::Alarm')), s.node.path).toEqual([]);
      expect(Object.keys(t.findResources('AWS::SNS::Topic')), s.node.path).toEqual([]);
    }
  });
});

describe('OperationsAlarms on its own', () => {
  /** A minimal stack with what the construct watches. */
  function fixture() {
    const stack = new Stack(new App(), 'Ops');
    const api = new RestApi(stack, 'Api', { restApiName: 'ops-api' });
    api.root.addMethod('GET', new MockIntegration());
    const fn = new LambdaFunction(stack, 'Fn', {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler = async () => ({})'),
    });
    const table = new Table(stack, 'Table', { partitionKey: { name: 'PK', type: AttributeType.STRING } });
    const machine = new StateMachine(stack, 'Machine', {
      definitionBody: DefinitionBody.fromChainable(new Pass(stack, 'Pass')),
    });
    return { stack, api, fn, table, machine };
  }

  it('watches any number of dead-letter queues, given and added later', () => {
    const { stack, api, fn, table, machine } = fixture();
    const [first, second, later] = ['First', 'Second', 'Later'].map((id) => new Queue(stack, id)) as [
      Queue,
      Queue,
      Queue,
    ];
    const alarms = new OperationsAlarms(stack, 'Alarms', {
      api,
      authorizer: fn,
      stateMachines: { job: machine },
      table,
      deadLetterQueues: [first, second],
      emails: [],
    });
    // The default name is the queue's path below the stack; a later one may name itself.
    alarms.watchDeadLetterQueue(later, 'later');
    const template = Template.fromStack(stack);
    const topic = { Ref: logicalId(alarms.topic) };
    for (const [queue, name] of [
      [first, 'First'],
      [second, 'Second'],
      [later, 'later'],
    ] as const) {
      const found = Object.values(
        template.findResources('AWS::CloudWatch::Alarm', {
          Properties: { AlarmName: `Ops-dead-letters-${name}` },
        }),
      );
      expect(found, name).toHaveLength(1);
      expect(found[0]?.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(queue), 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [topic],
        OKActions: [topic],
      });
    }
  }, 120_000);

  it('watches no dead-letter queue when given none', () => {
    const { stack, api, fn, table, machine } = fixture();
    new OperationsAlarms(stack, 'Alarms', {
      api,
      authorizer: fn,
      stateMachines: { job: machine },
      table,
      emails: [],
    });
    const names = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')).map(
      (a) => a.Properties.AlarmName as string,
    );
    expect(names.filter((n) => n.includes('dead-letters'))).toEqual([]);
    expect(names).toContain('Ops-job-workflow-failures');
  });

  it('refuses more throttle-watched functions than one alarm can read, and has no throttles alarm for none', () => {
    const { stack, api, fn, table, machine } = fixture();
    const many = Object.fromEntries(
      Array.from({ length: maxMetricsPerAlarm + 1 }, (_, i) => [`fn-${i}`, fn] as const),
    );
    const props = { api, authorizer: fn, stateMachines: { job: machine }, table, emails: [] };
    expect(
      () => new OperationsAlarms(stack, 'TooMany', { ...props, throttleWatchedFunctions: many }),
    ).toThrow(/over CloudWatch's 10 per alarm/);
    const other = fixture();
    new OperationsAlarms(other.stack, 'Alarms', {
      ...props,
      api: other.api,
      authorizer: other.fn,
      stateMachines: { job: other.machine },
      table: other.table,
    });
    const names = Object.values(Template.fromStack(other.stack).findResources('AWS::CloudWatch::Alarm')).map(
      (a) => a.Properties.AlarmName as string,
    );
    expect(names).not.toContain('Ops-lambda-throttles');
  });

  it('takes the 5xx threshold and minimum request count from its props', () => {
    const { stack, api, fn, table, machine } = fixture();
    new OperationsAlarms(stack, 'Alarms', {
      api,
      authorizer: fn,
      stateMachines: { job: machine },
      table,
      emails: [],
      serverErrorRatePercent: 2,
      minimumRequests: 100,
    });
    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Ops-api-5xx-rate',
      Threshold: 2,
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'IF(requests >= 100, 100 * errors / requests, 0)' }),
      ]),
    });
  });

  it("refuses a table whose throttle metrics exceed CloudWatch's 10 per alarm", () => {
    const { stack, api, fn, table, machine } = fixture();
    expect(
      () =>
        new OperationsAlarms(stack, 'Alarms', {
          api,
          authorizer: fn,
          stateMachines: { job: machine },
          table,
          tableIndexes: ['A', 'B', 'C', 'D', 'E'],
          emails: [],
        }),
    ).toThrow(/12 metrics, over CloudWatch's 10 per alarm/);
  });
});
