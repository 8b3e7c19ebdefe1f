import { CfnParameter, type CfnResource, Duration, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import {
  AuthorizationType,
  AwsIntegration,
  type IAuthorizer,
  Method,
  type RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import {
  AllowedMethods,
  type BehaviorOptions,
  CacheCookieBehavior,
  CachedMethods,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  type CfnDistribution,
  Distribution,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  OriginProtocolPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DATA_PLANE_HANDLER, DATA_PLANE_ROOT, type DataRoute, dataRoutes } from '#api/data-routes.ts';
import type { DataAction } from '#api/operation.ts';
import { isBinaryMediaType } from '#api/payload-limits.ts';
import { dataAccessOf, secretsAccessOf } from '#api/routes.ts';
import { SESSION_COOKIE } from '#auth/cookies.ts';
import { gsi1 } from '#store/table.ts';
import { ApiFunction } from './api-function.ts';
import type { CatalogTable } from './catalog-table.ts';
import type { ConsoleSite } from './console-site.ts';
import type { FunctionBundles } from './function-bundles.ts';
import type { StageConfig } from './stage-config.ts';
import { grantTileStore } from './tile-cache.ts';
import type { VpcPlacement } from './vpc-placement.ts';

/** The Lambda entry points of the data plane (one: every route of the data route table, ADR 0122). */
export const dataPlaneEntries: readonly string[] = [DATA_PLANE_HANDLER];

/** The distribution's path pattern of the data plane: every data route lives under it. */
export const dataPlanePathPattern = '/workspaces/*';

/**
 * The staleness bound of the data plane on AWS (DESIGN §8a, ADR 0122): CloudFront keeps an answer at
 * most this long, whatever `max-age` the origin sends, so a catalog change is served within it.
 */
export const dataPlaneMaxTtlSeconds = 5;

/** The request headers that carry a credential (DESIGN §6): part of the cache key, so never shared. */
export const dataPlaneCredentialHeaders = ['Authorization', 'X-API-Key'] as const;

/** The cookies that carry a credential: the browser session (shared/auth/cookies.ts). */
export const dataPlaneCredentialCookies = [SESSION_COOKIE] as const;

/**
 * The header API Gateway decides binary answers by (its first value must be a binary media type,
 * ADR 0122): set by the viewer-request function on tile paths, removed elsewhere, so it is in the
 * cache key with one value per path and never varies what a caller gets.
 */
export const dataPlaneNormalizedHeaders = ['Accept'] as const;

/**
 * Status codes CloudFront caches for its "error caching minimum TTL" (10 s unless set) whatever the
 * origin says; set to 0 on the distribution, so no error outlives the {@link dataPlaneMaxTtlSeconds}
 * bound (a 404 before a layer is enabled, a 503 during a database outage). These are the codes a
 * CloudFront custom error response accepts.
 */
export const uncachedErrorCodes = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504] as const;

/** The DynamoDB index the data plane reads (claim mappings and listings); the others are never queried. */
export const dataPlaneIndexes: readonly string[] = [gsi1];

/**
 * The encryption context of a service's connection password (`secretContext` in
 * shared/domain/services.ts): the data plane may decrypt ciphertexts bound to exactly these keys,
 * so not the idempotent answers sealed under the same key (ADR 0088), which carry `purpose`.
 */
export const servicePasswordContextKeys = ['workspace_id', 'service_id'] as const;

/**
 * Name of the data plane stack's parameter carrying the tile cache bucket's name (ADR 0139): named
 * here (not left to CDK's generated reference parameters) so the cdk-nag acknowledgment of
 * `tiles/*` can name it.
 */
export const tileCacheBucketParameter = 'TileCacheBucket';

/**
 * Decrypting (and only with `actions`) service passwords with the connection-secrets key:
 * ciphertexts whose encryption context has exactly the keys services.ts binds, so not the
 * idempotent answers sealed under the same key (ADR 0088). The data plane's and the tile cache
 * step's grant (both open the services' connections).
 */
export function servicePasswordDecrypt(key: IKey, actions: readonly string[]): PolicyStatement {
  return new PolicyStatement({
    actions: [...actions],
    resources: [key.keyArn],
    conditions: {
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': [...servicePasswordContextKeys] },
      Null: Object.fromEntries(
        servicePasswordContextKeys.map((k) => [`kms:EncryptionContext:${k}`, 'false']),
      ),
    },
  });
}

/** Lambda description of the data plane's function (the part before ":" names it). */
export const dataPlaneDescription = `dataPlane: GET ${DATA_PLANE_ROOT}/… (the OGC API of every workspace)`;

/** DynamoDB actions of the data plane's function: every route's, as the handler stack needs them. */
export function dataPlaneDataAccess(routes: readonly DataRoute[] = dataRoutes): DataAction[] {
  return [...new Set(routes.flatMap((route) => dataAccessOf(route)))];
}

/** KMS actions of the data plane's function on the connection-secrets key. */
export function dataPlaneKmsActions(routes: readonly DataRoute[] = dataRoutes): string[] {
  const secrets = new Set(routes.flatMap((route) => secretsAccessOf(route)));
  return [...secrets].map((s) => (s === 'encrypt' ? 'kms:Encrypt' : 'kms:Decrypt'));
}

/** A route's path as a regular expression on request paths: each `{param}` one non-empty segment. */
function pathPattern(path: string): string {
  return `^${path
    .split(/\{[^}]+\}/)
    .map((literal) => literal.replace(/[.*+?^$()|[\]\\/]/g, '\\$&'))
    .join('[^/]+')}$`;
}

/** The binary media type a route answers with (its 200's), if any: vector tiles. */
const binaryTypeOf = (route: DataRoute) => route.responses[200]?.mediaTypes?.find(isBinaryMediaType);

/** The routes that answer bytes (vector tiles): their 200 is a binary media type. */
export function binaryRoutes(routes: readonly DataRoute[] = dataRoutes): DataRoute[] {
  return routes.filter((route) => binaryTypeOf(route) !== undefined);
}

/**
 * The viewer-request function of the data plane's behaviour (CloudFront Functions, JS 2.0). API
 * Gateway decodes a Lambda proxy's base64 body only when the request's first `Accept` is a binary
 * media type, and map clients send whatever they like (`*\/*`): on a tile path `Accept` becomes the
 * tile's media type; elsewhere it is removed (the data plane picks representations by `f`, and a
 * removed header cannot vary a cached answer).
 */
export function acceptNormalizationCode(routes: readonly DataRoute[] = dataRoutes): string {
  const tiles = binaryRoutes(routes).map((route) => ({
    pattern: pathPattern(route.path),
    type: binaryTypeOf(route) as string,
  }));
  return `var tiles = [
${tiles.map((t) => `  [/${t.pattern}/, ${JSON.stringify(t.type)}]`).join(',\n')}
];
function handler(event) {
  var request = event.request;
  for (var i = 0; i < tiles.length; i++) {
    if (tiles[i][0].test(request.uri)) {
      request.headers.accept = { value: tiles[i][1] };
      return request;
    }
  }
  delete request.headers.accept;
  return request;
}
`;
}

/** `/workspaces/{workspace}/ogc/x` → `/workspaces/*\/ogc/x`, as API Gateway's execute-api ARNs name paths. */
const pathForArn = (path: string) => path.replace(/\{[^}]*\}/g, '*');

