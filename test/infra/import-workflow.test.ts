import { App, Stack } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '#api/operation.ts';
import { routes } from '#api/routes.ts';
import { allowedDatabaseHosts, repositoryRoot } from '#infra/constructs/api-function.ts';
import { CatalogTable } from '#infra/constructs/catalog-table.ts';
import { FunctionBundles } from '#infra/constructs/function-bundles.ts';
import { uploadPrefix } from '#infra/constructs/import-uploads.ts';
import {
  importStepBudgetMs,
  importStepEphemeralStorage,
  importStepMemoryMb,
  importStepTimeout,
  importTaskEntries,
  importTasks,
  recordImportFailureTimeout,
} from '#infra/constructs/import-workflow.ts';
import { ManagementApi, managementApiEntries } from '#infra/constructs/management-api.ts';
import {
  handlesImports,
  maxOperationsPerStack,
  operationStackOf,
  resourcesPerOperation,
  uploadActions,
} from '#infra/constructs/operation-stacks.ts';
import { stageConfigOf } from '#infra/constructs/stage-config.ts';
import type { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import {
  deletionMachinePlaceholder,
  type ImportTask,
  importTaskAccess,
  importTaskArnPlaceholders,
  importTaskHandlers,
  importTaskStates,
  nestedDeletionState,
  substitutedImportDefinition,
} from '#infra/workflows/import-workflow.ts';
import {
  actionsIn,
  asArray,
  expectTaskInvokerRole,
  logDelivery,
  logicalId,
  policyDocuments,
  type Statement,
  statementsOfRole,
  xray,
} from './iam.ts';
import { cdkContext, resourceCount, synthesize, templatesOf } from './templates.ts';

const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:geoplane/import-db-AbC123';
/** A stage with every import setting. */
const configured = {
  importDatabase: JSON.stringify({
    host: 'imports.cluster-abc.eu-west-1.rds.amazonaws.com',
    port: 5432,
    database: 'imports',
    secretArn,
    sslmode: 'verify-full',
  }),
  importBuckets: 'geo-sources, more-sources',
  importMaxBytes: 1024 ** 3,
  importUploadExpiryDays: 3,
  importUploadOrigins: 'https://console.example.com',
  allowedDatabaseHosts: '10.0.0.0/16:5432',
};

const byOperationId = (id: string) => routes.find((op) => op.operationId === id) as Operation;
const importRoutes = routes.filter(handlesImports);
const taskOfState = (name: string) => importTaskStates[name] as ImportTask;
const failureState = Object.keys(importTaskStates).find((name) => taskOfState(name) === 'recordFailure');

/** How a statement names the upload bucket's objects / the bucket itself (merged template: the bucket's Ref). */
const uploadObjects = (bucketId: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }, `/${uploadPrefix}*`]],
});
const uploadBucketArn = (bucketId: string) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { Ref: bucketId }]],
});
const s3Statements = (statements: Statement[]) =>
  statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('s3:')));

