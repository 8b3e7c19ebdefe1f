import { readFileSync } from 'node:fs';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { sweepData, sweepEntry } from '#infra/constructs/sweeps.ts';
import { createGeoPlaneApp, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { actionsIn, asArray, logicalId, policyDocuments, statementsOfRole } from './iam.ts';
import { deploymentTemplate } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

describe('the scheduled sweep (ADR 0093)', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  let fnId: string;

  beforeAll(() => {
    ({ stack } = createGeoPlaneApp({
      context: cdkContext,
      bundling: false,
      builtinCloudFormationValidation: false,
    }));
    template = deploymentTemplate(stack);
    fnId = logicalId(stack.sweeps.function.function);
  });

  it('runs its function every 5 minutes from an EventBridge rule, without retrying an old sweep', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [fnId, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
    // Only that rule may invoke it.
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [logicalId(stack.sweeps.rule), 'Arn'] },
    });
  });

  it('bundles functions/sweeps/sweep.ts and tells it the four state machines and the sweep settings', () => {
    expect(sweepEntry).toBe('functions/sweeps/sweep.ts');
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^sweep: '),
      Environment: {
        Variables: Match.objectLike({
          TABLE_NAME: { Ref: logicalId(stack.table.table) },
          DELETION_STATE_MACHINE_ARN: { Ref: logicalId(stack.deletionWorkflow.stateMachine) },
          IMPORT_STATE_MACHINE_ARN: { Ref: logicalId(stack.importWorkflow.stateMachine) },
          HARVEST_STATE_MACHINE_ARN: { Ref: logicalId(stack.harvestWorkflow.stateMachine) },
          TILE_CACHE_STATE_MACHINE_ARN: { Ref: logicalId(stack.tileCacheWorkflow.stateMachine) },
          SWEEP_STUCK_AFTER_MINUTES: '15',
          SWEEP_MAX_RESTARTS: '3',
        }),
      },
    });
  });

  it("grants exactly the sweep's table actions, on the table and its index only", () => {
    const statements = statementsOfRole(template, stack.sweeps.function.role);
    // PutAuditRecord is PutItem on the audit partitions (ADR 0094).
    expect(actionsIn(statements, 'dynamodb')).toEqual(
      [...new Set(sweepData.map((a) => `dynamodb:${a === 'PutAuditRecord' ? 'PutItem' : a}`))].sort(),
    );
    for (const statement of statements.filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('dynamodb:')),
    ))
      expect(asArray(statement.Resource)).toContainEqual({
        'Fn::GetAtt': [logicalId(stack.table.table), 'Arn'],
      });
    expect(actionsIn(statements, 'dynamodb')).not.toContain('dynamodb:Scan');
  });

  it('may start executions of the four state machines and describe their executions, nothing else of Step Functions', () => {
    const statements = statementsOfRole(template, stack.sweeps.function.role).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('states:')),
    );
    // Deletions and imports, and the job loops' harvest and tile cache jobs (ADR 0136, 0139).
    const machines = [
      stack.deletionWorkflow.stateMachine,
      stack.importWorkflow.stateMachine,
      stack.harvestWorkflow.stateMachine,
      stack.tileCacheWorkflow.stateMachine,
    ].map(logicalId);
    const start = statements.filter((s) => asArray(s.Action).includes('states:StartExecution'));
    expect(start.flatMap((s) => asArray(s.Resource))).toEqual(
      expect.arrayContaining(machines.map((id) => ({ Ref: id }))),
    );
    expect(start.flatMap((s) => asArray(s.Resource))).toHaveLength(4);
    const describe = statements.filter((s) => asArray(s.Action).includes('states:DescribeExecution'));
    expect(describe).toHaveLength(1);
    const resources = JSON.stringify(describe[0]?.Resource);
    for (const id of machines) expect(resources).toContain(`"${id}","Name"`);
    expect(resources).toContain(':execution:');
    expect(actionsIn(statements, 'states')).toEqual(['states:DescribeExecution', 'states:StartExecution']);
    const services = new Set(
      statementsOfRole(template, stack.sweeps.function.role).flatMap((s) =>
        asArray(s.Action).map((a) => a.split(':')[0]),
      ),
    );
    // API Gateway: the orphaned keys of the usage-key pool (ADR 0111; test/infra/usage-keys.test.ts);
    // S3: the tiles of deleted workspaces (ADR 0139; below).
    expect([...services].sort()).toEqual(['apigateway', 'dynamodb', 'logs', 's3', 'states', 'xray']);
  });

  it('may list the tile cache bucket and delete under its tiles/ prefix, nothing else of S3 (ADR 0139)', () => {
    const statements = statementsOfRole(template, stack.sweeps.function.role).filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('s3:')),
    );
    expect(actionsIn(statements, 's3')).toEqual(['s3:DeleteObject', 's3:ListBucket']);
    const bucket = logicalId(stack.tileCache.bucket);
    const deletes = statements.filter((s) => asArray(s.Action).includes('s3:DeleteObject'));
    expect(JSON.stringify(deletes.map((s) => s.Resource))).toContain(bucket);
    expect(JSON.stringify(deletes.map((s) => s.Resource))).toContain('/tiles/*');
    const lists = statements.filter((s) => asArray(s.Action).includes('s3:ListBucket'));
    expect(JSON.stringify(lists.map((s) => s.Resource))).toContain(bucket);
    const env = template.findResources('AWS::Lambda::Function', {
      Properties: { Description: Match.stringLikeRegexp('^sweep') },
    });
    expect(JSON.stringify(env)).toContain('TILE_CACHE_BUCKET');
  });

  it('is the only function that may describe executions (beside it, the import state machine, for its nested deletion)', () => {
    const own = logicalId(stack.sweeps.function.role);
    const holders = policyDocuments(template)
      .filter(([, statements]) => actionsIn(statements, 'states').includes('states:DescribeExecution'))
      .map(([id]) => id);
    // The import state machine runs a rollback's deletion as a nested execution (ADR 0146).
    expect(holders.sort()).toEqual([logicalId(stack.importWorkflow.role), own].sort());
  });

  it('leaves no cdk-nag AwsSolutions finding on the sweep', () => {
    const report = new AwsSolutionsChecks().validateScope(stack.sweeps);
    const left = report.violations.flatMap((v) =>
      v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`),
    );
    expect(left).toEqual([]);
  });
});
