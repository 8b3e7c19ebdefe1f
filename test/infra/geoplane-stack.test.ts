import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataRoutes } from '#api/data-routes.ts';
import type { Operation } from '#api/operation.ts';
import { dataAccessOf, routes, secretsAccessOf } from '#api/routes.ts';
import { MVT } from '#domain/settings.ts';
import { USAGE_KEY_TAG } from '#domain/usage-keys.ts';
import { gatewayErrorBody, gatewayErrors } from '#http/gateway-responses.ts';
import { bundling } from '#infra/bundling.ts';
import type { ApiFunction } from '#infra/constructs/api-function.ts';
import { deletionTasks } from '#infra/constructs/deletion-workflow.ts';
import { esbuildOptions } from '#infra/constructs/function-bundles.ts';
import { uploadPrefix } from '#infra/constructs/import-uploads.ts';
import { importTasks } from '#infra/constructs/import-workflow.ts';
import { jobLoopTasks } from '#infra/constructs/job-loop-workflow.ts';
import { authorizerData } from '#infra/constructs/management-api.ts';
import { tilePrefix } from '#infra/constructs/tile-cache.ts';
import type { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { harvestWorkflow } from '#infra/workflows/harvest-workflow.ts';
import { tileCacheWorkflow } from '#infra/workflows/tile-cache-workflow.ts';
import { tableDefinition } from '#store/table.ts';
import { actionsIn, asArray, logicalId, policyDocuments, type Statement, statementsOfRole } from './iam.ts';
import { synthesize } from './templates.ts';

/** Every statement granted to the function's role. */
function statementsOf(template: Template, fn: ApiFunction): Statement[] {
  return statementsOfRole(template, fn.role);
}

const dynamoActionsOf = (statements: Statement[]) => actionsIn(statements, 'dynamodb');

/** What Step Functions needs to deliver execution logs (CloudWatch Logs has no resource-level permission for it). */
const stateMachineLogDelivery = [
  'logs:CreateLogDelivery',
  'logs:GetLogDelivery',
  'logs:UpdateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:DescribeResourcePolicies',
  'logs:DescribeLogGroups',
];

/** IAM actions of a `data` list: `PutAuditRecord` is PutItem (on the audit partitions only, ADR 0094). */
const expectedActions = (data: readonly string[]) =>
  [...new Set(data.map((a) => `dynamodb:${a === 'PutAuditRecord' ? 'PutItem' : a}`))].sort();

describe('GeoPlaneStack', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  let tableId: string;
  let authorizerId: string;

  beforeAll(() => {
    ({ stack, template } = synthesize());
    tableId = logicalId(stack.table.table);
    authorizerId = logicalId(stack.api.authorizer);
  });

  const fnOf = (op: Operation) => {
    const fn = stack.api.functions.get(op.operationId);
    if (!fn) throw new Error(`no function for ${op.operationId}`);
    return fn;
  };

  describe('catalog table', () => {
    it('is on-demand with point-in-time recovery, the TTL attribute and the key schema of shared/store/table.ts', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', 1);
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
        KeySchema: [
          { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
          { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((gsi) => ({
          IndexName: gsi.indexName,
          KeySchema: [
            { AttributeName: gsi.partitionKey, KeyType: 'HASH' },
            { AttributeName: gsi.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      });
    });

    it('is retained when the stack is deleted or the table replaced', () => {
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    });
  });

  describe('functions', () => {
    it('has one Lambda function per route plus the authorizer, the workflow tasks, the bootstrapAdmins resource, the sweep, the catalog events publisher and the data plane', () => {
      template.resourceCountIs(
        'AWS::Lambda::Function',
        routes.length +
          1 +
          deletionTasks.length +
          importTasks.length +
          jobLoopTasks(harvestWorkflow).length +
          jobLoopTasks(tileCacheWorkflow).length +
          1 +
          2 +
          1,
      );
      expect(stack.api.functions.size).toBe(routes.length);
      expect(stack.deletionWorkflow.functions.size).toBe(deletionTasks.length);
      expect(stack.importWorkflow.functions.size).toBe(importTasks.length);
      expect(stack.harvestWorkflow.functions.size).toBe(jobLoopTasks(harvestWorkflow).length);
      expect(stack.tileCacheWorkflow.functions.size).toBe(jobLoopTasks(tileCacheWorkflow).length);
    });

    it('runs every function on nodejs24.x, arm64, with X-Ray and its own log group', () => {
      template.allResourcesProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: Match.anyValue() } },
      });
    });

    it('gives every log group a retention period (30 days by default)', () => {
      template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
      // One per function (bootstrapAdmins', the sweep's, the events publisher's and the data plane's
      // too), the access logs and each of the four workflows'.
      template.resourceCountIs(
        'AWS::Logs::LogGroup',
        routes.length +
          1 +
          deletionTasks.length +
          importTasks.length +
          jobLoopTasks(harvestWorkflow).length +
          jobLoopTasks(tileCacheWorkflow).length +
          1 +
          2 +
          1 +
          5,
      );
    });

    it('passes the table name, body limit and console settings, and no OIDC settings while none are configured', () => {
      const common = {
        TABLE_NAME: { Ref: tableId },
        MAX_BODY_BYTES: '1048576',
        AUDIT_RETENTION_DAYS: '90',
        POWERTOOLS_SERVICE_NAME: 'geoplane',
        OIDC_SCOPES: 'openid profile email',
        CONSOLE_TOKEN_LOGIN: 'true',
        SESSION_TTL_SECONDS: '43200',
        SESSION_IDLE_SECONDS: '3600',
      };
      const functions = template.findResources('AWS::Lambda::Function');
      for (const [id, fn] of Object.entries(functions)) {
        const {
          KMS_KEY_ID,
          GLOBAL_USAGE_KEY,
          USAGE_PLAN_NAME,
          USAGE_KEY_POOL_SIZE,
          DELETION_STATE_MACHINE_ARN,
          DELETION_BATCH_BUDGET_MS,
          // test/infra/import-workflow.test.ts checks who gets the import settings.
          IMPORT_STATE_MACHINE_ARN,
          IMPORT_UPLOAD_BUCKET,
          IMPORT_MAX_BYTES,
          IMPORT_STEP_BUDGET_MS,
          // The harvest step's budget and the state machine createMosaicHarvestJob starts (ADR 0136).
          HARVEST_STEP_BUDGET_MS,
          HARVEST_STATE_MACHINE_ARN,
          // The tile store, the tile cache step's budget and the state machine createTileCacheJob
          // starts (ADR 0139).
          TILE_CACHE_BUCKET,
          TILE_CACHE_STEP_BUDGET_MS,
          TILE_CACHE_STATE_MACHINE_ARN,
          // The events publisher's bus (ADR 0094); the sweep's settings (ADR 0093).
          EVENT_BUS_NAME,
          SWEEP_STUCK_AFTER_MINUTES,
          SWEEP_MAX_RESTARTS,
          // Where the data plane's links point (ADR 0122).
          DATA_PLANE_ORIGIN,
          ...rest
        } = fn.Properties.Environment.Variables as Record<string, unknown>;
        if (DATA_PLANE_ORIGIN !== undefined) expect(id).toMatch(/^DataPlaneFunction/);
        if (EVENT_BUS_NAME !== undefined) expect(id).toMatch(/CatalogEventsPublisher/);
        if (SWEEP_STUCK_AFTER_MINUTES !== undefined || SWEEP_MAX_RESTARTS !== undefined)
          expect(id).toMatch(/Sweeps/);
        expect(rest, id).toEqual(common);
        // Only the authorizer names the global usage key; only the pool's key maker and the sweep
        // of its orphaned keys find the plan (ADR 0111).
        if (GLOBAL_USAGE_KEY !== undefined) expect(id).toMatch(/Authorizer/);
        if (USAGE_PLAN_NAME !== undefined) expect(id).toMatch(/createWorkspace|Sweeps/);
        expect(USAGE_KEY_POOL_SIZE === undefined, id).toBe(USAGE_PLAN_NAME === undefined);
        // test/infra/deletion-workflow.test.ts checks who gets these.
        if (DELETION_STATE_MACHINE_ARN !== undefined)
          expect(DELETION_STATE_MACHINE_ARN).toHaveProperty('Ref');
        if (DELETION_BATCH_BUDGET_MS !== undefined) expect(id).toMatch(/deleteBatch/);
        if (IMPORT_STATE_MACHINE_ARN !== undefined) expect(IMPORT_STATE_MACHINE_ARN).toHaveProperty('Ref');
        if (IMPORT_STEP_BUDGET_MS !== undefined) expect(id).toMatch(/ImportWorkflowTasksstep/);
        if (HARVEST_STEP_BUDGET_MS !== undefined) expect(id).toMatch(/HarvestWorkflowTasksstep/);
        // The routes that start the job loops; the sweep restarts their lost executions (ADR 0093).
        if (HARVEST_STATE_MACHINE_ARN !== undefined) expect(id).toMatch(/createMosaicHarvestJob|Sweeps/);
        // The integrity check and repair list the tile store (their usage check, ADR 0138).
        if (TILE_CACHE_BUCKET !== undefined)
          expect(id).toMatch(
            /^(DataPlaneFunction|TileCacheWorkflowTasksstep|SweepsHandler|Operations(get|repair)CatalogIntegrity)/,
          );
        if (TILE_CACHE_STEP_BUDGET_MS !== undefined) expect(id).toMatch(/TileCacheWorkflowTasksstep/);
        if (TILE_CACHE_STATE_MACHINE_ARN !== undefined) expect(id).toMatch(/createTileCacheJob|Sweeps/);
        // The upload bucket and the size limit come together (import routes and tasks).
        expect(IMPORT_MAX_BYTES === undefined, id).toBe(IMPORT_UPLOAD_BUCKET === undefined);
        // Only functions that handle connection secrets learn the key.
        if (KMS_KEY_ID !== undefined)
          expect(KMS_KEY_ID).toMatchObject({ 'Fn::GetAtt': [expect.any(String), 'Arn'] });
      }
    });

    it('bundles with exactly the esbuild options shared with the benchmark (infra/bundling.ts)', () => {
      expect(esbuildOptions()).toEqual({
        ...bundling,
        banner: { js: bundling.banner },
        mainFields: ['module', 'main'],
        external: [],
      });
      expect(bundling).toMatchObject({ format: 'esm', target: 'node20', minify: true, bundle: true });
    });
  });

  describe('API', () => {
    it('is a regional REST API taking usage keys from the authorizer, with binary media types for assets and tiles', () => {
      template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
      template.hasResourceProperties('AWS::ApiGateway::RestApi', {
        EndpointConfiguration: { Types: ['REGIONAL'] },
        ApiKeySourceType: 'AUTHORIZER',
        BinaryMediaTypes: Match.arrayEquals(['image/*', 'application/octet-stream', MVT]),
      });
    });

    it('has one method per route, each a Lambda proxy integration of its own function', () => {
      // And one per data route, all of the data plane's one function (test/infra/data-plane.test.ts).
      template.resourceCountIs('AWS::ApiGateway::Method', routes.length + dataRoutes.length);
      for (const op of routes) {
        const fnId = logicalId(fnOf(op).function);
        template.hasResourceProperties('AWS::ApiGateway::Method', {
          HttpMethod: op.method,
          OperationName: op.operationId,
          Integration: {
            Type: 'AWS_PROXY',
            IntegrationHttpMethod: 'POST',
            Uri: { 'Fn::Join': ['', Match.arrayWith([{ 'Fn::GetAtt': [fnId, 'Arn'] }])] },
          },
        });
      }
    });

    it('uses a REQUEST authorizer with result caching off and no mandatory identity source', () => {
      template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
      template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
        Type: 'REQUEST',
        AuthorizerResultTtlInSeconds: 0,
        IdentitySource: Match.absent(),
      });
    });

    const privateRoutes = routes.filter((op) => op.permission !== 'public');
    const publicRoutes = routes.filter((op) => op.permission === 'public');

    it('has at least one public and one protected route (so the two checks below test something)', () => {
      expect(publicRoutes.length).toBeGreaterThan(0);
      expect(privateRoutes.length).toBeGreaterThan(0);
    });

    it.each(privateRoutes.map((op) => [op.operationId, op] as const))(
      'protects %s with the authorizer',
      (_id, op) => {
        template.hasResourceProperties('AWS::ApiGateway::Method', {
          OperationName: op.operationId,
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
        });
      },
    );

    it.each(publicRoutes.map((op) => [op.operationId, op] as const))(
      'leaves public %s without an authorizer',
      (_id, op) => {
        template.hasResourceProperties('AWS::ApiGateway::Method', {
          OperationName: op.operationId,
          AuthorizationType: 'NONE',
          AuthorizerId: Match.absent(),
        });
      },
    );

    it("throttles each method at the stage's ceiling and each usage key at the usage plan's limit (ADR 0111)", () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: 'prod',
        TracingEnabled: true,
        AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
        MethodSettings: Match.arrayWith([
          Match.objectLike({
            HttpMethod: '*',
            ResourcePath: '/*',
            ThrottlingRateLimit: 1000,
            ThrottlingBurstLimit: 2000,
            LoggingLevel: 'ERROR',
            DataTraceEnabled: false,
          }),
        ]),
      });
      const stageId = logicalId(stack.api.api.deploymentStage);
      template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
        Throttle: { RateLimit: 50, BurstLimit: 100 },
        ApiStages: [Match.objectLike({ Stage: { Ref: stageId } })],
      });
    });

    it('outputs the API base URL and the table name', () => {
      template.hasOutput('ApiUrl', {
        Value: { 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('/api/v1$')])] },
      });
      template.hasOutput('TableName', { Value: { Ref: tableId } });
    });
  });

  describe('gateway responses', () => {
    it('has one gateway response per entry of gatewayErrors', () => {
      template.resourceCountIs('AWS::ApiGateway::GatewayResponse', Object.keys(gatewayErrors).length);
    });

    it.each(Object.values(gatewayErrors).map((e) => [e.type, e.status, e] as const))(
      '%s answers %i with the standard error body',
      (type, status, error) => {
        const found = template.findResources('AWS::ApiGateway::GatewayResponse', {
          Properties: { ResponseType: type },
        });
        expect(Object.keys(found)).toHaveLength(1);
        const response = Object.values(found)[0] as { Properties: Record<string, any> };
        expect(response.Properties.StatusCode).toBe(String(status));
        const body = JSON.parse(response.Properties.ResponseTemplates['application/json']);
        expect(body).toEqual(gatewayErrorBody(error, '$context.requestId'));
        expect(Object.keys(body)).toEqual(['code', 'message', 'detail', 'reason', 'request_id']);
        expect(response.Properties.ResponseParameters).toMatchObject({
          'gatewayresponse.header.Content-Type': "'application/json'",
          'gatewayresponse.header.X-Content-Type-Options': "'nosniff'",
        });
      },
    );

    it('tells throttled clients when to retry', () => {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: 'THROTTLED',
        StatusCode: '429',
        ResponseParameters: Match.objectLike({ 'gatewayresponse.header.Retry-After': "'1'" }),
      });
    });
  });

  describe('least privilege', () => {
    it.each(routes.map((op) => [op.operationId, op] as const))(
      'grants %s exactly the DynamoDB actions of its route',
      (_id, op) => {
        expect(dynamoActionsOf(statementsOf(template, fnOf(op)))).toEqual(expectedActions(dataAccessOf(op)));
      },
    );

    it('grants getWorkspace GetItem and Query (what the handler stack reads: workspace, claim mappings, policies) and no write', () => {
      const op = routes.find((r) => r.operationId === 'getWorkspace') as Operation;
      expect(op.data).toEqual(['GetItem']);
      const statements = statementsOf(template, fnOf(op));
      expect(dynamoActionsOf(statements)).toEqual(['dynamodb:GetItem', 'dynamodb:Query']);
    });

    it('grants createWorkspace neither DeleteItem nor Scan', () => {
      const op = routes.find((r) => r.operationId === 'createWorkspace') as Operation;
      const actions = dynamoActionsOf(statementsOf(template, fnOf(op)));
      expect(actions).not.toContain('dynamodb:DeleteItem');
      expect(actions).not.toContain('dynamodb:Scan');
      expect(actions.length).toBeGreaterThan(0);
    });

    it('grants the authorizer GetItem (keys, sessions), BatchGetItem (key with its path targets, ADR 0099) and Query (global claim mappings) only', () => {
      expect(dynamoActionsOf(statementsOf(template, stack.api.authorizerFunction))).toEqual(
        expectedActions(authorizerData),
      );
      expect([...authorizerData].sort()).toEqual(['BatchGetItem', 'GetItem', 'Query']);
    });

    it('requires a usage key on every authorized method and ties the global key to the usage plan', () => {
      const methods = template.findResources('AWS::ApiGateway::Method');
      for (const [id, m] of Object.entries(methods)) {
        const isPublic = m.Properties.AuthorizationType === 'NONE';
        expect(m.Properties.ApiKeyRequired === true, id).toBe(!isPublic);
      }
      template.resourceCountIs('AWS::ApiGateway::ApiKey', 1);
      template.resourceCountIs('AWS::ApiGateway::UsagePlanKey', 1);
    });

    it('grants exactly the declared KMS actions on the connection-secrets key, and only to routes that declare them (POSTs: ADR 0088)', () => {
      for (const op of routes) {
        const fn = stack.api.functions.get(op.operationId);
        if (!fn) throw new Error(`no function for ${op.operationId}`);
        const kms = statementsOf(template, fn)
          .flatMap((st) => ([] as string[]).concat(st.Action as string | string[]))
          .filter((a) => a.startsWith('kms:'))
          .sort();
        const expected = secretsAccessOf(op)
          .map((s) => (s === 'encrypt' ? 'kms:Encrypt' : 'kms:Decrypt'))
          .sort();
        expect(kms, op.operationId).toEqual(expected);
      }
    });

    it.each(routes.filter((op) => op.method === 'POST').map((op) => [op.operationId, op] as const))(
      'lets POST %s keep its idempotency records: Get/Put/UpdateItem, KMS Encrypt and Decrypt on the secrets key, KMS_KEY_ID set (ADR 0088)',
      (_id, op) => {
        const fn = fnOf(op);
        const statements = statementsOf(template, fn);
        expect(dynamoActionsOf(statements)).toEqual(
          expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
        );
        const kms = statements.filter((st) =>
          ([] as string[]).concat(st.Action as string | string[]).some((a) => a.startsWith('kms:')),
        );
        expect(kms).toHaveLength(1);
        expect(([] as string[]).concat(kms[0]?.Action as string | string[]).sort()).toEqual([
          'kms:Decrypt',
          'kms:Encrypt',
        ]);
        const key = { 'Fn::GetAtt': [logicalId(stack.api.secretsKey), 'Arn'] };
        expect(kms[0]?.Resource).toEqual(key);
        const resource = template.toJSON().Resources[logicalId(fn.function)];
        expect(resource.Properties.Environment.Variables.KMS_KEY_ID).toEqual(key);
      },
    );

    it('grants no idempotency actions to GET routes (getWorkspace stays read-only)', () => {
      const op = routes.find((r) => r.operationId === 'getWorkspace') as Operation;
      expect(dataAccessOf(op)).toEqual(['GetItem', 'Query']);
      expect(secretsAccessOf(op)).toEqual([]);
    });

    it('grants Query on the table and each named index, and item actions on the table only', () => {
      const tableArn = { 'Fn::GetAtt': [tableId, 'Arn'] };
      const indexArns = tableDefinition.globalSecondaryIndexes.map((gsi) => ({
        'Fn::Join': ['', [tableArn, `/index/${gsi.indexName}`]],
      }));
      for (const op of routes) {
        for (const s of statementsOf(template, fnOf(op))) {
          const actions = asArray(s.Action).filter((a) => a.startsWith('dynamodb:'));
          if (actions.length === 0) continue;
          // In any order: CDK sorts the resources of a statement by their text, which differs
          // in a nested stack (the table ARN is a parameter there).
          const byText = (list: unknown[]) =>
            [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
          if (actions.includes('dynamodb:Query')) {
            expect(Array.isArray(s.Resource), op.operationId).toBe(true);
            expect(byText(s.Resource as unknown[]), op.operationId).toEqual(byText([tableArn, ...indexArns]));
          } else {
            expect(s.Resource, op.operationId).toEqual(tableArn);
          }
        }
      }
    });

    it('grants no wildcard action and no DynamoDB or Logs action on "*"', () => {
      const documents = policyDocuments(template);
      expect(documents.length).toBeGreaterThan(0);
      const stateMachineRoles = [
        logicalId(stack.deletionWorkflow.role),
        logicalId(stack.importWorkflow.role),
        logicalId(stack.harvestWorkflow.role),
        logicalId(stack.tileCacheWorkflow.role),
      ];
      const uploadObjects = JSON.stringify(`/${uploadPrefix}*`);
      const tileObjects = JSON.stringify(`/${tilePrefix}*`);
      const eventsPublisher = logicalId(stack.catalogEvents.function.role);
      for (const [id, statements] of documents) {
        for (const s of statements) {
          const actions = asArray(s.Action);
          for (const action of actions) expect(action, id).not.toMatch(/(^\*$)|(:\*)|(\*$)/);
          if (JSON.stringify(s.Resource).includes('"*"') || JSON.stringify(s.Resource).includes('/*')) {
            // Only X-Ray and Step Functions' log delivery lack resource-level permissions; usage keys
            // are made at run time (per workspace), and so are upload keys (under uploads/ only).
            expect(
              actions.every((a) => a.startsWith('xray:')) ||
                // The usage-key pool's grants (ADR 0111): conditioned on the deployment tag, or listings.
                (actions.every((a) =>
                  ['apigateway:POST', 'apigateway:PUT', 'apigateway:DELETE'].includes(a),
                ) &&
                  JSON.stringify(s).includes(`/${USAGE_KEY_TAG}`)) ||
                (actions.every((a) => a === 'apigateway:GET') &&
                  !JSON.stringify(s.Resource).includes('/apikeys/')) ||
                (actions.every((a) => ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'].includes(a)) &&
                  JSON.stringify(s.Resource).endsWith(`${uploadObjects}]]}`)) ||
                // Tile keys are made at run time (under tiles/ of the tile cache bucket only, ADR 0139).
                (actions.every((a) => ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'].includes(a)) &&
                  JSON.stringify(s.Resource).endsWith(`${tileObjects}]]}`)) ||
                // dynamodb:ListStreams has no resource-level permission (the stream reader's event source).
                (id === eventsPublisher &&
                  actions.every((a) => a.startsWith('xray:') || a === 'dynamodb:ListStreams')) ||
                (stateMachineRoles.includes(id) &&
                  actions.every((a) => a.startsWith('xray:') || stateMachineLogDelivery.includes(a))),
              `${id}: ${actions}`,
            ).toBe(true);
          }
        }
      }
    });

    it('attaches AWS managed policies to no function role', () => {
      const roles = template.findResources('AWS::IAM::Role');
      for (const fn of [
        ...stack.api.functions.values(),
        stack.api.authorizerFunction,
        ...stack.deletionWorkflow.functions.values(),
        ...stack.importWorkflow.functions.values(),
        ...stack.harvestWorkflow.functions.values(),
        ...stack.tileCacheWorkflow.functions.values(),
      ]) {
        const role = roles[logicalId(fn.role)];
        expect(role, fn.node.path).toBeDefined();
        expect(role?.Properties.ManagedPolicyArns, fn.node.path).toBeUndefined();
      }
    });
  });
});

describe('GeoPlaneStack with stage settings in the context', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthesize({
      stageName: 'staging',
      throttlingRateLimit: 7,
      throttlingBurstLimit: 9,
      stageThrottlingRateLimit: 70,
      stageThrottlingBurstLimit: 90,
      oidcIssuer: 'https://login.example.com/realms/geo',
      oidcAudience: 'geoplane',
      logRetentionDays: 90,
      mosaicBuckets: 'rasters-a, rasters-b',
      allowedDatabaseHosts: '10.0.0.0/16:5432,db.internal',
    }));
  });

  it('lets exactly the routes that read mosaic sources read the named buckets', () => {
    // (The import routes and step read the upload bucket: test/infra/import-workflow.test.ts.)
    const readers = policyDocuments(template).filter(([, statements]) =>
      JSON.stringify(statements).includes(':s3:::rasters-'),
    );
    // The routes that read mosaic sources, and the harvest workflow's step (ADR 0136).
    const expected = [
      ...routes.filter((r) => r.readsMosaicSources).map((r) => r.operationId),
      'HarvestWorkflowTasksstep',
    ];
    expect(readers.length).toBe(expected.length);
    for (const [id, p] of readers) {
      expect(
        expected.some((op) => id.includes(op)),
        id,
      ).toBe(true);
      const text = JSON.stringify(p);
      expect(text).toContain(':s3:::rasters-a/*');
      expect(text).toContain(':s3:::rasters-b');
      expect(text).not.toContain('s3:PutObject');
    }
  });

  it("names the stage, throttles its methods at the stage keys and the usage plan's keys at the per-workspace keys", () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'staging',
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 70, ThrottlingBurstLimit: 90 }),
      ]),
    });
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 7, BurstLimit: 9 },
    });
  });

  it('passes the OIDC issuer and audience to every function', () => {
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          OIDC_ISSUER: 'https://login.example.com/realms/geo',
          OIDC_AUDIENCE: 'geoplane',
        }),
      },
    });
  });

  it('keeps logs for the configured retention', () => {
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });

  it('refuses a retention CloudWatch Logs does not offer', () => {
    expect(() => synthesize({ logRetentionDays: 31 })).toThrow(/logRetentionDays/);
  });

  it('passes the allowed database hosts to every function (ADR 0074)', () => {
    template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ GEOPLANE_ALLOWED_DATABASE_HOSTS: '10.0.0.0/16:5432,db.internal' }),
      },
    });
  });

  it('refuses an allowed database host entry it cannot read', () => {
    expect(() => synthesize({ allowedDatabaseHosts: '10.0.0.0/33' })).toThrow(/allowedDatabaseHosts/);
  });
});

describe('GeoPlaneStack without allowed database hosts', () => {
  it('allows no private database host: the functions get no allowlist', () => {
    const { template } = synthesize();
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      expect(fn.Properties.Environment?.Variables?.GEOPLANE_ALLOWED_DATABASE_HOSTS).toBeUndefined();
    }
  });
});