export interface DataPlaneStackProps {
  config: StageConfig;
  table: CatalogTable;
  routes: readonly DataRoute[];
  bundles: FunctionBundles;
  environment: Record<string, string>;
  /** The management API's REST API: the data routes' paths go on it, in the parent stack. */
  api: RestApi;
  /** The management API's REQUEST authorizer (it lets a data-plane request without credential through as anonymous). */
  authorizer: IAuthorizer;
  /** Encrypts service passwords; the data plane only decrypts them. */
  secretsKey: IKey;
  /** Where links point (`https://<distribution>`): the function's `DATA_PLANE_ORIGIN`. */
  publicOrigin: string;
  /** The operator's VPC (cdk.json `vpc`, ADR 0112): the data plane opens PostgreSQL connections. */
  vpc?: VpcPlacement;
  /** The persistent tile cache's bucket name (ADR 0139), a token of the parent stack. */
  tileCacheBucketName?: string;
}

/**
 * The data plane's function and methods, in a nested stack of their own (ADR 0077, 0122): one
 * function for every route of the data route table, one method per route on the management API's
 * REST API with its REQUEST authorizer and usage keys, and per method the permission to invoke the
 * function from it. The paths (API Gateway resources) stay in the parent with the API's others.
 */
export class DataPlaneStack extends NestedStack {
  readonly function: ApiFunction;
  /** The API method of each route, by operationId. */
  readonly methods = new Map<string, Method>();

