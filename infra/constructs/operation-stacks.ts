import { CfnParameter, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import {
  AuthorizationType,
  AwsIntegration,
  type IAuthorizer,
  Method,
  type RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { Operation } from '#api/operation.ts';
import { dataAccessOf, secretsAccessOf } from '#api/routes.ts';
import { ApiFunction } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import { tileCacheBucketParameter } from './data-plane.ts';
import type { FunctionBundles } from './function-bundles.ts';
import { bucketArn, grantImportDatabaseSecret, grantUploads } from './import-uploads.ts';
import type { StageConfig } from './stage-config.ts';
import { grantUsageKeys } from './usage-keys.ts';
import type { VpcPlacement } from './vpc-placement.ts';

/**
 * The nested stacks of the management API's operations (ADR 0077), each with the route areas
 * (`functions/<area>/`) it holds. An area stays in its stack: moving one to another stack makes
 * CloudFormation create its methods there before deleting them here, which API Gateway refuses
 * (see the ADR). An area no entry names gets a stack of its own, named after it.
 */
export const operationStackAreas: Readonly<Record<string, readonly string[]>> = {
  Workspaces: ['workspaces'],
  Catalog: ['services', 'layers', 'layer-groups'],
  Styles: ['styles', 'style-assets'],
  Settings: ['settings', 'tile-matrix-sets'],
  Identity: ['auth', 'meta', 'api-keys', 'roles', 'claim-mappings', 'audit'],
  // Raster mosaics and the caches (ADR 0139).
  Mosaics: ['mosaics', 'tile-cache'],
  // The catalog's lifecycle: recursive deletions and the integrity check and repair (ADR 0138).
  Deletions: ['deletions', 'catalog'],
  Imports: ['imports'],
};

/** CloudFormation resources one operation adds to its nested stack: function, role, log group, permission, method. */
export const resourcesPerOperation = 5;

/** Resources a template may hold (CloudFormation's limit is 500; the rest is margin). test/infra asserts it. */
export const templateResourceBudget = 400;

/** Operations one nested stack may hold: its resources stay under {@link templateResourceBudget}. */
export const maxOperationsPerStack = Math.floor((templateResourceBudget - 1) / resourcesPerOperation);

/** The area of an operation: the folder of its handler (`functions/<area>/<operation>.ts`). */
export function areaOf(op: Operation): string {
  const area = /^functions\/([a-z0-9-]+)\//.exec(op.handler)?.[1];
  if (!area) throw new Error(`${op.operationId}: handler ${op.handler} is not under functions/<area>/`);
  return area;
}

/** Construct id (and nested template name) of the stack holding an operation. */
export function operationStackOf(op: Operation): string {
  const area = areaOf(op);
  for (const [stack, areas] of Object.entries(operationStackAreas)) if (areas.includes(area)) return stack;
  const own = area.replace(/(^|-)([a-z0-9])/g, (_m, _dash, c: string) => c.toUpperCase());
  if (own in operationStackAreas)
    throw new Error(`area ${area} would share the ${own} stack: name it in operationStackAreas`);
  return own;
}

/** The route table grouped by {@link operationStackOf}, in route-table order. */
export function operationsByStack(routes: readonly Operation[]): Map<string, Operation[]> {
  const groups = new Map<string, Operation[]>();
  for (const op of routes) {
    const id = operationStackOf(op);
    groups.set(id, [...(groups.get(id) ?? []), op]);
  }
  return groups;
}

/** Lambda function description of an operation; the contract test finds functions by it. */
export function operationDescription(op: Operation): string {
  return `${op.operationId}: ${op.method} ${op.path}`;
}

/** The workflows routes may start (a route's `starts`), by name. */
export type Workflows = Record<NonNullable<Operation['starts']>[number], IStateMachine>;

/** Environment variable naming the state machine of each workflow. */
export const workflowArnVariables: Record<keyof Workflows, string> = {
  deletion: 'DELETION_STATE_MACHINE_ARN',
  import: 'IMPORT_STATE_MACHINE_ARN',
  harvest: 'HARVEST_STATE_MACHINE_ARN',
  tileCache: 'TILE_CACHE_STATE_MACHINE_ARN',
};

/** The S3 actions of each `uploads` flag, on `uploads/*` of the upload bucket (ADR 0086). */
export const uploadActions = {
  // A presigned POST is signed with the function's credentials: S3 checks PutObject against its role.
  presign: 's3:PutObject',
  // HeadObject is authorised by s3:GetObject.
  head: 's3:GetObject',
  delete: 's3:DeleteObject',
} as const satisfies Record<NonNullable<Operation['uploads']>[number], string>;

/** Whether an operation handles imports, and so gets the import environment (ADR 0086). */
export function handlesImports(op: Operation): boolean {
  return Boolean(op.starts?.includes('import') || op.uploads?.length || op.importDatabase);
}

/**
 * Name of the nested stacks' parameter carrying the upload bucket's name: named here (not left to
 * CDK's generated reference parameters) so the cdk-nag acknowledgment of `uploads/*` can name it.
 */
export const uploadBucketParameter = 'ImportUploadBucket';

/** What the operations that handle imports need from the parent (ADR 0086). */
export interface ImportResources {
  /** The upload bucket's name (a token of the parent stack). */
  uploadBucketName: string;
  /** `importEnvironment` of the stage, with the upload bucket as `uploadBucketName`. */
  environment: Record<string, string>;
  /** The import database's secret, when one is configured. */
  databaseSecretArn?: string;
}

/** `/api/v1/workspaces/{workspace}` → `/api/v1/workspaces/*`, as API Gateway's execute-api ARNs name paths. */
const pathForArn = (path: string) => path.replace(/\{[^}]*\}/g, '*');

export interface OperationsStackProps {
  config: StageConfig;
  table: CatalogTable;
  /** The operations of this stack. */
  routes: readonly Operation[];
  bundles: FunctionBundles;
  /** The environment of every function. */
  environment: Record<string, string>;
  /** The REST API of the parent stack: its resources (paths) stay there, the methods come here. */
  api: RestApi;
  authorizer: IAuthorizer;
  /** Encrypts connection passwords; routes that declare `secrets` get exactly those actions on it. */
  secretsKey: IKey;
  /** The usage plan's name (a literal of the parent stack), for routes that manage usage keys. */
  usagePlanName: string;
  workflows?: Workflows;
  /** Required as soon as a route handles imports ({@link handlesImports}). */
  imports?: ImportResources;
  /** The operator's VPC (cdk.json `vpc`, ADR 0112): the routes flagged `postgres` run in it. */
  vpc?: VpcPlacement;
  /** The tile cache bucket's name (a token of the parent), for the routes flagged `listsTileStore`. */
  tileCacheBucketName?: string;
}

/**
 * A nested stack of operations (ADR 0077): per operation its function (own role, log group) and
 * its API method on the parent's REST API resource, with the permission for API Gateway to
 * invoke the function from that method on the stage. The API, its resources, authorizer,
 * deployment and stage stay in the parent; CDK passes their ids as parameters.
 */
export class OperationsStack extends NestedStack {
  /** The function of each operation, by operationId. */
  readonly functions = new Map<string, ApiFunction>();
  /** The API method of each operation, by operationId. */
  readonly methods = new Map<string, Method>();

  constructor(scope: Construct, id: string, props: OperationsStackProps) {
    const areas = [...new Set(props.routes.map(areaOf))];
    const importRoutes = props.routes.filter(handlesImports);
    if (importRoutes.length > 0 && !props.imports) {
      throw new Error(
        `${importRoutes[0]?.operationId} handles imports, but no import resources are deployed`,
      );
    }
    const imports = importRoutes.length > 0 ? props.imports : undefined;
    const tileBucketName = props.routes.some((op) => op.listsTileStore)
      ? props.tileCacheBucketName
      : undefined;
    super(scope, id, {
      description: `GeoPlane management API: operations of ${areas.join(', ')}`,
      ...(imports || tileBucketName
        ? {
            parameters: {
              ...(imports ? { [uploadBucketParameter]: imports.uploadBucketName } : {}),
              ...(tileBucketName ? { [tileCacheBucketParameter]: tileBucketName } : {}),
            },
          }
        : {}),
    });
    if (props.routes.length > maxOperationsPerStack) {
      throw new Error(
        `the ${id} stack would hold ${props.routes.length} operations, over its ${maxOperationsPerStack} ` +
          '(ADR 0077): give one of its areas a stack of its own in operationStackAreas',
      );
    }
    const { config, table, bundles, environment, api, authorizer, secretsKey, workflows } = props;
    const logRetention = config.logRetentionDays as RetentionDays;
    const buckets = (config.mosaicBuckets ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    // The upload bucket's name, passed in by the parent under a name of ours.
    const uploadBucket = imports
      ? new CfnParameter(this, uploadBucketParameter, {
          type: 'String',
          description: 'The import upload bucket (ADR 0086)',
        }).valueAsString
      : undefined;
    // The tile cache bucket's name, passed in by the parent (ADR 0139), as the data plane's stack has it.
    const tileBucket = tileBucketName
      ? new CfnParameter(this, tileCacheBucketParameter, {
          type: 'String',
          description: 'The tile cache bucket (ADR 0139)',
        }).valueAsString
      : undefined;
    const importEnvironment = imports
      ? { ...imports.environment, IMPORT_UPLOAD_BUCKET: uploadBucket as string }
      : {};
    const operations = new Construct(this, 'Operations');
    const methods = new Construct(this, 'Methods');
    Validations.of(methods).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Callers authenticate with OIDC bearer tokens from any configured issuer, workspace API keys or ' +
        'session cookies (DESIGN §6), checked by the REQUEST authorizer; a Cognito user pool authorizer ' +
        'cannot check API keys or sessions.',
    });

    for (const op of props.routes) {
      const secrets = secretsAccessOf(op);
      const fn = new ApiFunction(operations, op.operationId, {
        entry: op.handler,
        bundles,
        description: operationDescription(op),
        table,
        data: dataAccessOf(op),
        environment: {
          ...environment,
          ...(secrets.length ? { KMS_KEY_ID: secretsKey.keyArn } : {}),
          ...(handlesImports(op) ? importEnvironment : {}),
        },
        logRetention,
        ...(op.postgres && props.vpc ? { vpc: props.vpc } : {}),
      });
      // Exactly the KMS actions the route needs (its `secrets`, a POST's idempotent answers), on
      // this one key (grantEncrypt would add ReEncrypt*).
      if (secrets.length) {
        fn.role.addToPolicy(
          new PolicyStatement({
            actions: secrets.map((s) => (s === 'encrypt' ? 'kms:Encrypt' : 'kms:Decrypt')),
            resources: [secretsKey.keyArn],
          }),
        );
      }
      if (op.usageKeys?.length) grantUsageKeys(fn, op.usageKeys, props.usagePlanName, config);
      for (const workflow of new Set(op.starts ?? [])) {
        const stateMachine = workflows?.[workflow];
        if (!stateMachine)
          throw new Error(`${op.operationId} starts the ${workflow} workflow, which is not deployed`);
        // Starting executions of this one state machine, nothing else (no Describe, no Stop).
        fn.function.addEnvironment(workflowArnVariables[workflow], stateMachine.stateMachineArn);
        fn.role.addToPolicy(
          new PolicyStatement({
            actions: ['states:StartExecution'],
            resources: [stateMachine.stateMachineArn],
          }),
        );
      }
      if (op.uploads?.length && uploadBucket) {
        // Only the declared object actions, only under uploads/ of the upload bucket. HeadObject
        // of a missing key is a 403 unless the caller may list the bucket: 'head' gets ListBucket
        // so that "nothing was uploaded" is a NotFound (409), not an outage (503).
        grantUploads(
          fn.role,
          this,
          uploadBucket,
          uploadBucketParameter,
          op.uploads.map((u) => uploadActions[u]),
          op.uploads.includes('head'),
        );
      }
      if (op.importDatabase && imports?.databaseSecretArn) {
        grantImportDatabaseSecret(fn.role, imports.databaseSecretArn);
      }
      if (op.listsTileStore && tileBucket) {
        // Listing only (the integrity check counts the stored tiles): no object action.
        fn.function.addEnvironment('TILE_CACHE_BUCKET', tileBucket);
        fn.role.addToPolicy(
          new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucketArn(this, tileBucket)] }),
        );
      }
      if (op.readsMosaicSources && buckets.length > 0) {
        // Only reads, only of the buckets the stage names for raster mosaics.
        fn.role.addToPolicy(
          new PolicyStatement({
            actions: ['s3:GetObject', 's3:ListBucket'],
            resources: buckets.flatMap((b) => [
              Stack.of(this).formatArn({ service: 's3', region: '', account: '', resource: b }),
              Stack.of(this).formatArn({ service: 's3', region: '', account: '', resource: `${b}/*` }),
            ]),
          }),
        );
        for (const b of buckets) {
          Validations.of(fn.role).acknowledge({
            id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${b}/*]`,
            reason:
              'Mosaic granules are any objects under the service root in this bucket, named at run time.',
          });
        }
      }
      this.functions.set(op.operationId, fn);

      const isPublic = op.permission === 'public';
      // The method on the parent's resource: CDK makes the parent's deployment depend on this
      // stack and hashes the method into the deployment's logical id, as for a method of its own.
      // A Lambda proxy integration as LambdaIntegration renders it, without the permission
      // LambdaIntegration adds: that one names the stage by reference, and the stage depends on the
      // deployment, which depends on this stack (a cycle). The stage name is a literal instead.
      const method = new Method(methods, op.operationId, {
        resource: api.root.resourceForPath(op.path),
        httpMethod: op.method,
        integration: new AwsIntegration({
          proxy: true,
          service: 'lambda',
          path: `2015-03-31/functions/${fn.function.functionArn}/invocations`,
        }),
        options: {
          operationName: op.operationId,
          ...(isPublic
            ? { authorizationType: AuthorizationType.NONE }
            : {
                authorizationType: AuthorizationType.CUSTOM,
                authorizer,
                // Counted against the usage key the authorizer returns (per workspace, or global).
                apiKeyRequired: true,
              }),
        },
      });
      fn.function.addPermission('ApiPermission', {
        scope: method,
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: api.arnForExecuteApi(op.method, pathForArn(op.path), config.stageName),
      });
      if (isPublic) {
        Validations.of(method).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: `${op.operationId} is public by the route table (permission "public"), e.g. the OpenAPI document.`,
        });
      }
      this.methods.set(op.operationId, method);
    }
  }
}
