import { runInNewContext } from 'node:vm';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { DATA_PLANE_HANDLER, DATA_PLANE_ROOT, dataRoutes } from '#api/data-routes.ts';
import { routes } from '#api/routes.ts';
import { SESSION_COOKIE } from '#auth/cookies.ts';
import type { SecretBox } from '#domain/secrets.ts';
import { liveConnection, type Service } from '#domain/services.ts';
import { MVT } from '#domain/settings.ts';
import {
  binaryRoutes,
  DataPlaneStack,
  dataPlaneCredentialCookies,
  dataPlaneCredentialHeaders,
  dataPlaneDescription,
  dataPlaneMaxTtlSeconds,
  dataPlanePathPattern,
  servicePasswordContextKeys,
  uncachedErrorCodes,
} from '#infra/constructs/data-plane.ts';
import { OperationsStack, templateResourceBudget } from '#infra/constructs/operation-stacks.ts';
import type { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { gsi1 } from '#store/table.ts';
import { actionsIn, asArray, logicalId, type Statement, statementsOfRole } from './iam.ts';
import { appWithConsole, cdkContext, deploymentTemplate, resourceCount, synthesize } from './templates.ts';

type Json = Record<string, any>;

const subnets = ['subnet-0aaaaaaaaaaaaaaa1', 'subnet-0bbbbbbbbbbbbbbb2'];
const groups = ['sg-0aaaaaaaaaaaaaaa1'];
const vpc = {
  vpcId: 'vpc-0123456789abcdef0',
  privateSubnetIds: subnets,
  securityGroupIds: groups,
  endpoints: 'gateway',
  routeTableIds: ['rtb-0aaaaaaaaaaaaaaa1'],
};

/** Every DynamoDB action that writes (none but UpdateItem, of the tile cache's usage, may reach the data plane). */
const dynamoWrites = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:TransactWriteItems',
  'dynamodb:PartiQLInsert',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLDelete',
  'dynamodb:*',
];

/** The full path of each API Gateway resource of a (merged) template, by logical id. */
function resourcePaths(template: Template): Map<string, string> {
  const resources = template.findResources('AWS::ApiGateway::Resource') as Record<string, Json>;
  const paths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const { ParentId, PathPart } = (resources[id] as Json).Properties as Json;
    const parent = ParentId.Ref && resources[ParentId.Ref] ? pathOf(ParentId.Ref) : '';
    const path = `${parent}/${PathPart}`;
    paths.set(id, path);
    return path;
  };
  for (const id of Object.keys(resources)) pathOf(id);
  return paths;
}

/** `METHOD path` → the method's properties, for every method of the template. */
function methodsByRoute(template: Template): Map<string, Json> {
  const paths = resourcePaths(template);
  const out = new Map<string, Json>();
  for (const method of Object.values(
    template.findResources('AWS::ApiGateway::Method') as Record<string, Json>,
  )) {
    const path = paths.get(method.Properties.ResourceId.Ref) as string;
    out.set(`${method.Properties.HttpMethod} ${path}`, method.Properties);
  }
  return out;
}

/** The CloudFront Function's code run as CloudFront runs it on a viewer request. */
function viewerRequest(code: string, uri: string, headers: Json): Json {
  const event = {
    version: '1.0',
    context: { eventType: 'viewer-request' },
    viewer: { ip: '192.0.2.1' },
    request: { method: 'GET', uri, querystring: {}, headers, cookies: {} },
  };
  return runInNewContext(`${code}\nhandler(event);`, { event }) as Json;
}

/** A request path of a route: each `{param}` filled in. */
const sample = (path: string) => path.replace(/\{[^}]+\}/g, (p) => (p === '{workspace}' ? 'acme' : '7'));

