import { join } from 'node:path';
import {
  Aws,
  BOOTSTRAP_QUALIFIER_CONTEXT,
  CfnCondition,
  DefaultStackSynthesizer,
  Duration,
  Fn,
  type ICfnConditionExpression,
  Names,
  RemovalPolicy,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import type { IRestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  AllowedMethods,
  CachePolicy,
  type CfnDistribution,
  Distribution,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  type ResponseCustomHeader,
  ResponseHeadersPolicy,
  type ResponseSecurityHeadersBehavior,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { consoleSecurityHeaders, originOf } from '#http/console-headers.ts';
import type { StageConfig } from './stage-config.ts';

/** Where the console lives, in the bucket and on the distribution (as on the local host). */
export const consolePath = '/console';

/** The console's hashed, immutable files (Vite's `assets/`): served as they are. */
export const consoleAssetsPath = `${consolePath}/assets/`;

/** The path behaviour that sends API requests to API Gateway (the console calls `/api/v1/…`). */
export const apiPathPattern = '/api/*';

/**
 * The viewer-request function of the console's behaviour (CloudFront Functions, JS 2.0): `/` and
 * `/console` redirect to `/console/`; a console path outside `assets/` is a route of the single
 * page, so it is rewritten to `/console/index.html` (the browser keeps its URL). Anything else is
 * left alone. Rewriting the request, not mapping S3's 403/404 to index.html, keeps the API's own
 * 403 and 404 answers intact.
 */
export const consoleRewriteCode = `function handler(event) {
  var request = event.request;
  var uri = request.uri;
  if (uri === '/' || uri === '${consolePath}') {
    return {
      statusCode: 302,
      statusDescription: 'Found',
      headers: { location: { value: '${consolePath}/' }, 'cache-control': { value: 'no-store' } },
    };
  }
  if (uri.startsWith('${consolePath}/') && !uri.startsWith('${consoleAssetsPath}')) {
    request.uri = '${consolePath}/index.html';
  }
  return request;
}
`;

/** Where the distribution's standard logs go in the console's log bucket. */
export const distributionLogPrefix = 'distribution/';

/**
 * The regions whose S3 buckets CloudFront delivers standard logs to (ADR 0115): the regions enabled
 * by default in every account. CloudFront does not deliver to buckets of the opt-in regions
 * (af-south-1, ap-east-1, eu-south-1, me-south-1, ap-southeast-3, …), and a region added later is
 * an opt-in region too, so this is a list of the regions that work, not of those that don't.
 */
export const standardLogRegions = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'sa-east-1',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-central-1',
  'eu-north-1',
  'ap-south-1',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-southeast-1',
  'ap-southeast-2',
] as const;

/** The settings of a CloudFront response headers policy that sends exactly `headers`. */
export interface ResponseHeaders {
  securityHeadersBehavior: ResponseSecurityHeadersBehavior;
  customHeaders: ResponseCustomHeader[];
}

/**
 * Splits a header set into CloudFront's security headers (which it refuses as custom headers) and
 * custom ones; every header overrides the origin's. Throws on a value CloudFront cannot express,
 * so a change to the shared headers that CloudFront can't send fails the synth instead of drifting.
 */
export function responseHeadersOf(headers: Readonly<Record<string, string>>): ResponseHeaders {
  const security: {
    -readonly [K in keyof ResponseSecurityHeadersBehavior]: ResponseSecurityHeadersBehavior[K];
  } = {};
  const customHeaders: ResponseCustomHeader[] = [];
  const unsupported = (name: string, value: string) =>
    new Error(`CloudFront cannot send ${name}: ${value} as a security header`);
  for (const [name, value] of Object.entries(headers)) {
    switch (name.toLowerCase()) {
      case 'content-security-policy':
        security.contentSecurityPolicy = { contentSecurityPolicy: value, override: true };
        break;
      case 'strict-transport-security': {
        const directives = value.split(';').map((d) => d.trim().toLowerCase());
        const maxAge = /^max-age=(\d+)$/.exec(directives[0] ?? '');
        const rest = new Set(directives.slice(1));
        if (!maxAge || [...rest].some((d) => d !== 'includesubdomains' && d !== 'preload'))
          throw unsupported(name, value);
        security.strictTransportSecurity = {
          accessControlMaxAge: Duration.seconds(Number(maxAge[1])),
          includeSubdomains: rest.has('includesubdomains'),
          preload: rest.has('preload'),
          override: true,
        };
        break;
      }
      case 'x-content-type-options':
        if (value.toLowerCase() !== 'nosniff') throw unsupported(name, value);
        security.contentTypeOptions = { override: true };
        break;
      case 'x-frame-options': {
        const option = Object.values(HeadersFrameOption).find((o) => o === value.toUpperCase());
        if (!option) throw unsupported(name, value);
        security.frameOptions = { frameOption: option, override: true };
        break;
      }
      case 'referrer-policy': {
        const policy = Object.values(HeadersReferrerPolicy).find((p) => p === value.toLowerCase());
        if (!policy) throw unsupported(name, value);
        security.referrerPolicy = { referrerPolicy: policy, override: true };
        break;
      }
      case 'x-xss-protection':
        throw unsupported(name, value);
      default:
        customHeaders.push({ header: name, value, override: true });
    }
  }
  return { securityHeadersBehavior: security, customHeaders };
}

/**
 * The cdk-nag findings of the wildcard grants BucketDeployment gives its handler: `bucketId` is the
 * console bucket's logical id, `qualifier` the CDK bootstrap qualifier (its asset bucket's name).
 */
export function consoleDeploymentFindings(
  bucketId: string,
  qualifier: string = DefaultStackSynthesizer.DEFAULT_QUALIFIER,
): string[] {
  return [
    'Action::s3:GetObject*',
    'Action::s3:GetBucket*',
    'Action::s3:List*',
    'Action::s3:DeleteObject*',
    'Action::s3:Abort*',
    `Resource::arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-<AWS::AccountId>-<AWS::Region>/*`,
    `Resource::<${bucketId}.Arn>/*`,
  ].map((finding) => `AwsSolutions-IAM5[${finding}]`);
}

/** The OIDC issuers the console may call (discovery, token exchange): the configured one's origin. */
export function consoleIssuerOrigins(config: StageConfig): string[] {
  const origin = originOf(config.oidcIssuer);
  return origin ? [origin] : [];
}

export interface ConsoleSiteProps {
  config: StageConfig;
  /** The management API; `/api/*` of the distribution goes to its stage. */
  api: IRestApi;
  /** The built console (console/dist; `ensureConsoleBuilt()` first). */
  dist: string;
  /**
   * Where the console's import uploads go (the presigned POST's origin, `https://<upload bucket>.s3.<region>…`):
   * the CSP lets the console connect there besides its own origin and the issuer.
   */
  uploadOrigin?: string;
}

/**
 * The web console on AWS (issue #14): its build in a private bucket, served with the API by one
 * CloudFront distribution, so the console and `/api/v1/…` share an origin as they do on the local
 * host (the session and CSRF cookies are `__Host-` cookies of that origin). The console's
 * behaviour reads the bucket through Origin Access Control and answers with the console's security
 * headers (shared/http/console-headers.ts); `/api/*` goes to the API's stage uncached, with every
 * viewer header but Host, every cookie and the query string.
 */
export class ConsoleSite extends Construct {
  readonly bucket: Bucket;
  readonly logBucket: Bucket;
  readonly distribution: Distribution;
  readonly rewrite: EdgeFunction;
  readonly responseHeaders: ResponseHeadersPolicy;
  /** `https://<distribution domain>/console/`. */
  readonly url: string;
  /** True in the regions CloudFront delivers standard logs to, when `consoleAccessLogs` is on (ADR 0115). */
  logsDelivered: CfnCondition | undefined;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    const { config, api, dist, uploadOrigin } = props;
    const stack = Stack.of(this);

    // The server access logs of the site bucket and the distribution's standard logs. CloudFront
    // writes its logs with an ACL, so this bucket keeps ACLs enabled (its objects stay private).
    // As the target of the bucket's logs it needs no logs of its own (cdk-nag S1 knows it).
    this.logBucket = new Bucket(this, 'Logs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules:
        config.logRetentionDays === RetentionDays.INFINITE
          ? []
          : [{ id: 'ExpireLogs', expiration: Duration.days(config.logRetentionDays) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.logBucket,
      serverAccessLogsPrefix: 'console-bucket/',
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.rewrite = new EdgeFunction(this, 'Rewrite', {
      comment: 'GeoPlane console: / → /console/; console routes → /console/index.html',
      code: FunctionCode.fromInline(consoleRewriteCode),
      runtime: FunctionRuntime.JS_2_0,
    });

    const headers = responseHeadersOf(
      consoleSecurityHeaders([...consoleIssuerOrigins(config), ...(uploadOrigin ? [uploadOrigin] : [])]),
    );
    this.responseHeaders = new ResponseHeadersPolicy(this, 'Headers', {
      // Policies are account-wide (CloudFront is global): the region keeps two deployments apart.
      responseHeadersPolicyName: `${Names.uniqueResourceName(this, { maxLength: 100 })}-${Aws.REGION}`,
      comment: 'GeoPlane console: shared/http/console-headers.ts (CSP, HSTS, framing, referrer, COOP)',
      securityHeadersBehavior: headers.securityHeadersBehavior,
      customHeadersBehavior: { customHeaders: headers.customHeaders },
    });

    // The API's stage is the origin path: https://<distribution>/api/v1/… → <stage>/api/v1/…, and
    // the OpenAPI document's `../..` server resolves to the distribution's root. The domain is built
    // from the API's id, so the distribution waits for the API, not for its deployment.
    const apiOrigin = new HttpOrigin(`${api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}`, {
      originPath: `/${config.stageName}`,
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
    });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: `GeoPlane console and management API (${stack.stackName})`,
      httpVersion: HttpVersion.HTTP2_AND_3,
      ...(config.consoleAccessLogs
        ? { enableLogging: true, logBucket: this.logBucket, logFilePrefix: distributionLogPrefix }
        : {}),
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        compress: true,
        responseHeadersPolicy: this.responseHeaders,
        functionAssociations: [{ function: this.rewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        [apiPathPattern]: {
          origin: apiOrigin,
          // No redirect: a redirected POST would come back as a GET without its body.
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          cachePolicy: CachePolicy.CACHING_DISABLED,
          // Every viewer header but Host (API Gateway answers 403 to a foreign Host), with
          // Authorization, X-API-Key, X-CSRF-Token, Idempotency-Key and If-Match; all cookies; the query.
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          compress: true,
        },
      },
    });
    this.url = `https://${this.distribution.distributionDomainName}${consolePath}/`;
    if (config.consoleAccessLogs) this.logOnlyWhereDelivered();

    // The hashed assets first, kept across deployments (an open tab still loads its chunks), then
    // index.html, revalidated on every load so a deployment shows at once.
    const logGroup = new LogGroup(this, 'DeploymentLogs', {
      retention: config.logRetentionDays as RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const assets = new BucketDeployment(this, 'DeployAssets', {
      sources: [Source.asset(join(dist, 'assets'))],
      destinationBucket: this.bucket,
      destinationKeyPrefix: consoleAssetsPath.slice(1),
      prune: false,
      cacheControl: [
        CacheControl.setPublic(),
        CacheControl.maxAge(Duration.days(365)),
        CacheControl.immutable(),
      ],
      logGroup,
    });
    const page = new BucketDeployment(this, 'DeployPage', {
      sources: [Source.asset(dist, { exclude: ['assets', '.vite', '.build-stamp'] })],
      destinationBucket: this.bucket,
      destinationKeyPrefix: `${consolePath.slice(1)}/`,
      // Removes what an older build left beside index.html, never the assets (excluded from the sync).
      exclude: ['assets/*'],
      prune: true,
      cacheControl: [CacheControl.noCache()],
      logGroup,
    });
    page.node.addDependency(assets);
    this.acknowledgeFindings(assets, config.consoleAccessLogs);
  }

  /**
   * CloudFront delivers standard logs only to buckets of the regions enabled by default (ADR 0115);
   * the stack is environment-agnostic, so the deploy region decides: elsewhere (opt-in regions,
   * and any region added since) the distribution has no logging configuration at all.
   */
  private logOnlyWhereDelivered(): void {
    const conditions = standardLogRegions.map((region) => Fn.conditionEquals(Aws.REGION, region));
    // Fn::Or takes 2 to 10 conditions: groups of at most 10, or-ed together.
    const groups: ICfnConditionExpression[] = [];
    for (let i = 0; i < conditions.length; i += 10) {
      const group = conditions.slice(i, i + 10);
      groups.push(group.length === 1 ? (group[0] as ICfnConditionExpression) : Fn.conditionOr(...group));
    }
    this.logsDelivered = new CfnCondition(this, 'StandardLogsDelivered', {
      expression: groups.length === 1 ? groups[0] : Fn.conditionOr(...groups),
    });
    (this.distribution.node.defaultChild as CfnDistribution).addPropertyOverride(
      'DistributionConfig.Logging',
      Fn.conditionIf(
        this.logsDelivered.logicalId,
        { Bucket: this.logBucket.bucketRegionalDomainName, Prefix: distributionLogPrefix },
        Aws.NO_VALUE,
      ),
    );
  }

  private acknowledgeFindings(deployment: BucketDeployment, accessLogs: boolean): void {
    if (!accessLogs) {
      Validations.of(this.distribution).acknowledge({
        id: 'AwsSolutions-CFR3',
        reason:
          'The operator turned standard logs off (cdk.json consoleAccessLogs=false, ADR 0115); the API behind ' +
          '/api/* keeps its access log, the console bucket its server access log.',
      });
    }
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason:
          'The console and API serve operators wherever they are; no country is excluded by default. An ' +
          'operator who needs one adds a geo restriction to the distribution.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No WAF web ACL in the base stack: rules are account-specific and cost per ACL (as for the API ' +
          'stage). Operators attach one to the distribution; the API behind it keeps its throttling.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The distribution uses the default *.cloudfront.net certificate, with which CloudFront cannot set ' +
          'a TLS 1.2 minimum; that takes a custom domain and its ACM certificate. Origins are reached over TLS 1.2.',
      },
    );
    // The deployments' custom resource function (one per stack, shared): CDK's own handler, with
    // the grants BucketDeployment gives it (read the CDK asset bucket, sync into the console bucket).
    const handler = deployment.handlerRole.node.scope;
    if (!handler) return;
    const qualifier =
      this.node.tryGetContext(BOOTSTRAP_QUALIFIER_CONTEXT) ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER;
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(handler).acknowledge(
      ...consoleDeploymentFindings(bucketId, qualifier).map((id) => ({
        id,
        reason:
          "CDK's BucketDeployment grants its handler read on the CDK asset bucket (the zipped build) and " +
          'read/write/delete on the console bucket, which it syncs (prune removes stale files); it runs ' +
          'only during deployments and touches no other bucket.',
      })),
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          "CDK's BucketDeployment handler writes its logs with the AWS managed basic execution policy; it runs " +
          'only during deployments, to copy the console build into its bucket.',
      },
      {
        id: 'AwsSolutions-L1',
        reason:
          "The runtime of CDK's BucketDeployment handler is chosen by aws-cdk-lib (Python with the AWS CLI " +
          'layer) and moves with it; it runs only during deployments.',
      },
    );
  }
}
