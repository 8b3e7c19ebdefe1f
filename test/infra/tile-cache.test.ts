import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import type { ApiFunction } from '#infra/constructs/api-function.ts';
import {
  jobLoopTaskDescription,
  jobLoopTaskEntries,
  jobLoopTasks,
} from '#infra/constructs/job-loop-workflow.ts';
import { tileObjectActions, tilePrefix } from '#infra/constructs/tile-cache.ts';
import { eniActions, eniDescribeActions } from '#infra/constructs/vpc-placement.ts';
import { appEntries, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import {
  type TileCacheTask,
  tileCacheStepBudgetMs,
  tileCacheTaskHandlers,
  tileCacheWorkflow,
} from '#infra/workflows/tile-cache-workflow.ts';
import {
  describeJobLoopRole,
  describeJobLoopStateMachine,
  itGrantsEachTaskItsTableActions,
  itIsStartedOnlyBy,
  synthesize,
  taskFunction,
} from '../support/job-loop-workflow.ts';
import { actionsIn, asArray, logicalId, policyDocuments, type Statement, statementsOfRole } from './iam.ts';

/** How a statement names the tile objects / the bucket itself (merged template: the bucket's Ref). */
const tileObjects = (bucketId: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }, `/${tilePrefix}*`]],
});
const tileBucketArn = (bucketId: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }]],
});
const s3Statements = (statements: Statement[]) =>
  statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('s3:')));
const kmsStatements = (statements: Statement[]) =>
  statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('kms:')));