describe('the data plane (ADR 0122), as cdk synth makes it with the console', () => {
  let stack: GeoPlaneStack;
  let template: Template;
  let parent: Json;
  let fnId: string;
  let statements: Statement[];
  let dataMethods: Map<string, Json>;

  beforeAll(async () => {
    ({ stack } = await appWithConsole({ context: cdkContext }));
    template = deploymentTemplate(stack);
    parent = Template.fromStack(stack).toJSON();
    fnId = logicalId(stack.dataPlane.stack.function.function);
    statements = statementsOfRole(template, stack.dataPlane.stack.function.role);
    dataMethods = new Map(
      [...methodsByRoute(template)].filter(([route]) => route.split(' ')[1]?.startsWith('/workspaces/')),
    );
  }, 240_000);

  describe('the function', () => {
    it('is exactly one function, of the data plane entry, for every data route', () => {
      const functions = Object.entries(
        template.findResources('AWS::Lambda::Function') as Record<string, Json>,
      );
      const dataPlane = functions.filter(([, fn]) => fn.Properties.Description === dataPlaneDescription);
      expect(dataPlane.map(([id]) => id)).toEqual([fnId]);
      // The route table names one handler; no management function serves a data path.
      expect(new Set(dataRoutes.map((route) => route.handler))).toEqual(new Set([DATA_PLANE_HANDLER]));
      for (const [route, method] of dataMethods) {
        expect(JSON.stringify(method.Integration.Uri), route).toContain(`"${fnId}"`);
      }
    });

    it('runs as every function of the app does: nodejs24.x, arm64, X-Ray, its own log group, under 29 s', () => {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: dataPlaneDescription,
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: logicalId(stack.dataPlane.stack.function.logGroup) } },
        Timeout: 15,
      });
    });

    it('gets the stage environment, the secrets key and the public origin its links point at', () => {
      const fn = template.findResources('AWS::Lambda::Function')[fnId] as Json;
      const env = fn.Properties.Environment.Variables as Json;
      expect(env.TABLE_NAME).toEqual({ Ref: logicalId(stack.table.table) });
      expect(env.KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [logicalId(stack.api.secretsKey as never), 'Arn'] });
      expect(env.TILE_CACHE_BUCKET).toEqual({ Ref: stack.tileCache.bucketLogicalId });
      expect(env.DATA_PLANE_ORIGIN).toEqual({
        'Fn::Join': [
          '',
          ['https://', { 'Fn::GetAtt': [logicalId(stack.console?.distribution as never), 'DomainName'] }],
        ],
      });
    });

    it('is not in any VPC without cdk.json vpc', () => {
      const fn = template.findResources('AWS::Lambda::Function')[fnId] as Json;
      expect(fn.Properties.VpcConfig).toBeUndefined();
    });
  });

  describe('least privilege', () => {
    it('reads the catalog (GetItem, BatchGetItem, Query) and writes nothing but the tile cache usage (UpdateItem)', () => {
      const dynamo = actionsIn(statements, 'dynamodb');
      expect(dynamo).toEqual([
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:Query',
        // A stored tile adds to its workspace's tile cache usage (ADR 0139).
        'dynamodb:UpdateItem',
      ]);
      for (const write of dynamoWrites.filter((w) => w !== 'dynamodb:UpdateItem'))
        expect(dynamo).not.toContain(write);
    });

    it('queries the table and GSI1 only, and names every DynamoDB resource by ARN', () => {
      const tableArn = { 'Fn::GetAtt': [logicalId(stack.table.table), 'Arn'] };
      const dynamo = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')));
      for (const s of dynamo) expect(JSON.stringify(s.Resource)).not.toMatch(/"\*"|index\/\*/);
      const query = dynamo.filter((s) => asArray(s.Action).includes('dynamodb:Query'));
      const sorted = (list: unknown[]) => list.map((v) => JSON.stringify(v)).sort();
      expect(sorted(query.flatMap((s) => asArray(s.Resource)))).toEqual(
        sorted([tableArn, { 'Fn::Join': ['', [tableArn, `/index/${gsi1}`]] }]),
      );
      const items = dynamo.filter((s) => !asArray(s.Action).includes('dynamodb:Query'));
      expect(items.flatMap((s) => asArray(s.Resource))).toEqual([tableArn]);
    });

    it('decrypts with the secrets key, service passwords only, and never encrypts', () => {
      const kms = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('kms:')));
      expect(actionsIn(kms, 'kms')).toEqual(['kms:Decrypt']);
      expect(kms).toHaveLength(1);
      expect(kms[0]?.Resource).toEqual({ 'Fn::GetAtt': [logicalId(stack.api.secretsKey as never), 'Arn'] });
      expect((kms[0] as Json).Condition).toEqual({
        'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['workspace_id', 'service_id'] },
        Null: { 'kms:EncryptionContext:workspace_id': 'false', 'kms:EncryptionContext:service_id': 'false' },
      });
    });

    it('allows exactly the encryption context the domain decrypts a service password with', async () => {
      // Prepare: a box that records the context it is asked to decrypt with.
      let context: Record<string, string> | undefined;
      const box: SecretBox = {
        encrypt: async () => 'unused',
        decrypt: async (_ciphertext, c) => {
          context = c;
          return 'secret';
        },
      };
      const service = {
        id: 'svc-1',
        workspace_id: 'ws-1',
        name: 'roads',
        type: 'postgis',
        password_enc: 'kms.AAAA',
        connection: { host: 'db.example.com', port: 5432, database: 'gis', user: 'reader' },
      } as unknown as Service;
      // Act
      await liveConnection(box, service);
      // Assess
      expect(Object.keys(context ?? {}).sort()).toEqual([...servicePasswordContextKeys].sort());
    });

    it('grants nothing but logs, X-Ray, DynamoDB, that one decrypt and the tile store', () => {
      const services = new Set(statements.flatMap((s) => asArray(s.Action)).map((a) => a.split(':')[0]));
      // S3: tiles/* of the tile cache bucket only (test/infra/tile-cache.test.ts, ADR 0139).
      expect([...services].sort()).toEqual(['dynamodb', 'kms', 'logs', 's3', 'xray']);
    });
  });

  describe('the methods', () => {
    it('has one GET method per data route, at its path, on the management API', () => {
      expect([...dataMethods.keys()].sort()).toEqual(dataRoutes.map((r) => `${r.method} ${r.path}`).sort());
      template.resourceCountIs('AWS::ApiGateway::Method', routes.length + dataRoutes.length);
      template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
      for (const method of dataMethods.values()) {
        expect(method.RestApiId).toEqual({ Ref: logicalId(stack.api.api) });
      }
    });

    it('puts each behind the REQUEST authorizer, with the usage key it returns, as the management methods', () => {
      const authorizerId = logicalId(stack.api.authorizer);
      for (const route of dataRoutes) {
        const method = dataMethods.get(`GET ${route.path}`) as Json;
        expect(method, route.operationId).toMatchObject({
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
          ApiKeyRequired: true,
          OperationName: route.operationId,
          Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' },
        });
      }
      // The authorizer stays uncached (TTL 0): no identity source is mandatory, anonymous calls reach it.
      template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
        Type: 'REQUEST',
        AuthorizerResultTtlInSeconds: 0,
      });
    });

    it('lets API Gateway invoke the function from each data method on the stage, and from nothing else', () => {
      const permissions = Object.values(
        template.findResources('AWS::Lambda::Permission', {
          Properties: { FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] } },
        }) as Record<string, Json>,
      );
      expect(permissions).toHaveLength(dataRoutes.length);
      const sources = permissions.map((p) => {
        expect(p.Properties.Principal).toBe('apigateway.amazonaws.com');
        const joined = (p.Properties.SourceArn['Fn::Join'][1] as unknown[]).filter(
          (v) => typeof v === 'string',
        );
        return (joined.at(-1) as string).replace(/^\//, '');
      });
      expect(sources.sort()).toEqual(
        dataRoutes
          .map((r) => `${cdkContext.stageName}/${r.method}${r.path.replace(/\{[^}]*\}/g, '*')}`)
          .sort(),
      );
    });

    it('decodes vector tiles: their media type is one of the REST API’s binary media types', () => {
      expect(
        binaryRoutes()
          .map((r) => r.operationId)
          .sort(),
      ).toEqual(['getCollectionTile', 'getDataTile']);
      template.hasResourceProperties('AWS::ApiGateway::RestApi', {
        BinaryMediaTypes: ['image/*', 'application/octet-stream', MVT],
      });
    });
  });

  describe('the nested stack (ADR 0077, 0114)', () => {
    it('holds the function and methods in a stack of its own, the paths in the parent', () => {
      const nested = stack.dataPlane.stack;
      expect(nested).toBeInstanceOf(DataPlaneStack);
      expect(Stack.of(nested.function)).toBe(nested);
      for (const method of nested.methods.values()) expect(Stack.of(method)).toBe(nested);
      const own = Template.fromStack(nested);
      own.resourceCountIs('AWS::ApiGateway::Method', dataRoutes.length);
      own.resourceCountIs('AWS::ApiGateway::Resource', 0);
      expect(resourceCount(own)).toBeLessThan(templateResourceBudget);
    });

    it('is created after the last operations stack, and the API deployment after it', () => {
      const operations = [...stack.api.stacks.values()];
      expect(operations.at(-1)).toBeInstanceOf(OperationsStack);
      const id = stack.getLogicalId(stack.dataPlane.stack.nestedStackResource as never);
      const last = stack.getLogicalId(operations.at(-1)?.nestedStackResource as never);
      expect(parent.Resources[id].DependsOn).toContain(last);
      const deployment = Object.values(parent.Resources as Record<string, Json>).find(
        (r) => r.Type === 'AWS::ApiGateway::Deployment',
      ) as Json;
      expect(deployment.DependsOn).toContain(id);
    });
  });

  describe('CloudFront', () => {
    let distribution: Json;
    let behavior: Json;
    let policy: Json;

    beforeAll(() => {
      distribution = (
        template.findResources('AWS::CloudFront::Distribution')[
          logicalId(stack.console?.distribution as never)
        ] as Json
      ).Properties.DistributionConfig;
      behavior = (distribution.CacheBehaviors as Json[]).find(
        (b) => b.PathPattern === dataPlanePathPattern,
      ) as Json;
      policy = (
        template.findResources('AWS::CloudFront::CachePolicy')[logicalId(stack.dataPlane.cachePolicy)] as Json
      ).Properties.CachePolicyConfig;
    });

    it('serves /workspaces/* from the console’s distribution: one origin for console, API and data', () => {
      template.resourceCountIs('AWS::CloudFront::Distribution', 1);
      expect(stack.dataPlane.distribution).toBe(stack.console?.distribution);
      expect(behavior).toMatchObject({
        ViewerProtocolPolicy: 'https-only',
        AllowedMethods: ['GET', 'HEAD'],
        CachedMethods: ['GET', 'HEAD'],
        Compress: true,
        CachePolicyId: { Ref: logicalId(stack.dataPlane.cachePolicy) },
        FunctionAssociations: [
          {
            EventType: 'viewer-request',
            FunctionARN: { 'Fn::GetAtt': [logicalId(stack.dataPlane.viewerRequest), 'FunctionARN'] },
          },
        ],
      });
      expect(behavior.OriginRequestPolicyId).toBeUndefined();
      // Every data route lives under the pattern.
      for (const route of dataRoutes) expect(route.path.startsWith('/workspaces/')).toBe(true);
    });

    it('sends it to the API stage over HTTPS only', () => {
      const origin = (distribution.Origins as Json[]).find((o) => o.Id === behavior.TargetOriginId) as Json;
      expect(origin.DomainName['Fn::Join'][1][0]).toEqual({ Ref: logicalId(stack.api.api) });
      expect(origin.OriginPath).toBe(`/${cdkContext.stageName}`);
      expect(origin.CustomOriginConfig).toMatchObject({
        OriginProtocolPolicy: 'https-only',
        OriginSSLProtocols: ['TLSv1.2'],
      });
    });

    it('keys the cache on the path, every query string, the credential headers and the session cookie', () => {
      const key = policy.ParametersInCacheKeyAndForwardedToOrigin;
      expect(key.QueryStringsConfig).toEqual({ QueryStringBehavior: 'all' });
      expect(key.HeadersConfig.HeaderBehavior).toBe('whitelist');
      expect(key.HeadersConfig.Headers).toEqual(expect.arrayContaining(['Authorization', 'X-API-Key']));
      expect(key.HeadersConfig.Headers).toEqual(expect.arrayContaining([...dataPlaneCredentialHeaders]));
      expect(key.CookiesConfig).toEqual({ CookieBehavior: 'whitelist', Cookies: [SESSION_COOKIE] });
      expect(dataPlaneCredentialCookies).toEqual([SESSION_COOKIE]);
    });

    it(`keeps an answer at most ${dataPlaneMaxTtlSeconds} s, only as the origin's Cache-Control allows`, () => {
      expect(policy.MinTTL).toBe(0);
      expect(policy.DefaultTTL).toBe(0);
      expect(policy.MaxTTL).toBeLessThanOrEqual(5);
      expect(policy.MaxTTL).toBe(dataPlaneMaxTtlSeconds);
    });

    it('compresses (gzip and Brotli, normalized into the key)', () => {
      const key = policy.ParametersInCacheKeyAndForwardedToOrigin;
      expect(key.EnableAcceptEncodingGzip).toBe(true);
      expect(key.EnableAcceptEncodingBrotli).toBe(true);
      expect(behavior.Compress).toBe(true);
    });

    it('caches no error past the bound: error caching minimum TTL 0, no error page', () => {
      expect(distribution.CustomErrorResponses).toEqual(
        uncachedErrorCodes.map((code) => ({ ErrorCode: code, ErrorCachingMinTTL: 0 })),
      );
    });

    it('sets Accept to the tile media type on tile paths and removes it elsewhere', () => {
      const code = (
        template.findResources('AWS::CloudFront::Function')[logicalId(stack.dataPlane.viewerRequest)] as Json
      ).Properties.FunctionCode as string;
      for (const route of dataRoutes) {
        const uri = sample(route.path);
        const out = viewerRequest(code, uri, {
          accept: { value: '*/*' },
          authorization: { value: 'Bearer x' },
        });
        const tile = binaryRoutes().includes(route);
        expect(out.headers.accept, uri).toEqual(tile ? { value: MVT } : undefined);
        expect(out.headers.authorization, uri).toEqual({ value: 'Bearer x' });
        expect(out.uri).toBe(uri);
      }
      // Not a tile: one segment short, or a tileset document.
      expect(
        viewerRequest(code, '/workspaces/a/ogc/tiles/WebMercatorQuad/1/2', { accept: { value: MVT } }).headers
          .accept,
      ).toBeUndefined();
    });

    it('outputs the base URL of the workspaces’ OGC APIs', () => {
      const outputs = parent.Outputs as Json;
      expect(outputs.DataPlaneUrl.Value).toEqual({
        'Fn::Join': [
          '',
          [
            'https://',
            { 'Fn::GetAtt': [logicalId(stack.console?.distribution as never), 'DomainName'] },
            DATA_PLANE_ROOT,
          ],
        ],
      });
    });
  });
});

