import { type CfnResource, Duration, Names, RemovalPolicy, Stack, Tags, Validations } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  type CfnAuthorizer,
  EndpointType,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  RequestAuthorizer,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { Operation } from '#api/operation.ts';
import { BINARY_MEDIA_TYPES } from '#api/payload-limits.ts';
import { authorizerDataAccess } from '#api/routes.ts';
import { USAGE_KEY_TAG } from '#domain/usage-keys.ts';
import { ApiFunction, functionEnvironment } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';
import { addGatewayResponses } from './gateway-responses.ts';
import {
  type ImportResources,
  OperationsStack,
  operationsByStack,
  type Workflows,
} from './operation-stacks.ts';
import type { StageConfig } from './stage-config.ts';
import { usagePlanNameOf } from './usage-keys.ts';
import type { VpcPlacement } from './vpc-placement.ts';

export { operationDescription, type Workflows, workflowArnVariables } from './operation-stacks.ts';

/** Entry point of the REQUEST authorizer, relative to the repository root. */
export const authorizerEntry = 'functions/authorizer/index.ts';

/** The authorizer's table access, declared beside the route table (key, session and mapping lookups). */
export const authorizerData = authorizerDataAccess;

/** Entry points of the API's functions (the authorizer and every route's handler). */
export function managementApiEntries(routes: readonly Operation[]): string[] {
  return [authorizerEntry, ...routes.map((op) => op.handler)];
}

export interface ManagementApiProps {
  config: StageConfig;
  table: CatalogTable;
  routes: readonly Operation[];
  /** Bundles of the app; must include {@link managementApiEntries} of `routes`. */
  bundles: FunctionBundles;
  /** The state machines routes start; required as soon as a route has `starts`. */
  workflows?: Workflows;
  /** The upload bucket and import settings; required as soon as a route handles imports (ADR 0086). */
  imports?: ImportResources;
  /** The operator's VPC (cdk.json `vpc`, ADR 0112): the routes flagged `postgres` run in it. */
  vpc?: VpcPlacement;
  /** The tile cache bucket's name (ADR 0139), for the routes flagged `listsTileStore`. */
  tileCacheBucketName?: string;
}

/**
 * The management API: a regional REST API with one Lambda proxy method per route-table entry,
 * the REQUEST authorizer on every non-public method, the standard error body for API Gateway's own
 * errors, stage throttling with a usage plan, access logs and X-Ray. The operations' functions and
 * methods live in nested stacks by area (ADR 0077); everything else here, in the parent stack.
 */
export class ManagementApi extends Construct {
  readonly api: RestApi;
  readonly authorizer: RequestAuthorizer;
  readonly authorizerFunction: ApiFunction;
  /** The function of each operation, by operationId. */
  readonly functions = new Map<string, ApiFunction>();
  /** The API method of each operation, by operationId. */
  readonly methods = new Map<string, Method>();
  /** The nested stacks of the operations, by construct id (ADR 0077). */
  readonly stacks = new Map<string, OperationsStack>();
  /** Base URL of the API, e.g. `https://<id>.execute-api.<region>.amazonaws.com/prod/api/v1` (ADR 0089). */
  readonly baseUrl: string;
  /** The usage plan's name (the sweep deletes orphaned keys of its pool). */
  readonly usagePlanName: string;
  /** Encrypts data source passwords (the import workflow's step uses it too). */
  readonly secretsKey: IKey;