describe('persistent tile cache (ADR 0139)', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  let bucketId: string;
  const fnOf = (task: TileCacheTask): ApiFunction => taskFunction(stack.tileCacheWorkflow, task);
  const fnId = (task: TileCacheTask) => logicalId(fnOf(task).function);
  const envOf = (fn: ApiFunction) =>
    template.findResources('AWS::Lambda::Function')[logicalId(fn.function)]?.Properties.Environment
      .Variables as Record<string, unknown>;

  const deployed = () => ({ stack, template, workflow: stack.tileCacheWorkflow });

  beforeAll(() => {
    ({ stack, template } = synthesize());
    bucketId = stack.tileCache.bucketLogicalId;
  }, 120_000);

  describe('the bucket', () => {
    let bucket: Record<string, any>;
    beforeAll(() => {
      bucket = template.findResources('AWS::S3::Bucket')[bucketId] as Record<string, any>;
    });

    it('blocks public access, is SSE-S3 encrypted, owner-enforced and unversioned', () => {
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.BucketEncryption).toEqual({
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      });
      expect(bucket.Properties.OwnershipControls).toEqual({
        Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }],
      });
      expect(bucket.Properties.VersioningConfiguration?.Status).not.toBe('Enabled');
    });

    it('enforces TLS: its policy denies every request without SecureTransport', () => {
      const policies = Object.values(template.findResources('AWS::S3::BucketPolicy')).filter(
        (p) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: bucketId }),
      );
      expect(policies).toHaveLength(1);
      const statements = policies[0]?.Properties.PolicyDocument.Statement as Record<string, any>[];
      expect(statements).toEqual([
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Principal: { AWS: '*' },
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      ]);
    });

    it('aborts incomplete multipart uploads and expires noncurrent versions after a day', () => {
      expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
            Status: 'Enabled',
          }),
          expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 1 }, Status: 'Enabled' }),
        ]),
      );
    });

    it('is retained with the stack, like the upload bucket', () => {
      expect(bucket.DeletionPolicy).toBe('Retain');
      expect(bucket.UpdateReplacePolicy).toBe('Retain');
    });
  });

  describeJobLoopStateMachine(tileCacheWorkflow, deployed, (definitionOf) => {
    it("covers the step's Lambda timeout with the ASL's task timeout", () => {
      const step = (definitionOf().States as Record<string, any>)[tileCacheWorkflow.states.step];
      expect(step.TimeoutSeconds).toBeGreaterThanOrEqual(180);
    });
  });

  describe('task functions', () => {
    it('has one function per task, bundled with the API functions, with its timeout, budget and bucket', () => {
      expect([...stack.tileCacheWorkflow.functions.keys()].sort()).toEqual(
        Object.keys(tileCacheTaskHandlers).sort(),
      );
      expect(jobLoopTaskEntries(tileCacheWorkflow)).toEqual(Object.values(tileCacheTaskHandlers));
      for (const entry of jobLoopTaskEntries(tileCacheWorkflow)) expect(appEntries(routes)).toContain(entry);
      const functions = template.findResources('AWS::Lambda::Function');
      for (const task of jobLoopTasks(tileCacheWorkflow)) {
        const props = functions[fnId(task)]?.Properties;
        const env = props.Environment.Variables as Record<string, unknown>;
        expect(props.Description, task).toBe(jobLoopTaskDescription(tileCacheWorkflow, task));
        expect(props.Timeout, task).toBe(task === 'step' ? 180 : 30);
        expect(env.TILE_CACHE_STEP_BUDGET_MS, task).toBe(
          task === 'step' ? String(tileCacheStepBudgetMs) : undefined,
        );
        expect(env.TILE_CACHE_BUCKET, task).toEqual(task === 'step' ? { Ref: bucketId } : undefined);
        expect(env.TILE_CACHE_STATE_MACHINE_ARN, task).toBeUndefined();
        // Not in any VPC without cdk.json vpc.
        expect(props.VpcConfig, task).toBeUndefined();
      }
      // The budget leaves the step time to finish the chunk in flight.
      expect(tileCacheStepBudgetMs).toBeLessThanOrEqual(180_000 / 2);
    });

    itGrantsEachTaskItsTableActions(tileCacheWorkflow, 'tileCacheTaskAccess', deployed);

    it('lets the step decrypt service passwords with the secrets key (only), as the data plane does', () => {
      const key = { 'Fn::GetAtt': [logicalId(stack.api.secretsKey as never), 'Arn'] };
      const kms = kmsStatements(statementsOfRole(template, fnOf('step').role));
      expect(kms).toEqual([
        {
          Effect: 'Allow',
          Action: 'kms:Decrypt',
          Resource: key,
          Condition: {
            'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['workspace_id', 'service_id'] },
            Null: {
              'kms:EncryptionContext:workspace_id': 'false',
              'kms:EncryptionContext:service_id': 'false',
            },
          },
        },
      ]);
      expect(envOf(fnOf('step')).KMS_KEY_ID).toEqual(key);
    });

    it('gives the failure recorder no S3, KMS, Step Functions, Lambda or API Gateway action', () => {
      const statements = statementsOfRole(template, fnOf('recordFailure').role);
      for (const service of ['s3', 'kms', 'states', 'lambda', 'apigateway'])
        expect(actionsIn(statements, service), service).toEqual([]);
      expect(envOf(fnOf('recordFailure')).KMS_KEY_ID).toBeUndefined();
    });

    it('gives the step no Step Functions, Lambda or API Gateway action', () => {
      const statements = statementsOfRole(template, fnOf('step').role);
      for (const service of ['states', 'lambda', 'apigateway'])
        expect(actionsIn(statements, service), service).toEqual([]);
    });
  });

  describe('the tile store grants', () => {
    const expectedS3 = () => [
      // CDK sorts the actions of a statement.
      { Effect: 'Allow', Action: [...tileObjectActions].sort(), Resource: tileObjects(bucketId) },
      { Effect: 'Allow', Action: 's3:ListBucket', Resource: tileBucketArn(bucketId) },
    ];

    it('lets the step get, put and delete tiles/* of the tile bucket and list it, nothing else of S3', () => {
      expect(s3Statements(statementsOfRole(template, fnOf('step').role))).toEqual(expectedS3());
    });

    it('lets the data plane function do exactly the same, and tells it the bucket', () => {
      const fn = stack.dataPlane.stack.function;
      expect(s3Statements(statementsOfRole(template, fn.role))).toEqual(expectedS3());
      expect(envOf(fn).TILE_CACHE_BUCKET).toEqual({ Ref: bucketId });
    });

    it('gives no other role any action on the tile bucket (the sweep only deletes: test/infra/sweeps.test.ts), and none of them on another bucket', () => {
      // The integrity check and its repair list the bucket, nothing more (ADR 0138: below).
      const lister = (id: string) => logicalId((stack.api.functions.get(id) as ApiFunction).role);
      const holders = [
        logicalId(fnOf('step').role),
        logicalId(stack.dataPlane.stack.function.role),
        logicalId(stack.sweeps.function.role),
        lister('getCatalogIntegrity'),
        lister('repairCatalogIntegrity'),
      ];
      const bucketRef = JSON.stringify({ Ref: bucketId });
      const onTiles = policyDocuments(template)
        .filter(([, statements]) => JSON.stringify(statements).includes(bucketRef))
        .map(([id]) => id);
      expect(onTiles.sort()).toEqual([...holders].sort());
      for (const [id, statements] of policyDocuments(template)) {
        if (!holders.includes(id)) continue;
        for (const s of s3Statements(statements)) expect(JSON.stringify(s.Resource), id).toContain(bucketRef);
      }
    });
  });

  it('lets the integrity check and repair list the tile bucket (their usage check), and nothing else of S3', () => {
    for (const id of ['getCatalogIntegrity', 'repairCatalogIntegrity']) {
      const fn = stack.api.functions.get(id);
      expect(fn, id).toBeDefined();
      const statements = statementsOfRole(template, (fn as NonNullable<typeof fn>).role);
      expect(actionsIn(statements, 's3'), id).toEqual(['s3:ListBucket']);
      expect(JSON.stringify(s3Statements(statements).map((s) => s.Resource)), id).not.toContain('/*');
    }
  });

  describeJobLoopRole(tileCacheWorkflow, deployed);

  itIsStartedOnlyBy(deployed, {
    operationId: 'createTileCacheJob',
    starts: 'tileCache',
    variable: 'TILE_CACHE_STATE_MACHINE_ARN',
  });
});

