import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import type { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { consoleContentSecurityPolicy, consoleSecurityHeaders } from '#http/console-headers.ts';
import {
  apiPathPattern,
  distributionLogPrefix,
  responseHeadersOf,
  standardLogRegions,
} from '#infra/constructs/console-site.ts';
import { dataPlanePathPattern } from '#infra/constructs/data-plane.ts';
import { templateResourceBudget } from '#infra/constructs/operation-stacks.ts';
import type { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { CONSOLE_DIST } from '../../console/build.ts';
import { logicalId } from './iam.ts';
import { appWithConsole, deploymentTemplate, resourceCount, templatesOf } from './templates.ts';

type Json = Record<string, any>;

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

const issuer = 'https://login.example.com/realms/geo';

async function synthesize(context: Record<string, unknown> = {}) {
  const { app, stack } = await appWithConsole({ context: { ...cdkContext, oidcIssuer: issuer, ...context } });
  return { app, stack, template: deploymentTemplate(stack) };
}

const only = (resources: Record<string, Json>): [string, Json] => {
  const entries = Object.entries(resources);
  expect(entries).toHaveLength(1);
  return entries[0] as [string, Json];
};

/** The CloudFront Function's code, run as CloudFront runs it: `handler(event)` on a viewer request. */
function viewerRequest(code: string, uri: string, querystring: Json = {}): Json {
  const request = { method: 'GET', uri, querystring, headers: {}, cookies: {} };
  const event = {
    version: '1.0',
    context: { eventType: 'viewer-request' },
    viewer: { ip: '192.0.2.1' },
    request,
  };
  // The script's value is its last expression's: the handler's answer.
  return runInNewContext(`${code}\nhandler(event);`, { event }) as Json;
}

/** The headers a response headers policy sends, written back as header lines. */
/** A template string value: Fn::Join flattened, each attribute reference as `<Resource.Attribute>`. */
function flatten(value: unknown): string {
  if (typeof value === 'string') return value;
  const json = value as Json;
  if (json?.['Fn::Join']) return (json['Fn::Join'][1] as unknown[]).map(flatten).join(json['Fn::Join'][0]);
  if (json?.['Fn::GetAtt']) return `<${(json['Fn::GetAtt'] as string[]).join('.')}>`;
  if (json?.Ref) return `<${json.Ref}>`;
  throw new Error(`cannot flatten ${JSON.stringify(value)}`);
}

function headersOfPolicy(config: Json): Record<string, string> {
  const security = config.SecurityHeadersConfig ?? {};
  const out: Record<string, string> = {};
  for (const { Header, Value } of config.CustomHeadersConfig?.Items ?? []) out[Header] = Value;
  const hsts = security.StrictTransportSecurity;
  if (hsts)
    out['Strict-Transport-Security'] = [
      `max-age=${hsts.AccessControlMaxAgeSec}`,
      ...(hsts.IncludeSubdomains ? ['includeSubDomains'] : []),
      ...(hsts.Preload ? ['preload'] : []),
    ].join('; ');
  if (security.ContentTypeOptions) out['X-Content-Type-Options'] = 'nosniff';
  if (security.FrameOptions) out['X-Frame-Options'] = security.FrameOptions.FrameOption;
  if (security.ReferrerPolicy) out['Referrer-Policy'] = security.ReferrerPolicy.ReferrerPolicy;
  if (security.ContentSecurityPolicy)
    out['Content-Security-Policy'] = flatten(security.ContentSecurityPolicy.ContentSecurityPolicy);
  return out;
}

describe('the web console on AWS (issue #14)', () => {
  let app: App;
  let stack: GeoPlaneStack;
  let template: Template;
  let bucketId: string;
  /** The import upload bucket's origin, as the template names it. */
  let uploadOrigin: string;
  let distribution: Json;

  beforeAll(async () => {
    ({ app, stack, template } = await synthesize());
    bucketId = logicalId(stack.console?.bucket as never);
    uploadOrigin = `https://<${logicalId(stack.importUploads.bucket as never)}.RegionalDomainName>`;
    distribution = only(template.findResources('AWS::CloudFront::Distribution'))[1].Properties
      .DistributionConfig;
  });

  describe('the bucket', () => {
    it('is private, encrypted, without website hosting, and logs its access', () => {
      const bucket = template.findResources('AWS::S3::Bucket')[bucketId] as Json;
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration).toEqual([
        { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
      ]);
      expect(bucket.Properties.WebsiteConfiguration).toBeUndefined();
      expect(bucket.Properties.LoggingConfiguration.DestinationBucketName).toEqual({
        Ref: logicalId(stack.console?.logBucket as never),
      });
    });

    it('refuses requests without TLS and lets only this distribution read it (Origin Access Control)', () => {
      const [, policy] = only(
        template.findResources('AWS::S3::BucketPolicy', { Properties: { Bucket: { Ref: bucketId } } }),
      );
      const statements = policy.Properties.PolicyDocument.Statement as Json[];
      expect(statements).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 's3:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
      const reads = statements.filter((s) => s.Principal?.Service === 'cloudfront.amazonaws.com');
      expect(reads).toEqual([
        expect.objectContaining({
          Effect: 'Allow',
          Action: 's3:GetObject',
          Condition: {
            StringEquals: {
              'AWS:SourceArn': expect.objectContaining({ 'Fn::Join': expect.anything() }),
            },
          },
        }),
      ]);
      expect(JSON.stringify(reads[0]?.Condition)).toContain(logicalId(stack.console?.distribution as never));
      // Nothing else may read it: no other Allow to anyone.
      expect(statements.filter((s) => s.Effect === 'Allow')).toHaveLength(1);

      const [oacId, oac] = only(template.findResources('AWS::CloudFront::OriginAccessControl'));
      expect(oac.Properties.OriginAccessControlConfig).toMatchObject({
        OriginAccessControlOriginType: 's3',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      });
      const s3Origin = (distribution.Origins as Json[]).find((o) => o.S3OriginConfig);
      expect(s3Origin?.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [oacId, 'Id'] });
      expect(s3Origin?.DomainName).toEqual({ 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] });
    });

    it('receives the build: hashed assets immutable and kept, index.html revalidated and pruned', () => {
      const deployments = Object.values(template.findResources('Custom::CDKBucketDeployment')) as Json[];
      const byPrefix = Object.fromEntries(
        deployments.map((d) => [d.Properties.DestinationBucketKeyPrefix, d] as [string, Json]),
      );
      expect(Object.keys(byPrefix).sort()).toEqual(['console/', 'console/assets/']);
      const assets = byPrefix['console/assets/'] as Json;
      const page = byPrefix['console/'] as Json;
      expect(assets.Properties).toMatchObject({
        DestinationBucketName: { Ref: bucketId },
        Prune: false,
        SystemMetadata: { 'cache-control': 'public, max-age=31536000, immutable' },
      });
      expect(page.Properties).toMatchObject({
        DestinationBucketName: { Ref: bucketId },
        Prune: true,
        Exclude: ['assets/*'],
        SystemMetadata: { 'cache-control': 'no-cache' },
      });
      // index.html names the new assets: they are in the bucket before it.
      const assetsId = Object.entries(template.findResources('Custom::CDKBucketDeployment')).find(
        ([, d]) => d === assets,
      )?.[0];
      expect(page.DependsOn).toContain(assetsId);

      // What each deployment packages: index.html alone (no build stamp, no Vite manifest); every asset.
      const staged = (id: string) => {
        const asset = stack.console?.node.findAll().find((c) => c.node.path.endsWith(`/${id}/Asset1`));
        if (!(asset instanceof Asset)) throw new Error(`no asset under ${id}`);
        return readdirSync(join(app.outdir, asset.assetPath)).sort();
      };
      expect(staged('DeployPage')).toEqual(['index.html']);
      expect(staged('DeployAssets')).toEqual(readdirSync(join(CONSOLE_DIST, 'assets')).sort());
    });
  });

  describe('the distribution', () => {
    it('serves HTTPS only over HTTP/2 and 3, logs to the log bucket, maps no error to a page and caches none', () => {
      expect(distribution.HttpVersion).toBe('http2and3');
      expect(distribution.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
      // Where CloudFront delivers standard logs (ADR 0115; see consoleAccessLogs below).
      expect(distribution.Logging['Fn::If'][1].Bucket).toEqual({
        'Fn::GetAtt': [logicalId(stack.console?.logBucket as never), 'RegionalDomainName'],
      });
      // API 403/404 answers stay the API's: deep links are rewritten by the function instead. Errors
      // are not kept past the data plane's staleness bound either (ADR 0122): no page, TTL 0.
      for (const response of distribution.CustomErrorResponses as Json[]) {
        expect(response).toEqual({ ErrorCode: response.ErrorCode, ErrorCachingMinTTL: 0 });
      }
    });

    it('has three behaviours: the console (default), /api/* and the data plane’s /workspaces/*', () => {
      expect(distribution.DefaultCacheBehavior).toMatchObject({
        AllowedMethods: ['GET', 'HEAD'],
        CachePolicyId: CachePolicy.CACHING_OPTIMIZED.cachePolicyId,
        Compress: true,
        ResponseHeadersPolicyId: { Ref: logicalId(stack.console?.responseHeaders as never) },
        FunctionAssociations: [
          {
            EventType: 'viewer-request',
            FunctionARN: { 'Fn::GetAtt': [logicalId(stack.console?.rewrite as never), 'FunctionARN'] },
          },
        ],
      });
      expect((distribution.CacheBehaviors as Json[]).map((b) => b.PathPattern)).toEqual([
        apiPathPattern,
        dataPlanePathPattern,
      ]);
    });

    it('sends /api/* to the API stage uncached, with every method, viewer header but Host, cookie and query', () => {
      const api = (distribution.CacheBehaviors as Json[])[0] as Json;
      expect(api).toMatchObject({
        PathPattern: '/api/*',
        ViewerProtocolPolicy: 'https-only',
        AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
        CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
        // Managed-AllViewerExceptHostHeader: all viewer headers (Authorization, X-API-Key, X-CSRF-Token,
        // Idempotency-Key, If-Match, …) except Host, all cookies, all query strings.
        OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
      });
      expect(api.FunctionAssociations).toBeUndefined();
      expect(api.ResponseHeadersPolicyId).toBeUndefined();

      const origin = (distribution.Origins as Json[]).find((o) => o.Id === api.TargetOriginId) as Json;
      expect(origin.DomainName).toEqual({
        'Fn::Join': [
          '',
          [
            { Ref: logicalId(stack.api.api) },
            '.execute-api.',
            { Ref: 'AWS::Region' },
            '.',
            { Ref: 'AWS::URLSuffix' },
          ],
        ],
      });
      expect(origin.CustomOriginConfig).toMatchObject({
        OriginProtocolPolicy: 'https-only',
        OriginSSLProtocols: ['TLSv1.2'],
      });
      // https://<distribution>/api/v1/… reaches <stage>/api/v1/…: every route lives under /api/.
      expect(origin.OriginPath).toBe(`/${cdkContext.stageName}`);
      expect(routes.filter((op) => !op.path.startsWith('/api/v1/'))).toEqual([]);
    });
  });

  describe('the console’s response headers', () => {
    let policy: Json;

    beforeAll(() => {
      policy = only(template.findResources('AWS::CloudFront::ResponseHeadersPolicy'))[1].Properties
        .ResponseHeadersPolicyConfig;
    });

    it('are exactly those of the local host (shared/http/console-headers.ts), overriding the origin’s', () => {
      expect(headersOfPolicy(policy)).toEqual(
        consoleSecurityHeaders(['https://login.example.com', uploadOrigin]),
      );
      const security = Object.values(policy.SecurityHeadersConfig) as Json[];
      const custom = policy.CustomHeadersConfig.Items as Json[];
      expect([...security, ...custom].every((h) => h.Override === true)).toBe(true);
    });

    it('carry the console CSP, with the issuer for discovery, the upload bucket, and no unsafe-inline', () => {
      const csp = flatten(policy.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy);
      expect(csp).toBe(consoleContentSecurityPolicy(['https://login.example.com', uploadOrigin]));
      expect(csp).toContain(`connect-src 'self' https://login.example.com ${uploadOrigin};`);
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
    });

    it('refuse a header value CloudFront cannot send (instead of silently dropping it)', () => {
      expect(() => responseHeadersOf({ 'X-Frame-Options': 'ALLOW-FROM https://x.example' })).toThrow(
        /X-Frame-Options/,
      );
      expect(() => responseHeadersOf({ 'Strict-Transport-Security': 'max-age=1; bogus' })).toThrow(
        /Strict-Transport-Security/,
      );
    });

    it('leave the CSP without issuer when none is configured', async () => {
      const { template: bare } = await synthesize({ oidcIssuer: '' });
      const [, resource] = only(bare.findResources('AWS::CloudFront::ResponseHeadersPolicy'));
      const config = resource.Properties.ResponseHeadersPolicyConfig;
      expect(flatten(config.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy)).toBe(
        consoleContentSecurityPolicy([uploadOrigin]),
      );
    }, 120_000);
  });

  describe('the viewer-request function', () => {
    let code: string;

    beforeAll(() => {
      // The console's; the data plane's own is test/infra/data-plane.test.ts's.
      const [, fn] = only(
        Object.fromEntries(
          Object.entries(template.findResources('AWS::CloudFront::Function')).filter(
            ([id]) => id === logicalId(stack.console?.rewrite as never),
          ),
        ),
      );
      expect(fn.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
      expect(fn.Properties.AutoPublish).toBe(true);
      code = fn.Properties.FunctionCode;
    });

    it.each([
      '/console/',
      '/console/index.html',
      '/console/workspaces',
      '/console/workspaces/x',
      '/console/workspaces/x/layers/roads.v2',
      '/console/callback',
    ])('rewrites the single page’s route %s to /console/index.html', (uri) => {
      const request = viewerRequest(code, uri, { code: { value: 'abc' } });
      expect(request.uri).toBe('/console/index.html');
      // The callback's ?code=…&state=… reach the page.
      expect(request.querystring).toEqual({ code: { value: 'abc' } });
    });

    it.each([
      '/console/assets/index-aOCLKt7S.js',
      '/console/assets/index-BZpcbaU5.css',
      '/api/v1/workspaces',
      '/api/v1/openapi.json',
      '/elsewhere',
    ])('leaves %s alone', (uri) => {
      expect(viewerRequest(code, uri)).toMatchObject({ method: 'GET', uri });
    });

    it.each(['/', '/console'])('redirects %s to /console/', (uri) => {
      expect(viewerRequest(code, uri)).toEqual({
        statusCode: 302,
        statusDescription: 'Found',
        headers: { location: { value: '/console/' }, 'cache-control': { value: 'no-store' } },
      });
    });
  });

  describe('outputs', () => {
    it('names the console URL and the OIDC redirect URI on the distribution’s domain', () => {
      const outputs = template.findOutputs('*');
      const onDomain = (path: string) => ({
        'Fn::Join': [
          '',
          [
            'https://',
            { 'Fn::GetAtt': [logicalId(stack.console?.distribution as never), 'DomainName'] },
            path,
          ],
        ],
      });
      expect(outputs.ConsoleUrl?.Value).toEqual(onDomain('/console/'));
      expect(outputs.ConsoleRedirectUri?.Value).toEqual(onDomain('/console/callback'));
    });

    it('names the configured redirect URI when cdk.json sets one', async () => {
      const redirect = 'https://geo.example.com/console/callback';
      const { template: configured } = await synthesize({ oidcRedirectUri: redirect });
      expect(configured.findOutputs('ConsoleRedirectUri').ConsoleRedirectUri?.Value).toBe(redirect);
    }, 120_000);
  });

  it(`keeps the parent template under ${templateResourceBudget} resources with the console`, () => {
    const [[parent, parentTemplate]] = templatesOf(stack) as [[Stack, Template]];
    expect(parent).toBe(stack);
    expect(resourceCount(parentTemplate)).toBeLessThan(templateResourceBudget);
  });
});

/** Evaluates a CloudFormation condition (Fn::Or, Fn::And, Fn::Not, Fn::Equals, Condition) for a region. */
function holds(conditions: Json, expression: Json, region: string): boolean {
  const value = (v: unknown): unknown =>
    v && typeof v === 'object' && (v as Json).Ref === 'AWS::Region' ? region : v;
  const [[fn, args]] = Object.entries(expression) as [[string, any]];
  switch (fn) {
    case 'Fn::Or':
      return (args as Json[]).some((a) => holds(conditions, a, region));
    case 'Fn::And':
      return (args as Json[]).every((a) => holds(conditions, a, region));
    case 'Fn::Not':
      return !holds(conditions, args[0], region);
    case 'Fn::Equals':
      return value(args[0]) === value(args[1]);
    case 'Condition':
      return holds(conditions, conditions[args], region);
    default:
      throw new Error(`unexpected ${fn}`);
  }
}

describe('consoleAccessLogs (cdk.json context, ADR 0115)', () => {
  /** The distribution's Logging in `region`, as CloudFormation resolves the template there (or undefined). */
  async function loggingIn(context: Record<string, unknown>, regions: readonly string[]) {
    const { stack, template } = await synthesize(context);
    const json = template.toJSON();
    const [, distribution] = only(template.findResources('AWS::CloudFront::Distribution'));
    const logging = distribution.Properties.DistributionConfig.Logging;
    const bucket = { 'Fn::GetAtt': [logicalId(stack.console?.logBucket as never), 'RegionalDomainName'] };
    return {
      bucket,
      conditions: json.Conditions ?? {},
      in: regions.map((region) => {
        if (logging === undefined || !logging['Fn::If']) return logging;
        const [condition, then, otherwise] = logging['Fn::If'];
        const chosen = holds(json.Conditions, json.Conditions[condition], region) ? then : otherwise;
        return chosen?.Ref === 'AWS::NoValue' ? undefined : chosen;
      }),
    };
  }

  const optIn = [
    'af-south-1',
    'ap-east-1',
    'eu-south-1',
    'me-south-1',
    'ap-southeast-3',
    'me-central-1',
    'eu-south-2',
    'eu-central-2',
    'ap-south-2',
    'ap-southeast-4',
    'il-central-1',
    'ca-west-1',
    // A region added later is opt-in too: no logs rather than a failed deploy.
    'xx-future-1',
  ];

  it('is on by default: logs in every region enabled by default, none in opt-in regions', async () => {
    expect(cdkContext.consoleAccessLogs).toBe(true);
    const logging = await loggingIn({}, [...standardLogRegions, ...optIn]);
    expect(standardLogRegions).toHaveLength(17);
    expect(logging.in.slice(0, standardLogRegions.length)).toEqual(
      standardLogRegions.map(() => ({ Bucket: logging.bucket, Prefix: distributionLogPrefix })),
    );
    expect(logging.in.slice(standardLogRegions.length)).toEqual(optIn.map(() => undefined));
    // Fn::Or takes 2 to 10 conditions.
    const widths: number[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          if (k === 'Fn::Or') widths.push((x as unknown[]).length);
          walk(x);
        }
    };
    walk(logging.conditions);
    expect(widths.length).toBeGreaterThan(0);
    for (const width of widths) expect(width >= 2 && width <= 10, `Fn::Or of ${width}`).toBe(true);
  }, 120_000);

  it.each(['false', '0'])(
    '=%s: the distribution never logs, in any region; the log bucket stays',
    async (value) => {
      const logging = await loggingIn({ consoleAccessLogs: value }, ['us-east-1', 'af-south-1']);
      expect(logging.in).toEqual([undefined, undefined]);
      expect(JSON.stringify(logging.conditions)).not.toContain('us-east-1');
      const { stack } = await synthesize({ consoleAccessLogs: value });
      expect(stack.console?.logBucket).toBeDefined();
    },
    120_000,
  );
});

describe.each(['false', '0'])('consoleEnabled=%s', (value) => {
  it('deploys neither bucket nor console distribution, and no console output', async () => {
    const { stack, template } = await synthesize({ consoleEnabled: value });
    expect(stack.console).toBeUndefined();
    // Only the data plane's own (ADR 0122).
    expect(Object.keys(template.findResources('AWS::CloudFront::Distribution'))).toEqual([
      logicalId(stack.dataPlane.distribution),
    ]);
    expect(template.findResources('Custom::CDKBucketDeployment')).toEqual({});
    // Only the import upload bucket and its access-log bucket, and the tile cache bucket (ADR 0139).
    expect(Object.keys(template.findResources('AWS::S3::Bucket')).sort()).toEqual(
      [
        logicalId(stack.importUploads.bucket),
        logicalId(stack.importUploads.accessLogs),
        logicalId(stack.tileCache.bucket),
      ].sort(),
    );
    expect(Object.keys(template.findOutputs('*'))).not.toContain('ConsoleUrl');
  }, 120_000);
});