describe('import workflow (default stage: no import database, no import buckets)', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  let bucketId: string;
  const fnOf = (task: ImportTask) => {
    const fn = stack.importWorkflow.functions.get(task);
    if (!fn) throw new Error(`no function for ${task}`);
    return fn;
  };
  const fnId = (task: ImportTask) => logicalId(fnOf(task).function);
  const props = (task: ImportTask) =>
    template.findResources('AWS::Lambda::Function')[fnId(task)]?.Properties as Record<string, any>;

  beforeAll(() => {
    ({ stack, template } = synthesize());
    bucketId = logicalId(stack.importUploads.bucket);
  });

  describe('state machine', () => {
    let definition: ReturnType<typeof substitutedImportDefinition>;
    let stateMachine: Record<string, any>;
    const arnMarker = (task: ImportTask) => `arn-of:${fnId(task)}`;

    beforeAll(() => {
      stateMachine = template.findResources('AWS::StepFunctions::StateMachine')[
        logicalId(stack.importWorkflow.stateMachine)
      ]?.Properties;
      let text = stateMachine.DefinitionString as string;
      for (const [placeholder, value] of Object.entries(
        stateMachine.DefinitionSubstitutions as Record<
          string,
          { 'Fn::GetAtt': [string, string] } | { Ref: string }
        >,
      )) {
        const id = 'Ref' in value ? value.Ref : value['Fn::GetAtt'][0];
        text = text.replaceAll(`\${${placeholder}}`, `arn-of:${id}`);
      }
      expect(text).not.toContain('${');
      definition = JSON.parse(text);
    });

    it('is a Standard state machine with X-Ray and ALL events logged without execution data', () => {
      expect(stateMachine).toMatchObject({
        StateMachineType: 'STANDARD',
        TracingConfiguration: { Enabled: true },
        RoleArn: { 'Fn::GetAtt': [logicalId(stack.importWorkflow.role), 'Arn'] },
        LoggingConfiguration: {
          Level: 'ALL',
          IncludeExecutionData: false,
          Destinations: [
            {
              CloudWatchLogsLogGroup: {
                LogGroupArn: { 'Fn::GetAtt': [logicalId(stack.importWorkflow.logGroup), 'Arn'] },
              },
            },
          ],
        },
      });
      template.hasResourceProperties('AWS::Logs::LogGroup', {
        LogGroupName: '/aws/vendedlogs/states/GeoPlane-import',
        RetentionInDays: 30,
      });
    });

    it("maps each task's placeholder to exactly its own function's ARN, and the nested one to the deletion machine", () => {
      expect(stateMachine.DefinitionSubstitutions).toEqual({
        ...Object.fromEntries(
          importTasks.map((task) => [importTaskArnPlaceholders[task], { 'Fn::GetAtt': [fnId(task), 'Arn'] }]),
        ),
        [deletionMachinePlaceholder]: { Ref: logicalId(stack.deletionWorkflow.stateMachine) },
      });
    });

    it("runs a rollback's deletion as a nested execution of the deletion machine, and comes back to the step", () => {
      const states = definition.States as Record<string, any>;
      const nested = states[nestedDeletionState];
      expect(nested).toMatchObject({
        Type: 'Task',
        Resource: 'arn:aws:states:::states:startExecution.sync:2',
        Parameters: {
          StateMachineArn: `arn-of:${logicalId(stack.deletionWorkflow.stateMachine)}`,
          'Name.$': '$.deletion.name',
          'Input.$': '$.deletion.input',
        },
        ResultPath: null,
        Next: Object.keys(importTaskStates).find((name) => taskOfState(name) === 'step'),
      });
      // A deletion that fails or can't be run: the step looks again after a wait (no loop without one).
      expect(nested.Catch).toEqual([expect.objectContaining({ ErrorEquals: ['States.ALL'] })]);
      expect(states[nested.Catch[0].Next]?.Type).toBe('Wait');
      // The step's answer routes there only when it names a deletion, and only when not done.
      const choice = Object.values(states).find((state: any) =>
        state.Choices?.some((c: any) => c.Next === nestedDeletionState),
      ) as { Choices: { Variable: string; Next: string }[] };
      const order = choice.Choices.map((c) => c.Variable);
      expect(order.indexOf('$.done')).toBeLessThan(order.indexOf('$.deletion'));
      expect(order.indexOf('$.deletion')).toBeLessThan(order.indexOf('$.wait_seconds'));
    });

    it('is the definition of infra/workflows/import-workflow.ts, the one the local host runs', () => {
      expect(definition).toEqual(
        substitutedImportDefinition(
          Object.fromEntries(importTasks.map((task) => [task, arnMarker(task)])) as Record<
            ImportTask,
            string
          >,
          `arn-of:${logicalId(stack.deletionWorkflow.stateMachine)}`,
        ),
      );
    });

    it.each(Object.keys(importTaskStates))('runs "%s" on its task function', (name) => {
      const state = (definition.States as Record<string, any>)[name];
      expect(state?.Type).toBe('Task');
      expect(state.Resource).toBe(arnMarker(taskOfState(name)));
    });

    it('gives the step state the Lambda timeout of the step function, and catches into the recorder', () => {
      const states = definition.States as Record<string, any>;
      const stepState = Object.keys(importTaskStates).find((name) => taskOfState(name) === 'step') as string;
      expect(states[stepState].TimeoutSeconds).toBe(importStepTimeout.toSeconds());
      expect(states[stepState].Catch).toEqual([
        expect.objectContaining({ ErrorEquals: ['States.ALL'], Next: failureState }),
      ]);
      expect(states[states[failureState as string].Next]?.Type).toBe('Fail');
    });
  });

  describe('task functions', () => {
    it('has one function per task, bundled with the API functions (one esbuild run)', () => {
      expect([...stack.importWorkflow.functions.keys()].sort()).toEqual(
        Object.keys(importTaskHandlers).sort(),
      );
      expect(importTaskEntries).toEqual(Object.values(importTaskHandlers));
    });

    it('sizes the step: 15 minutes, 2048 MB, 10 GiB of /tmp, a 10-minute budget', () => {
      const step = props('step');
      expect(step.Timeout).toBe(900);
      expect(step.MemorySize).toBe(2048);
      expect(step.EphemeralStorage).toEqual({ Size: 10 * 1024 });
      expect(importStepMemoryMb).toBe(2048);
      expect(importStepEphemeralStorage.toMebibytes()).toBe(10 * 1024);
      expect(step.Environment.Variables.IMPORT_STEP_BUDGET_MS).toBe('600000');
      expect(importStepBudgetMs).toBe(600_000);
      // The budget leaves the chunk in flight and the checkpoint a third of the timeout.
      expect(importStepBudgetMs).toBeLessThanOrEqual((importStepTimeout.toMilliseconds() * 2) / 3);
    });

    it('sizes the failure recorder as an ordinary task', () => {
      const recorder = props('recordFailure');
      expect(recorder.Timeout).toBe(recordImportFailureTimeout.toSeconds());
      expect(recorder.MemorySize).toBe(1024);
      expect(recorder.EphemeralStorage).toBeUndefined();
      expect(recorder.Environment.Variables.IMPORT_STEP_BUDGET_MS).toBeUndefined();
    });

    it.each(importTasks)('gives %s the table, the upload bucket, the size limit and the key id', (task) => {
      const env = props(task).Environment.Variables;
      expect(env.TABLE_NAME).toEqual({ Ref: logicalId(stack.table.table) });
      expect(env.IMPORT_UPLOAD_BUCKET).toEqual({ Ref: bucketId });
      expect(env.IMPORT_MAX_BYTES).toBe(String(2 * 1024 ** 3));
      expect(env.KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [logicalId(stack.api.secretsKey), 'Arn'] });
      // Neither starts a workflow: the state machine runs a rollback's deletion itself.
      expect(env.DELETION_STATE_MACHINE_ARN).toBeUndefined();
      // Nothing configured: no database, no buckets (imports answer 503 until one is).
      expect(env.IMPORT_DATABASE).toBeUndefined();
      expect(env.IMPORT_DATABASE_SECRET_ARN).toBeUndefined();
      expect(env.IMPORT_BUCKETS).toBeUndefined();
      expect(env.IMPORT_STATE_MACHINE_ARN).toBeUndefined();
    });

    it.each(importTasks)('grants %s exactly its DynamoDB actions from importTaskAccess', (task) => {
      expect(actionsIn(statementsOfRole(template, fnOf(task).role), 'dynamodb')).toEqual(
        [...new Set(importTaskAccess[task].data.map((a) => `dynamodb:${a}`))].sort(),
      );
    });

    it('lets the step read and remove uploads (uploads/ only) and list the upload bucket, nothing else in S3', () => {
      expect(s3Statements(statementsOfRole(template, fnOf('step').role))).toEqual([
        { Effect: 'Allow', Action: ['s3:DeleteObject', 's3:GetObject'], Resource: uploadObjects(bucketId) },
        { Effect: 'Allow', Action: 's3:ListBucket', Resource: uploadBucketArn(bucketId) },
      ]);
    });

    it("gives the step nothing in Step Functions (the state machine runs the rollback's deletion)", () => {
      expect(actionsIn(statementsOfRole(template, fnOf('step').role), 'states')).toEqual([]);
    });

    it('lets the step encrypt and decrypt with the connection-secrets key only (publishing a service)', () => {
      const statements = statementsOfRole(template, fnOf('step').role).filter((s) =>
        asArray(s.Action).some((a) => a.startsWith('kms:')),
      );
      expect(statements).toHaveLength(1);
      expect(asArray(statements[0]?.Action).sort()).toEqual(['kms:Decrypt', 'kms:Encrypt']);
      expect(statements[0]?.Resource).toEqual({ 'Fn::GetAtt': [logicalId(stack.api.secretsKey), 'Arn'] });
    });

    it('gives the failure recorder nothing beyond its table actions, logs and traces', () => {
      const statements = statementsOfRole(template, fnOf('recordFailure').role);
      for (const service of ['s3', 'states', 'kms', 'secretsmanager', 'lambda', 'apigateway'])
        expect(actionsIn(statements, service), service).toEqual([]);
    });

    it('lets no role read a secret while no import database is configured', () => {
      for (const [id, statements] of policyDocuments(template))
        expect(actionsIn(statements, 'secretsmanager'), id).toEqual([]);
    });
  });

  describe("the state machine's role", () => {
    let statements: Statement[];

    beforeAll(() => {
      statements = statementsOfRole(template, stack.importWorkflow.role);
    });

    it('is assumed by Step Functions only, with no managed policy, and may invoke the two task functions and no other function', () => {
      expectTaskInvokerRole(template, stack.importWorkflow.role, importTasks.map(fnId));
    });

    it('may run the deletion machine as a nested execution: start it, describe and stop its executions, the managed rule', () => {
      const deletion = logicalId(stack.deletionWorkflow.stateMachine);
      const nested = statements.filter((s) =>
        asArray(s.Action).some((a) => a.startsWith('states:') || a.startsWith('events:')),
      );
      expect(nested).toHaveLength(3);
      expect(nested[0]).toEqual({
        Effect: 'Allow',
        Action: 'states:StartExecution',
        Resource: { Ref: deletion },
      });
      expect(asArray(nested[1]?.Action).sort()).toEqual(['states:DescribeExecution', 'states:StopExecution']);
      const executions = JSON.stringify(nested[1]?.Resource);
      expect(executions).toContain(':execution:');
      expect(executions).toContain(deletion);
      expect(executions).toMatch(/:\*"/);
      expect(asArray(nested[2]?.Action).sort()).toEqual([
        'events:DescribeRule',
        'events:PutRule',
        'events:PutTargets',
      ]);
      expect(JSON.stringify(nested[2]?.Resource)).toContain(
        ':rule/StepFunctionsGetEventsForStepFunctionsExecutionRule',
      );
    });

    it('may otherwise only deliver its logs and traces', () => {
      const all = [...new Set(statements.flatMap((s) => asArray(s.Action)))].sort();
      expect(all).toEqual(
        [
          'lambda:InvokeFunction',
          'states:StartExecution',
          'states:DescribeExecution',
          'states:StopExecution',
          'events:PutTargets',
          'events:PutRule',
          'events:DescribeRule',
          ...logDelivery,
          ...xray,
        ].sort(),
      );
    });
  });

  describe('upload bucket', () => {
    let bucket: Record<string, any>;

    beforeAll(() => {
      bucket = template.findResources('AWS::S3::Bucket')[bucketId] as Record<string, any>;
    });

    it('is private, S3-encrypted, unversioned, owner-enforced and retained', () => {
      expect(bucket.DeletionPolicy).toBe('Retain');
      expect(bucket.UpdateReplacePolicy).toBe('Retain');
      expect(bucket.Properties).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      });
      expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
      expect(bucket.Properties.BucketName).toBeUndefined();
    });

    it('refuses requests without TLS', () => {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    });

    it('aborts incomplete multipart uploads after a day and expires uploads after 7 days', () => {
      expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
        {
          Id: 'AbortIncompleteMultipartUploads',
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          Status: 'Enabled',
        },
        { Id: 'ExpireUploads', Prefix: uploadPrefix, ExpirationInDays: 7, Status: 'Enabled' },
      ]);
    });

    it('lets browsers POST from any origin (the presigned form is the credential)', () => {
      expect(bucket.Properties.CorsConfiguration.CorsRules).toEqual([
        expect.objectContaining({ AllowedMethods: ['POST'], AllowedOrigins: ['*'] }),
      ]);
    });

    it('logs its access into a private, encrypted, TLS-only log bucket', () => {
      const logsId = logicalId(stack.importUploads.accessLogs);
      expect(bucket.Properties.LoggingConfiguration).toEqual({
        DestinationBucketName: { Ref: logsId },
        LogFilePrefix: 'import-uploads/',
      });
      const logs = template.findResources('AWS::S3::Bucket')[logsId] as Record<string, any>;
      expect(logs.DeletionPolicy).toBe('Retain');
      expect(logs.Properties).toMatchObject({
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 30 })] },
      });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: logsId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            Match.objectLike({
              Effect: 'Allow',
              Action: 's3:PutObject',
              Principal: { Service: 'logging.s3.amazonaws.com' },
            }),
          ]),
        },
      });
    });

    it('outputs the bucket name', () => {
      template.hasOutput('ImportUploadBucket', { Value: { Ref: bucketId } });
    });
  });

  describe('routes', () => {
    const fnOfRoute = (op: Operation) => {
      const fn = stack.api.functions.get(op.operationId);
      if (!fn) throw new Error(`no function for ${op.operationId}`);
      return fn;
    };
    const envOf = (op: Operation) =>
      template.findResources('AWS::Lambda::Function')[logicalId(fnOfRoute(op).function)]?.Properties
        .Environment.Variables as Record<string, unknown>;

    it('has import routes of each kind (so the checks below test something)', () => {
      expect(importRoutes.some((op) => op.uploads?.includes('presign'))).toBe(true);
      expect(importRoutes.some((op) => op.uploads?.includes('head'))).toBe(true);
      expect(importRoutes.some((op) => op.uploads?.includes('delete'))).toBe(true);
      expect(importRoutes.some((op) => op.importDatabase)).toBe(true);
    });

    it.each(routes.map((op) => [op.operationId, op] as const))(
      'grants %s exactly the upload actions its route declares, under uploads/ only',
      (_id, op) => {
        const expected = [...new Set((op.uploads ?? []).map((u) => uploadActions[u]))];
        // The tile bucket's listing of `listsTileStore` routes is test/infra/tile-cache.test.ts's.
        const tiles = JSON.stringify(logicalId(stack.tileCache.bucket));
        const statements = s3Statements(statementsOfRole(template, fnOfRoute(op).role)).filter(
          (st) => !(op.listsTileStore && JSON.stringify(st.Resource).includes(tiles)),
        );
        if (expected.length === 0) {
          expect(statements).toEqual([]);
          return;
        }
        expect(statements).toEqual([
          {
            Effect: 'Allow',
            Action: expected.length === 1 ? expected[0] : expected,
            Resource: uploadObjects(bucketId),
          },
          ...(op.uploads?.includes('head')
            ? [{ Effect: 'Allow', Action: 's3:ListBucket', Resource: uploadBucketArn(bucketId) }]
            : []),
        ]);
      },
    );

    it('lets createImport PutObject under uploads/* and nothing else in S3', () => {
      expect(s3Statements(statementsOfRole(template, fnOfRoute(byOperationId('createImport')).role))).toEqual(
        [{ Effect: 'Allow', Action: 's3:PutObject', Resource: uploadObjects(bucketId) }],
      );
    });

    it.each(routes.map((op) => [op.operationId, op] as const))(
      'gives %s the import settings only if it handles imports',
      (_id, op) => {
        const env = envOf(op);
        if (handlesImports(op)) {
          expect(env.IMPORT_UPLOAD_BUCKET).toEqual({ Ref: bucketId });
          expect(env.IMPORT_MAX_BYTES).toBe(String(2 * 1024 ** 3));
        } else {
          for (const name of Object.keys(env)) expect(name).not.toMatch(/^IMPORT_/);
        }
        expect(env.IMPORT_STATE_MACHINE_ARN).toEqual(
          op.starts?.includes('import') ? { Ref: logicalId(stack.importWorkflow.stateMachine) } : undefined,
        );
      },
    );

    it('puts the imports area in a nested stack of its own, within the budget', () => {
      const ops = routes.filter((op) => op.handler.startsWith('functions/imports/'));
      expect(ops.length).toBeGreaterThan(0);
      for (const op of ops) expect(operationStackOf(op)).toBe('Imports');
      // Outside the imports area only readiness (ADR 0131, with meta) and the catalog integrity check
      // and repair (ADR 0138: import schemas without their job; with deletions) read the import database.
      expect(
        importRoutes
          .filter((op) => operationStackOf(op) !== 'Imports')
          .map((op) => op.operationId)
          .sort(),
      ).toEqual(['getCatalogIntegrity', 'getReadiness', 'repairCatalogIntegrity']);
      const nested = stack.api.stacks.get('Imports');
      expect(nested).toBeDefined();
      const [, imports] = templatesOf(stack).find(([s]) => s === nested) as [Stack, Template];
      expect(resourceCount(imports)).toBe(resourcesPerOperation * ops.length);
      expect(ops.length).toBeLessThanOrEqual(maxOperationsPerStack);
    });
  });
});