  constructor(scope: Construct, id: string, props: DataPlaneStackProps) {
    super(scope, id, {
      description: 'GeoPlane data plane: the OGC API of every workspace',
      ...(props.tileCacheBucketName
        ? { parameters: { [tileCacheBucketParameter]: props.tileCacheBucketName } }
        : {}),
    });
    const { config, table, routes, bundles, api, authorizer, secretsKey } = props;
    const kmsActions = dataPlaneKmsActions(routes);
    // The tile cache bucket's name, passed in by the parent under a name of ours.
    const tileCacheBucket = props.tileCacheBucketName
      ? new CfnParameter(this, tileCacheBucketParameter, {
          type: 'String',
          description: 'The persistent tile cache bucket (ADR 0139)',
        }).valueAsString
      : undefined;
    this.function = new ApiFunction(this, 'DataPlane', {
      entry: DATA_PLANE_HANDLER,
      bundles,
      description: dataPlaneDescription,
      table,
      // Item reads on the table; Query below, on the table and the one index it reads.
      data: dataPlaneDataAccess(routes).filter((a) => a !== 'Query'),
      environment: {
        ...props.environment,
        ...(kmsActions.length ? { KMS_KEY_ID: secretsKey.keyArn } : {}),
        DATA_PLANE_ORIGIN: props.publicOrigin,
        ...(tileCacheBucket ? { TILE_CACHE_BUCKET: tileCacheBucket } : {}),
      },
      logRetention: config.logRetentionDays as RetentionDays,
      ...(props.vpc && routes.some((route) => route.postgres) ? { vpc: props.vpc } : {}),
    });
    if (dataPlaneDataAccess(routes).includes('Query')) {
      this.function.role.addToPolicy(
        new PolicyStatement({
          actions: ['dynamodb:Query'],
          resources: [
            table.table.tableArn,
            ...dataPlaneIndexes.map((index) => `${table.table.tableArn}/index/${index}`),
          ],
        }),
      );
    }
    if (kmsActions.length) {
      // Only service passwords: ciphertexts whose context has exactly the keys services.ts binds.
      this.function.role.addToPolicy(servicePasswordDecrypt(secretsKey, kmsActions));
    }
    // The persistent tile cache (ADR 0139): tiles read, stored and replaced under tiles/ only.
    if (tileCacheBucket) {
      grantTileStore(this.function.role, this, tileCacheBucket, tileCacheBucketParameter);
    }

    const methods = new Construct(this, 'Methods');
    Validations.of(methods).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Callers authenticate with OIDC bearer tokens, workspace API keys or session cookies (DESIGN §6), or ' +
        'none for public layers (ADR 0120), checked by the REQUEST authorizer; a Cognito user pool ' +
        'authorizer can check none of them.',
    });
    for (const route of routes) {
      // As the management methods (operation-stacks.ts): a Lambda proxy integration without the
      // permission LambdaIntegration would add (it names the stage, which depends on this stack).
      const method = new Method(methods, route.operationId, {
        resource: api.root.resourceForPath(route.path),
        httpMethod: route.method,
        integration: new AwsIntegration({
          proxy: true,
          service: 'lambda',
          path: `2015-03-31/functions/${this.function.function.functionArn}/invocations`,
        }),
        options: {
          operationName: route.operationId,
          authorizationType: AuthorizationType.CUSTOM,
          authorizer,
          // Counted against the usage key the authorizer returns, anonymous callers included.
          apiKeyRequired: true,
        },
      });
      this.function.function.addPermission('ApiPermission', {
        scope: method,
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: api.arnForExecuteApi(route.method, pathForArn(route.path), config.stageName),
      });
      this.methods.set(route.operationId, method);
    }
  }
}

export interface DataPlaneProps {
  config: StageConfig;
  table: CatalogTable;
  bundles: FunctionBundles;
  environment: Record<string, string>;
  api: RestApi;
  authorizer: IAuthorizer;
  secretsKey: IKey;
  /** The route table; defaults to THE data route table. */
  routes?: readonly DataRoute[];
  /** The console, when deployed: its distribution gets the data plane's behaviour (one origin, as locally). */
  console?: ConsoleSite;
  /** The nested stack created before the data plane's (ADR 0114: one after the other). */
  after?: NestedStack;
  vpc?: VpcPlacement;
  /** The persistent tile cache's bucket (ADR 0139): the function reads and writes tiles in it. */
  tileCacheBucketName?: string;
}

/**
 * The data plane on AWS (DESIGN §8a, ADR 0122): its function and methods ({@link DataPlaneStack})
 * and CloudFront in front of them. With the console, `/workspaces/*` is a behaviour of the console's
 * distribution, so the console, the management API and the data plane share one origin as on the
 * local host (the map preview reads tiles with the session cookie); without it, a distribution of
 * its own. Either way one cache policy keys on the path, every query string and the credential.
 */
