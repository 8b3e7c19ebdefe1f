import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, type Size, Validations } from 'aws-cdk-lib';
import {
  type AddToPrincipalPolicyResult,
  PolicyDocument,
  PolicyStatement,
  Role,
  type RoleProps,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { Architecture, LoggingFormat, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { DataAction } from '#api/operation.ts';
import { keys } from '#store/keys.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { FunctionBundles } from './function-bundles.ts';
import { hostAndPort, type StageConfig } from './stage-config.ts';
import type { VpcPlacement } from './vpc-placement.ts';

/** The repository root: route handler paths are relative to it. */
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** DynamoDB actions that can target an index as well as the table. */
const indexActions = new Set<DataAction>(['Query']);

/**
 * IAM statements granting exactly `actions` on the catalog table: item actions on the table, and
 * index-capable actions (Query) on the table and each named index.
 */
export function dataStatements(table: CatalogTable, actions: readonly DataAction[]): PolicyStatement[] {
  const unique = [...new Set(actions)];
  const onTable = unique.filter((a) => !indexActions.has(a) && a !== 'PutAuditRecord');
  const onIndexes = unique.filter((a) => indexActions.has(a));
  const statements: PolicyStatement[] = [];
  if (onTable.length > 0) {
    statements.push(
      new PolicyStatement({
        actions: onTable.map((a) => `dynamodb:${a}`),
        resources: [table.table.tableArn],
      }),
    );
  }
  // Audit records only (ADR 0094): PutItem whose partition key is an audit partition.
  if (unique.includes('PutAuditRecord') && !unique.includes('PutItem')) {
    statements.push(
      new PolicyStatement({
        actions: ['dynamodb:PutItem'],
        resources: [table.table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${keys.auditPartitionPrefix}*`] },
        },
      }),
    );
  }
  if (onIndexes.length > 0) {
    statements.push(
      new PolicyStatement({
        actions: onIndexes.map((a) => `dynamodb:${a}`),
        resources: [table.table.tableArn, ...table.indexArns],
      }),
    );
  }
  return statements;
}

/** The environment every function of the app gets (API functions, authorizer, workflow tasks). */
export function functionEnvironment(config: StageConfig, table: CatalogTable): Record<string, string> {
  const allowedHosts = allowedDatabaseHosts(config);
  return {
    TABLE_NAME: table.table.tableName,
    MAX_BODY_BYTES: String(config.maxBodyBytes),
    AUDIT_RETENTION_DAYS: String(config.auditRetentionDays),
    POWERTOOLS_SERVICE_NAME: 'geoplane',
    // Unset rather than empty: the functions' config schema refuses empty strings.
    ...(config.oidcIssuer ? { OIDC_ISSUER: config.oidcIssuer } : {}),
    ...(config.oidcAudience ? { OIDC_AUDIENCE: config.oidcAudience } : {}),
    ...(config.oidcJwksUri ? { OIDC_JWKS_URI: config.oidcJwksUri } : {}),
    ...(config.oidcClientId ? { OIDC_CLIENT_ID: config.oidcClientId } : {}),
    ...(config.oidcRedirectUri ? { OIDC_REDIRECT_URI: config.oidcRedirectUri } : {}),
    ...(config.oidcScopes ? { OIDC_SCOPES: config.oidcScopes } : {}),
    ...(config.oidcGroupClaims ? { OIDC_GROUP_CLAIMS: config.oidcGroupClaims } : {}),
    CONSOLE_TOKEN_LOGIN: String(config.consoleTokenLogin),
    SESSION_TTL_SECONDS: String(config.sessionTtlSeconds),
    SESSION_IDLE_SECONDS: String(config.sessionIdleSeconds),
    ...(allowedHosts ? { GEOPLANE_ALLOWED_DATABASE_HOSTS: allowedHosts } : {}),
  };
}

/**
 * The database hosts published services may connect to (ADR 0074): the operator's list, plus the
 * import database's `host:port` when one is configured (services published by imports connect
 * there; ADR 0086). Undefined when neither is set.
 */
export function allowedDatabaseHosts(config: StageConfig): string | undefined {
  const db = config.importDatabase;
  const entries = [config.allowedDatabaseHosts, db ? hostAndPort(db.host, db.port) : undefined].filter(
    Boolean,
  );
  return entries.length > 0 ? entries.join(',') : undefined;
}

/**
 * A role whose grants (its own and those CDK adds, e.g. log writing, X-Ray) go into one inline
 * policy instead of a separate `AWS::IAM::Policy`: one resource fewer per function keeps the stack
 * under CloudFormation's 500-resource limit.
 */
export class InlinePolicyRole extends Role {
  private readonly inlineGrants: PolicyDocument;

  constructor(scope: Construct, id: string, props: RoleProps) {
    const grants = new PolicyDocument();
    super(scope, id, { ...props, inlinePolicies: { ...props.inlinePolicies, Grants: grants } });
    this.inlineGrants = grants;
  }

  override addToPrincipalPolicy(statement: PolicyStatement): AddToPrincipalPolicyResult {
    this.inlineGrants.addStatements(statement);
    // The role itself: whoever uses it depends on the role, and so on the inline policy.
    return { statementAdded: true, policyDependable: this };
  }
}

export interface ApiFunctionProps {
  /** Module path of the entry point, relative to the repository root (a route's `handler`). */
  entry: string;
  /** Where the entry's bundle comes from. */
  bundles: FunctionBundles;
  /** Shown in the console and used by the contract test to find the function of an operation. */
  description: string;
  table: CatalogTable;
  /** DynamoDB actions the function needs (a route's `data`). */
  data: readonly DataAction[];
  environment: Record<string, string>;
  logRetention: RetentionDays;
  /** Default 15 s (API functions: under API Gateway's 29 s); workflow tasks run longer. */
  timeout?: Duration;
  /** Default 1024 MB. */
  memorySize?: number;
  /** `/tmp` size; Lambda's default (512 MiB) unless given. */
  ephemeralStorageSize?: Size;
  /** Run in the operator's VPC (ADR 0112): the functions that open PostgreSQL connections. */
  vpc?: VpcPlacement;
}

/**
 * One Lambda function of the app (an operation, the authorizer or a workflow task): its own role with nothing but
 * its log group, X-Ray and the DynamoDB actions it declares.
 */
export class ApiFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: InlinePolicyRole;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // An explicit role instead of the default one, which carries the AWS managed
    // AWSLambdaBasicExecutionRole (logs on every log group of the account).
    this.role = new InlinePolicyRole(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs ${props.description}`,
    });
    this.logGroup.grantWrite(this.role);
    for (const statement of dataStatements(props.table, props.data)) this.role.addToPolicy(statement);

    this.function = new NodejsFunction(this, 'Function', {
      // Bundled with the shared esbuild options in one run for all functions (ADR 0017).
      code: props.bundles.code(props.entry),
      handler: 'index.handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      ...(props.ephemeralStorageSize ? { ephemeralStorageSize: props.ephemeralStorageSize } : {}),
      // Under API Gateway's 29 s; above the DynamoDB client's worst case (3 × (1 s connect + 3 s request)).
      timeout: props.timeout ?? Duration.seconds(15),
      description: props.description,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      tracing: Tracing.ACTIVE,
      awsSdkConnectionReuse: false,
      environment: props.environment,
      ...(props.vpc ? props.vpc.functionProps(this) : {}),
    });
    props.vpc?.grantNetworkInterfaces(this.role);

    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only xray:PutTraceSegments and xray:PutTelemetryRecords (added by Tracing.ACTIVE) and, for a function in ' +
        'the VPC (ADR 0112), ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets use Resource "*": none supports ' +
        'resource-level permissions. DynamoDB and Logs statements name their ARNs, and ' +
        'test/infra asserts that no DynamoDB statement uses a wildcard.',
    });
  }
}