describe('import workflow with every import setting', () => {
  let app: App;
  let stack: GeoPlaneStack;
  let template: Template;

  beforeAll(() => {
    ({ app, stack, template } = synthesize(configured));
  });

  const roleOfRoute = (id: string) => {
    const fn = stack.api.functions.get(id);
    if (!fn) throw new Error(id);
    return fn.role;
  };
  const secretRead = [{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: secretArn }];
  const secretStatements = (statements: Statement[]) =>
    statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('secretsmanager:')));

  it('lets previewImport, getReadiness, the integrity check and repair, the step and the failure recorder read the import database secret, nobody else', () => {
    const readers = new Set([
      logicalId(roleOfRoute('previewImport')),
      // Readiness logs in to the import database (ADR 0131).
      logicalId(roleOfRoute('getReadiness')),
      // The integrity check lists the import schemas, its repair drops orphaned ones (ADR 0138).
      logicalId(roleOfRoute('getCatalogIntegrity')),
      logicalId(roleOfRoute('repairCatalogIntegrity')),
      ...importTasks.map((task) => logicalId(stack.importWorkflow.functions.get(task)?.role as never)),
    ]);
    for (const op of routes.filter((r) => r.importDatabase))
      expect(readers.has(logicalId(roleOfRoute(op.operationId)))).toBe(true);
    for (const [id, statements] of policyDocuments(template)) {
      expect(secretStatements(statements), id).toEqual(readers.has(id) ? secretRead : []);
    }
    expect(byOperationId('previewImport').importDatabase).toBe(true);
  });

  it('passes the import database without credentials, the secret ARN and the buckets to import functions', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    const importFunctions = [
      ...importRoutes.map((op) => stack.api.functions.get(op.operationId)),
      ...stack.importWorkflow.functions.values(),
    ].map((fn) => logicalId(fn?.function as never));
    for (const id of importFunctions) {
      const env = functions[id]?.Properties.Environment.Variables;
      expect(JSON.parse(env.IMPORT_DATABASE), id).toEqual({
        host: 'imports.cluster-abc.eu-west-1.rds.amazonaws.com',
        port: 5432,
        database: 'imports',
        sslmode: 'verify-full',
      });
      expect(env.IMPORT_DATABASE_SECRET_ARN, id).toBe(secretArn);
      expect(env.IMPORT_BUCKETS, id).toBe('geo-sources,more-sources');
      expect(env.IMPORT_MAX_BYTES, id).toBe(String(1024 ** 3));
    }
  });

  it("adds the import database's host:port to every function's allowed database hosts", () => {
    const expected = '10.0.0.0/16:5432,imports.cluster-abc.eu-west-1.rds.amazonaws.com:5432';
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ GEOPLANE_ALLOWED_DATABASE_HOSTS: expected }) },
    });
  });

  it('lets the step (only) read the allowed import buckets', () => {
    const step = stack.importWorkflow.functions.get('step');
    const statements = s3Statements(statementsOfRole(template, step?.role as never));
    const arn = (resource: string) => ({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::${resource}`]],
    });
    expect(statements).toContainEqual({
      Effect: 'Allow',
      Action: ['s3:GetObject', 's3:ListBucket'],
      Resource: [arn('geo-sources'), arn('geo-sources/*'), arn('more-sources'), arn('more-sources/*')],
    });
    const readers = policyDocuments(template).filter(([, s]) =>
      JSON.stringify(s).includes(':s3:::geo-sources'),
    );
    expect(readers.map(([id]) => id)).toEqual([logicalId(step?.role as never)]);
  });

  it('applies the expiry and the console origin to the upload bucket', () => {
    const bucket = template.findResources('AWS::S3::Bucket')[logicalId(stack.importUploads.bucket)];
    expect(bucket?.Properties.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ Prefix: uploadPrefix, ExpirationInDays: 3 }),
    );
    expect(bucket?.Properties.CorsConfiguration.CorsRules[0].AllowedOrigins).toEqual([
      'https://console.example.com',
    ]);
  });

  it('passes cdk-nag with nothing but the reviewed acknowledgments', () => {
    const report = new AwsSolutionsChecks().validateScope(app);
    expect(
      report.violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`),
      ),
    ).toEqual([]);
  });
});

