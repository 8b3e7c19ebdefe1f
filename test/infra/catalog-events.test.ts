import { readFileSync } from 'node:fs';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import { createGeoPlaneApp, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { actionsIn, asArray, logicalId, statementsOfRole } from './iam.ts';
import { deploymentTemplate } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

describe('catalog-change events and audit records (ADR 0094)', () => {
  let stack: GeoPlaneStack;
  let template: Template;

  beforeAll(() => {
    ({ stack } = createGeoPlaneApp({
      context: cdkContext,
      bundling: false,
      builtinCloudFormationValidation: false,
    }));
    template = deploymentTemplate(stack);
  });

  it("streams the table's new images", () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
    });
  });

  it('invokes the publisher only for inserted audit records of committed changes, in order, with a dead-letter queue', () => {
    const fn = logicalId(stack.catalogEvents.function.function);
    const queue = logicalId(stack.catalogEvents.deadLetterQueue);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fn },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      ParallelizationFactor: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queue, 'Arn'] } } },
      FilterCriteria: {
        Filters: [
          {
            Pattern: JSON.stringify({
              eventName: ['INSERT'],
              dynamodb: { NewImage: { entity: { S: ['AuditRecord'] }, outcome: { S: ['succeeded'] } } },
            }),
          },
        ],
      },
    });
    template.hasResourceProperties('AWS::SQS::Queue', Match.objectLike({ SqsManagedSseEnabled: true }));
  });

  it("lets the publisher put events on GeoPlane's bus only, read the stream only, and touch no table item", () => {
    const statements = statementsOfRole(template, stack.catalogEvents.function.role);
    const bus = logicalId(stack.catalogEvents.bus);
    const puts = statements.filter((s) => asArray(s.Action).includes('events:PutEvents'));
    expect(puts.map((s) => s.Resource)).toEqual([{ 'Fn::GetAtt': [bus, 'Arn'] }]);
    expect(actionsIn(statements, 'events')).toEqual(['events:PutEvents']);
    expect(actionsIn(statements, 'dynamodb')).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ EVENT_BUS_NAME: { Ref: bus } }) },
    });
  });

  it('grants a mutating route that puts no item of its own PutItem on the audit partitions only', () => {
    const op = routes.find((r) => r.operationId === 'revokeAPIKey') as Operation;
    expect(op.data).not.toContain('PutItem');
    const fn = stack.api.functions.get(op.operationId);
    if (!fn) throw new Error('no revokeAPIKey function');
    const puts = statementsOfRole(template, fn.role).filter((s) =>
      asArray(s.Action).includes('dynamodb:PutItem'),
    );
    expect(puts).toHaveLength(1);
    expect((puts[0] as { Condition?: unknown } | undefined)?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#*'] },
    });
    // A read route writes nothing at all.
    const get = stack.api.functions.get('getWorkspace');
    if (!get) throw new Error('no getWorkspace function');
    expect(actionsIn(statementsOfRole(template, get.role), 'dynamodb')).not.toContain('dynamodb:PutItem');
  });
});