  constructor(scope: Construct, id: string, props: ManagementApiProps) {
    super(scope, id);
    const { config, table, routes, bundles, workflows, imports } = props;
    const logRetention = config.logRetentionDays as RetentionDays;
    const environment = functionEnvironment(config, table);
    // Connection passwords of services are encrypted with this key (never stored in clear).
    const secretsKey = new Key(this, 'ConnectionSecretsKey', {
      description: 'GeoPlane: encrypts data source passwords',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.secretsKey = secretsKey;

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.api = new RestApi(this, 'Api', {
      restApiName: `${Stack.of(this).stackName}-management`,
      description: 'GeoPlane management API (control plane)',
      endpointTypes: [EndpointType.REGIONAL],
      // Usage-plan keys come from the authorizer's usageIdentifierKey, never from clients (DESIGN §6).
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // Style assets (PNG, JPEG, GIF, SVG) travel as bytes; the local host applies the same list (ADR 0116).
      binaryMediaTypes: [...BINARY_MEDIA_TYPES],
      // Stage logging needs the account-level CloudWatch role. Setting it (AWS::ApiGateway::Account)
      // replaces the account's role for every REST API of the region: only when cdk.json
      // `apiGatewayCloudWatchRole` asks (ADR 0114); retained, because it is shared.
      cloudWatchRole: config.apiGatewayCloudWatchRole,
      ...(config.apiGatewayCloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      failOnWarnings: true,
      deployOptions: {
        stageName: config.stageName,
        // The method throttle applies per method across all clients: the deployment's ceiling, not
        // a workspace's limit (that is the usage plan's, per usage key; ADR 0111).
        throttlingRateLimit: config.stageThrottlingRateLimit,
        throttlingBurstLimit: config.stageThrottlingBurstLimit,
        tracingEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        // Never log bodies or headers: they carry credentials.
        dataTraceEnabled: false,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(),
      },
    });
    addGatewayResponses(this.api);

    this.authorizerFunction = new ApiFunction(this, 'Authorizer', {
      entry: authorizerEntry,
      bundles,
      description: 'authorizer: REQUEST authorizer of the management API',
      table,
      data: authorizerData,
      environment,
      logRetention,
    });
    // TTL 0: with caching on, API Gateway makes every identity source mandatory and answers 401
    // itself when one is missing; a request carries only one of Authorization, X-API-Key or Cookie.
    this.authorizer = new RequestAuthorizer(this, 'RequestAuthorizer', {
      handler: this.authorizerFunction.function,
      identitySources: [],
      resultsCacheTtl: Duration.seconds(0),
    });
    // Without caching the identity source is optional; an empty string is not a valid one.
    (this.authorizer.node.defaultChild as CfnAuthorizer).addPropertyDeletionOverride('IdentitySource');

    // Usage plans (DESIGN §6): the authorizer names a usage key per request — the workspace's,
    // or this global one. Keys are not credentials: the key source is AUTHORIZER.
    const usagePlanName = usagePlanNameOf(this, config);
    const globalUsageKeyValue = `geoplane-global-${Names.uniqueId(this).slice(-40).toLowerCase()}`;
    this.authorizerFunction.function.addEnvironment('GLOBAL_USAGE_KEY', globalUsageKeyValue);

    // The operations, in nested stacks by area (ADR 0077): the parent keeps the API, its paths,
    // the authorizer, deployment and stage; each nested stack the functions and methods of its areas.
    // Created one after the other (ADR 0114): in parallel, their methods' creation exceeds API
    // Gateway's control-plane rate and CloudFormation fails on its 429s.
    let previous: OperationsStack | undefined;
    for (const [stackId, ops] of operationsByStack(routes)) {
      const stack = new OperationsStack(this, stackId, {
        config,
        table,
        routes: ops,
        bundles,
        environment,
        api: this.api,
        authorizer: this.authorizer,
        secretsKey,
        usagePlanName,
        ...(workflows ? { workflows } : {}),
        ...(imports ? { imports } : {}),
        ...(props.vpc ? { vpc: props.vpc } : {}),
        ...(props.tileCacheBucketName ? { tileCacheBucketName: props.tileCacheBucketName } : {}),
      });
      if (previous)
        stack.nestedStackResource?.addResourceDependency(previous.nestedStackResource as CfnResource);
      previous = stack;
      this.stacks.set(stackId, stack);
      for (const [operationId, fn] of stack.functions) this.functions.set(operationId, fn);
      for (const [operationId, method] of stack.methods) this.methods.set(operationId, method);
    }

    const plan = this.api.addUsagePlan('UsagePlan', {
      name: usagePlanName,
      description:
        'Rates per usage key: one per slot of the workspaces pool, one for global calls (ADR 0111).',
      throttle: { rateLimit: config.throttlingRateLimit, burstLimit: config.throttlingBurstLimit },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
    // The functions' grants on keys and on the plan's keys are conditioned on this tag (ADR 0111);
    // a usage plan's tags are inherited by its usage plan keys for access control.
    Tags.of(plan).add(USAGE_KEY_TAG, usagePlanName);
    const globalKey = this.api.addApiKey('GlobalUsageKey', {
      description: 'Usage key of global calls (every request outside a workspace); not a credential.',
      value: globalUsageKeyValue,
    });
    Tags.of(globalKey).add(USAGE_KEY_TAG, usagePlanName);
    plan.addApiKey(globalKey);
    this.usagePlanName = usagePlanName;

    this.baseUrl = this.api.urlForPath('/api/v1');
    this.acknowledgeFindings();
  }

  private acknowledgeFindings(): void {
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in each function against the zod schemas of the route table (the single ' +
        'source of the contract), answering 400 with the standard body and its issues list. An API Gateway ' +
        'validator would duplicate the schemas and answer with a different shape.',
    });
    // AwsSolutions-COG4 (no Cognito authorizer) is acknowledged on the methods, in their nested stacks.
    Validations.of(this.api.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'No WAF web ACL in the base stack: rules are account-specific and cost per ACL. Operators attach one ' +
        'to the stage ARN; stage throttling and the usage plan bound the request rate meanwhile.',
    });
    const cloudWatchRole = this.api.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-wide logging role must be able to write any API's execution logs; the AWS " +
          'managed AmazonAPIGatewayPushToCloudWatchLogs policy is the documented and maintained grant for it.',
      });
    }
  }
}

/** One JSON line per request: who (principal), what, outcome and why API Gateway refused, if it did. */
function accessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(
    JSON.stringify({
      requestId: AccessLogField.contextRequestId(),
      extendedRequestId: AccessLogField.contextExtendedRequestId(),
      requestTime: AccessLogField.contextRequestTime(),
      ip: AccessLogField.contextIdentitySourceIp(),
      userAgent: AccessLogField.contextIdentityUserAgent(),
      method: AccessLogField.contextHttpMethod(),
      resourcePath: AccessLogField.contextResourcePath(),
      path: AccessLogField.contextPath(),
      protocol: AccessLogField.contextProtocol(),
      status: AccessLogField.contextStatus(),
      responseLength: AccessLogField.contextResponseLength(),
      responseLatency: AccessLogField.contextResponseLatency(),
      integrationLatency: AccessLogField.contextIntegrationLatency(),
      principalId: AccessLogField.contextAuthorizerPrincipalId(),
      authorizerError: '$context.authorizer.error',
      errorType: '$context.error.responseType',
      errorMessage: AccessLogField.contextErrorMessage(),
    }),
  );
}