describe('importStepConcurrency (cdk.json context, ADR 0115)', () => {
  const functions = (template: Template) => template.findResources('AWS::Lambda::Function');
  const reserved = (stack: GeoPlaneStack, template: Template) =>
    Object.fromEntries(
      Object.entries(functions(template))
        .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
        .map(([id, fn]) => [
          id === logicalId(stack.importWorkflow.functions.get('step')?.function as never) ? 'step' : id,
          fn.Properties.ReservedConcurrentExecutions,
        ]),
    );

  it('reserves nothing by default (cdk.json: empty), so no deploy fails on the account pool', () => {
    expect(cdkContext.importStepConcurrency).toBe('');
    const { stack, template } = synthesize();
    expect(reserved(stack, template)).toEqual({});
  });

  it.each([
    [5, 5],
    ['10', 10],
  ])('reserves %j executions for the import step, and for no other function', (value, expected) => {
    const { stack, template } = synthesize({ importStepConcurrency: value });
    expect(reserved(stack, template)).toEqual({ step: expected });
  });

  it.each(['0', '-1', '2.5', 'ten'])('refuses %j', (value) => {
    expect(() => synthesize({ importStepConcurrency: value })).toThrow(/importStepConcurrency/);
  });
});

describe('import stage settings', () => {
  const configOf = (context: Record<string, unknown>) => stageConfigOf(new App({ context }).node);

  it('reads the import database from an object or its JSON text, port 5432 by default', () => {
    const db = { host: 'db.example.com', database: 'gis', secretArn };
    expect(configOf({ importDatabase: db }).importDatabase).toEqual({ ...db, port: 5432 });
    expect(configOf({ importDatabase: JSON.stringify({ ...db, port: '6432' }) }).importDatabase).toEqual({
      ...db,
      port: 6432,
    });
    expect(configOf({ importDatabase: '' }).importDatabase).toBeUndefined();
  });

  it('defaults: 2 GiB, uploads kept 7 days, no buckets', () => {
    const config = configOf({});
    expect(config.importMaxBytes).toBe(2 * 1024 ** 3);
    expect(config.importUploadExpiryDays).toBe(7);
    expect(config.importBuckets).toBeUndefined();
    expect(config.importDatabase).toBeUndefined();
  });

  it.each([
    ['not JSON', { importDatabase: '{host: x}' }, /object or its JSON text[\s\S]*importDatabase/],
    [
      'a partial secret ARN',
      {
        importDatabase: {
          host: 'h',
          database: 'd',
          secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:x',
        },
      },
      /secretArn/,
    ],
    [
      'a bad host',
      { importDatabase: { host: '10.0.0.0/8', database: 'd', secretArn } },
      /importDatabase\.host/,
    ],
    [
      'a bad port',
      { importDatabase: { host: 'h', port: 70000, database: 'd', secretArn } },
      /importDatabase\.port/,
    ],
    [
      'an unknown key',
      { importDatabase: { host: 'h', database: 'd', secretArn, password: 'x' } },
      /password/,
    ],
    [
      'a bad bucket',
      { importBuckets: 'ok, Not_A_Bucket' },
      /importBuckets[\s\S]*Not_A_Bucket|Not_A_Bucket[\s\S]*importBuckets/,
    ],
    ['over 5 GiB', { importMaxBytes: 6 * 1024 ** 3 }, /importMaxBytes/],
    ['a zero expiry', { importUploadExpiryDays: 0 }, /importUploadExpiryDays/],
    ['a bad origin', { importUploadOrigins: 'console.example.com' }, /importUploadOrigins/],
  ])('refuses %s with a clear error', (_name, context, message) => {
    expect(() => configOf(context)).toThrow(message);
  });

  it('writes an IPv6 import database host in brackets in the allowlist', () => {
    const config = configOf({ importDatabase: { host: 'fd00::5', port: 5433, database: 'd', secretArn } });
    expect(allowedDatabaseHosts(config)).toBe('[fd00::5]:5433');
    expect(allowedDatabaseHosts(configOf({}))).toBeUndefined();
  });

  it('refuses a route that handles imports where no import resources are deployed', () => {
    const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'NoImports');
    const op = byOperationId('previewImport');
    expect(
      () =>
        new ManagementApi(stack, 'Management', {
          config: stageConfigOf(app.node),
          table: new CatalogTable(stack, 'Catalog'),
          routes: [op],
          bundles: new FunctionBundles(repositoryRoot, managementApiEntries([op])),
        }),
    ).toThrow(/previewImport handles imports, but no import resources are deployed/);
  });
});