export class DataPlane extends Construct {
  readonly stack: DataPlaneStack;
  readonly cachePolicy: CachePolicy;
  /** Sets or removes `Accept` (see {@link acceptNormalizationCode}). */
  readonly viewerRequest: EdgeFunction;
  /** The distribution serving the data plane: the console's, or the data plane's own. */
  readonly distribution: Distribution;
  /** `https://<distribution domain>/workspaces/{workspace}/ogc`. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: DataPlaneProps) {
    super(scope, id);
    const { config, api } = props;
    const routes = props.routes ?? dataRoutes;
    const stack = Stack.of(this);

    this.cachePolicy = new CachePolicy(this, 'CachePolicy', {
      comment: 'GeoPlane data plane: path, every query string, the credential; at most 5 s (ADR 0122)',
      // Origin Cache-Control decides (public, max-age=N is kept up to MaxTTL; private/no-store not
      // at all); an answer without one is not kept.
      minTtl: Duration.seconds(0),
      defaultTtl: Duration.seconds(0),
      maxTtl: Duration.seconds(dataPlaneMaxTtlSeconds),
      queryStringBehavior: CacheQueryStringBehavior.all(),
      headerBehavior: CacheHeaderBehavior.allowList(
        ...dataPlaneCredentialHeaders,
        ...dataPlaneNormalizedHeaders,
      ),
      cookieBehavior: CacheCookieBehavior.allowList(...dataPlaneCredentialCookies),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });
    this.viewerRequest = new EdgeFunction(this, 'ViewerRequest', {
      comment: 'GeoPlane data plane: Accept is the tile media type on tile paths, removed elsewhere',
      code: FunctionCode.fromInline(acceptNormalizationCode(routes)),
      runtime: FunctionRuntime.JS_2_0,
    });
    // The API's stage is the origin path: https://<distribution>/workspaces/… → <stage>/workspaces/….
    const origin = new HttpOrigin(`${api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
      originPath: `/${config.stageName}`,
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
    });
    const behavior: Omit<BehaviorOptions, 'origin'> = {
      // No redirect: a credential sent over plain HTTP is already exposed; refuse rather than follow.
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      cachedMethods: CachedMethods.CACHE_GET_HEAD,
      cachePolicy: this.cachePolicy,
      compress: true,
      functionAssociations: [{ function: this.viewerRequest, eventType: FunctionEventType.VIEWER_REQUEST }],
    };

    if (props.console) {
      this.distribution = props.console.distribution;
      this.distribution.addBehavior(dataPlanePathPattern, origin, behavior);
      // The console's distribution maps no error to a page; it only stops caching them (see above).
      (this.distribution.node.defaultChild as CfnDistribution).addPropertyOverride(
        'DistributionConfig.CustomErrorResponses',
        uncachedErrorCodes.map((code) => ({ ErrorCode: code, ErrorCachingMinTTL: 0 })),
      );
    } else {
      this.distribution = new Distribution(this, 'Distribution', {
        comment: `GeoPlane data plane (${stack.stackName})`,
        httpVersion: HttpVersion.HTTP2_AND_3,
        defaultBehavior: { origin, ...behavior },
        errorResponses: uncachedErrorCodes.map((code) => ({ httpStatus: code, ttl: Duration.seconds(0) })),
      });
      this.acknowledgeOwnDistribution();
    }
    const publicOrigin = `https://${this.distribution.distributionDomainName}`;
    this.url = `${publicOrigin}${DATA_PLANE_ROOT}`;

    this.stack = new DataPlaneStack(this, 'Routes', {
      config,
      table: props.table,
      routes,
      bundles: props.bundles,
      environment: props.environment,
      api,
      authorizer: props.authorizer,
      secretsKey: props.secretsKey,
      publicOrigin,
      ...(props.vpc ? { vpc: props.vpc } : {}),
      ...(props.tileCacheBucketName ? { tileCacheBucketName: props.tileCacheBucketName } : {}),
    });
    // After the operations' stacks: API Gateway's control plane refuses methods created in parallel.
    if (props.after?.nestedStackResource) {
      this.stack.nestedStackResource?.addResourceDependency(props.after.nestedStackResource as CfnResource);
    }
  }

  /** The data plane's own distribution (no console): the findings the console's acknowledges too. */
  private acknowledgeOwnDistribution(): void {
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason:
          'Published data serves clients wherever they are; no country is excluded by default. An operator who ' +
          'needs one adds a geo restriction to the distribution.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No WAF web ACL in the base stack: rules are account-specific and cost per ACL (as for the API stage). ' +
          'Operators attach one; the stage throttle and the usage plan bound the rate behind it.',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason:
          'Without the console there is no log bucket to deliver standard logs to (ADR 0115); every request that ' +
          'reaches the origin is in the API stage access log. Cache hits are not logged.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The distribution uses the default *.cloudfront.net certificate, with which CloudFront cannot set a TLS ' +
          '1.2 minimum; that takes a custom domain and its ACM certificate. The origin is reached over TLS 1.2.',
      },
    );
  }
}