describe('persistent tile cache with cdk.json vpc (ADR 0112)', () => {
  it('runs the step (only) in the operator’s subnets, with the ENI actions and the S3 gateway endpoint', () => {
    const subnets = ['subnet-0aaaaaaaaaaaaaaa1', 'subnet-0bbbbbbbbbbbbbbb2'];
    const groups = ['sg-0aaaaaaaaaaaaaaa1'];
    const { stack, template } = synthesize({
      vpc: {
        vpcId: 'vpc-0123456789abcdef0',
        privateSubnetIds: subnets,
        securityGroupIds: groups,
        endpoints: 'gateway',
        routeTableIds: ['rtb-0aaaaaaaaaaaaaaa1'],
      },
    });
    const functions = template.findResources('AWS::Lambda::Function');
    const step = stack.tileCacheWorkflow.functions.get('step') as ApiFunction;
    const recorder = stack.tileCacheWorkflow.functions.get('recordFailure') as ApiFunction;
    expect(functions[logicalId(step.function)]?.Properties.VpcConfig).toEqual({
      SubnetIds: subnets,
      SecurityGroupIds: groups,
    });
    expect(functions[logicalId(recorder.function)]?.Properties.VpcConfig).toBeUndefined();
    expect(actionsIn(statementsOfRole(template, step.role), 'ec2')).toEqual(
      [...eniDescribeActions, ...eniActions].sort(),
    );
    expect(actionsIn(statementsOfRole(template, recorder.role), 'ec2')).toEqual([]);
    // The tiles go through the S3 gateway endpoint (no NAT needed).
    expect(stack.vpcEndpoints?.endpoints.has('s3')).toBe(true);
  }, 120_000);
});