describe('the data plane without the console, with cdk.json vpc', () => {
  let stack: GeoPlaneStack;
  let template: Template;

  beforeAll(() => {
    ({ stack, template } = synthesize({ vpc }));
  }, 240_000);

  it('runs the function in the operator’s subnets and security groups (it opens PostgreSQL connections)', () => {
    expect(dataRoutes.some((route) => route.postgres)).toBe(true);
    const fn = template.findResources('AWS::Lambda::Function')[
      logicalId(stack.dataPlane.stack.function.function)
    ] as Json;
    expect(fn.Properties.VpcConfig).toEqual({ SubnetIds: subnets, SecurityGroupIds: groups });
    const ec2 = actionsIn(statementsOfRole(template, stack.dataPlane.stack.function.role), 'ec2');
    expect(ec2).toEqual([
      'ec2:AssignPrivateIpAddresses',
      'ec2:CreateNetworkInterface',
      'ec2:DeleteNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:UnassignPrivateIpAddresses',
    ]);
  });

  it('gets a distribution of its own, with the same behaviour as its default and no cached error', () => {
    expect(stack.console).toBeUndefined();
    template.resourceCountIs('AWS::CloudFront::Distribution', 1);
    const config = (
      template.findResources('AWS::CloudFront::Distribution')[logicalId(stack.dataPlane.distribution)] as Json
    ).Properties.DistributionConfig;
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: 'https-only',
      AllowedMethods: ['GET', 'HEAD'],
      Compress: true,
      CachePolicyId: { Ref: logicalId(stack.dataPlane.cachePolicy) },
    });
    expect(config.CacheBehaviors).toBeUndefined();
    expect(config.CustomErrorResponses).toEqual(
      uncachedErrorCodes.map((code) => ({ ErrorCode: code, ErrorCachingMinTTL: 0 })),
    );
    const env = (
      template.findResources('AWS::Lambda::Function')[
        logicalId(stack.dataPlane.stack.function.function)
      ] as Json
    ).Properties.Environment.Variables;
    expect(env.DATA_PLANE_ORIGIN).toEqual({
      'Fn::Join': [
        '',
        ['https://', { 'Fn::GetAtt': [logicalId(stack.dataPlane.distribution), 'DomainName'] }],
      ],
    });
  });
});
