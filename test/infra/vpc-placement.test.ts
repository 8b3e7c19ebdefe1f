import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { dataRoutes } from '#api/data-routes.ts';
import { routes } from '#api/routes.ts';
import { ApiFunction } from '#infra/constructs/api-function.ts';
import { dataPlaneDescription } from '#infra/constructs/data-plane.ts';
import { importTaskDescription, importTasks } from '#infra/constructs/import-workflow.ts';
import { jobLoopTaskDescription, jobLoopTasks } from '#infra/constructs/job-loop-workflow.ts';
import { stageConfigOf } from '#infra/constructs/stage-config.ts';
import {
  eniActions,
  eniDescribeActions,
  gatewayEndpointServices,
  interfaceServicesOf,
  networkInterfacesFinding,
  onePerZone,
  reachedWithoutTheVpc,
} from '#infra/constructs/vpc-placement.ts';
import { createGeoPlaneApp, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { importTaskAccess } from '#infra/workflows/import-workflow.ts';
import { tileCacheWorkflow } from '#infra/workflows/tile-cache-workflow.ts';
import { asArray, logicalId, type Statement, statementsOfRole } from './iam.ts';
import { deploymentTemplate } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

const subnets = ['subnet-0aaaaaaaaaaaaaaa1', 'subnet-0bbbbbbbbbbbbbbb2', 'subnet-0ccccccccccccccc3'];
const groups = ['sg-0aaaaaaaaaaaaaaa1', 'sg-0bbbbbbbbbbbbbbb2'];
const routeTables = ['rtb-0aaaaaaaaaaaaaaa1', 'rtb-0bbbbbbbbbbbbbbb2'];
/** The third subnet shares the first one's zone: interface endpoints take one subnet per zone. */
const zones = ['eu-west-1a', 'eu-west-1b', 'eu-west-1a'];
const vpcId = 'vpc-0123456789abcdef0';

const vpcWith = (endpoints: string, more: Record<string, unknown> = {}) => ({
  vpcId,
  privateSubnetIds: subnets,
  securityGroupIds: groups,
  endpoints,
  ...(endpoints === 'none' ? {} : { routeTableIds: routeTables }),
  ...more,
});

const importDatabase = {
  host: 'imports.cluster-xyz.eu-west-1.rds.amazonaws.com',
  port: 5432,
  database: 'imports',
  secretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:geoplane/imports-AbC123',
};

/**
 * The functions that open PostgreSQL connections, by the route table, the import and tile cache
 * tasks' flags (the tile cache step renders tiles, ADR 0139) and the data route table (one
 * function, ADR 0122).
 */
const postgresFunctions = [
  ...routes.filter((op) => op.postgres).map((op) => op.operationId),
  ...(dataRoutes.some((route) => route.postgres) ? [dataPlaneDescription.split(':')[0] as string] : []),
  ...importTasks
    .filter((task) => importTaskAccess[task].postgres)
    .map((task) => importTaskDescription(task).split(':')[0] as string),
  ...jobLoopTasks(tileCacheWorkflow)
    .filter((task) => tileCacheWorkflow.access[task].postgres)
    .map((task) => jobLoopTaskDescription(tileCacheWorkflow, task).split(':')[0] as string),
].sort();

function synth(context: Record<string, unknown>) {
  const { app, stack } = createGeoPlaneApp({
    context: { ...cdkContext, ...context },
    bundling: false,
    builtinCloudFormationValidation: false,
  });
  return { app, stack, template: deploymentTemplate(stack) };
}

type Resource = { Type: string; Properties: Record<string, any> };
const resourcesOf = (template: Template, type: string) =>
  Object.entries(template.findResources(type) as Record<string, Resource>);

/** Name (description up to ":") → VpcConfig of every Lambda function of the deployment. */
function vpcConfigs(template: Template): Map<string, unknown> {
  return new Map(
    resourcesOf(template, 'AWS::Lambda::Function').map(([id, fn]) => [
      String(fn.Properties.Description ?? id).split(':')[0] as string,
      fn.Properties.VpcConfig,
    ]),
  );
}

const placedNames = (template: Template) =>
  [...vpcConfigs(template)].filter(([, config]) => config !== undefined).map(([name]) => name);

const apiFunctions = (stack: GeoPlaneStack) =>
  stack.node.findAll().filter((c): c is ApiFunction => c instanceof ApiFunction);

const isPlaced = (template: Template, fn: ApiFunction) =>
  template.findResources('AWS::Lambda::Function')[logicalId(fn.function)]?.Properties.VpcConfig !== undefined;

const ec2Statements = (statements: Statement[]) =>
  statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('ec2:')));

/** cdk-nag findings left after acknowledgments, as "rule at path" lines. */
function findings(scope: IConstruct, severity: 'error' | 'warning') {
  return new AwsSolutionsChecks()
    .validateScope(scope)
    .violations.filter((v) => v.severity === severity)
    .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
}

describe('the functions that open PostgreSQL connections', () => {
  it('are the service, layer, import-preview, readiness and integrity routes, both import tasks, the data plane and the tile cache step (the route flags and the tasks)', () => {
    expect(postgresFunctions).toEqual(
      [
        'createLayer',
        'createService',
        'dataPlane',
        'discoverLayers',
        'previewImport',
        // Readiness logs in to the import database (ADR 0131).
        'getReadiness',
        // The integrity check probes source tables and lists import schemas (ADR 0138).
        'getCatalogIntegrity',
        'repairCatalogIntegrity',
        'import-recordFailure',
        'import-step',
        // The tile cache step renders tiles from PostGIS (ADR 0139).
        'tile-cache-step',
        'testNewServiceConnection',
        'testExistingServiceConnection',
        'updateLayer',
        'updateService',
        'validateSQLView',
      ].sort(),
    );
  });
});

describe('without cdk.json vpc (the default)', () => {
  let stack: GeoPlaneStack;
  let template: Template;

  beforeAll(() => {
    ({ stack, template } = synth({}));
  }, 120_000);

  it('places no function in a VPC', () => {
    expect(stageConfigOf(new App({ context: cdkContext }).node).vpc).toBeUndefined();
    expect(vpcConfigs(template).size).toBeGreaterThan(90);
    expect(placedNames(template)).toEqual([]);
  });

  it('creates no EC2 resource and grants no EC2 action', () => {
    expect(
      Object.values(template.toJSON().Resources as Record<string, Resource>).map((r) => r.Type),
    ).not.toEqual(expect.arrayContaining([expect.stringMatching(/^AWS::EC2::/)]));
    for (const fn of apiFunctions(stack)) {
      expect(ec2Statements(statementsOfRole(template, fn.role)), fn.node.path).toEqual([]);
    }
    expect(stack.vpc).toBeUndefined();
    expect(stack.vpcEndpoints).toBeUndefined();
  });
});

describe('with cdk.json vpc, endpoints "interface" and an import database', () => {
  let app: App;
  let stack: GeoPlaneStack;
  let template: Template;

  beforeAll(() => {
    ({ app, stack, template } = synth({
      vpc: vpcWith('interface', { availabilityZones: zones }),
      importDatabase,
    }));
  }, 120_000);

  it('places exactly the PostgreSQL functions, in the given subnets with the given security groups', () => {
    expect(placedNames(template).sort()).toEqual(postgresFunctions);
    for (const name of postgresFunctions) {
      expect(vpcConfigs(template).get(name), name).toEqual({ SubnetIds: subnets, SecurityGroupIds: groups });
    }
  });

  it('gives the placed roles the ENI actions, scoped to the subnets and groups, and no other role any EC2 action', () => {
    const placed = apiFunctions(stack).filter((fn) => isPlaced(template, fn));
    expect(placed).toHaveLength(postgresFunctions.length);
    for (const fn of apiFunctions(stack)) {
      const statements = ec2Statements(statementsOfRole(template, fn.role));
      if (!placed.includes(fn)) {
        expect(statements, fn.node.path).toEqual([]);
        continue;
      }
      const arn = (resource: string) => ({
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':ec2:',
            { Ref: 'AWS::Region' },
            ':',
            { Ref: 'AWS::AccountId' },
            `:${resource}`,
          ],
        ],
      });
      // Statements with the same resources are merged (minimizePolicies): compare action by action.
      const sorted = (list: unknown[]) => list.map((v) => JSON.stringify(v)).sort();
      const resourcesOf = (action: string) =>
        sorted(
          statements.filter((s) => asArray(s.Action).includes(action)).flatMap((s) => asArray(s.Resource)),
        );
      const granted = statements.flatMap((s) => asArray(s.Action)).filter((a) => a.startsWith('ec2:'));
      expect(granted.sort(), fn.node.path).toEqual([...eniDescribeActions, ...eniActions].sort());
      for (const action of eniDescribeActions) expect(resourcesOf(action), action).toEqual(sorted(['*']));
      for (const action of eniActions) {
        expect(resourcesOf(action), action).toEqual(
          sorted([
            arn('network-interface/*'),
            ...subnets.map((id) => arn(`subnet/${id}`)),
            ...groups.map((id) => arn(`security-group/${id}`)),
          ]),
        );
      }
    }
  });

  it('reaches every AWS API a placed function is granted through an endpoint (or needs no path from the VPC)', () => {
    const endpointServices = new Set([
      ...Object.keys(gatewayEndpointServices),
      ...interfaceServicesOf({ importDatabase: true }),
    ]);
    const reached = new Set<string>([...endpointServices, ...reachedWithoutTheVpc]);
    const granted = new Set<string>();
    for (const fn of apiFunctions(stack).filter((f) => isPlaced(template, f))) {
      for (const statement of statementsOfRole(template, fn.role)) {
        for (const action of asArray(statement.Action)) granted.add(action.split(':')[0] as string);
      }
    }
    expect([...granted].filter((service) => !reached.has(service))).toEqual([]);
    // Each interface endpoint is used by some placed function (none is paid for in vain).
    for (const service of interfaceServicesOf({ importDatabase: true })) expect(granted).toContain(service);
  });

  it('adds DynamoDB and S3 gateway endpoints on the route tables', () => {
    const gateways = resourcesOf(template, 'AWS::EC2::VPCEndpoint').filter(
      ([, r]) => r.Properties.VpcEndpointType === 'Gateway',
    );
    expect(gateways.map(([, r]) => r.Properties.ServiceName['Fn::Join'][1][2]).sort()).toEqual([
      '.dynamodb',
      '.s3',
    ]);
    for (const [, r] of gateways) {
      expect(r.Properties.VpcId).toBe(vpcId);
      expect(r.Properties.RouteTableIds).toEqual(routeTables);
    }
  });

  it('adds an interface endpoint with private DNS, one subnet per zone and its own security group, per API the functions call', () => {
    const interfaces = resourcesOf(template, 'AWS::EC2::VPCEndpoint').filter(
      ([, r]) => r.Properties.VpcEndpointType === 'Interface',
    );
    expect(interfaces.map(([, r]) => r.Properties.ServiceName['Fn::Join'][1][2]).sort()).toEqual([
      '.kms',
      '.secretsmanager',
      '.xray',
    ]);
    const securityGroup = logicalId(stack.vpcEndpoints?.securityGroup as never);
    for (const [, r] of interfaces) {
      expect(r.Properties).toMatchObject({
        VpcId: vpcId,
        PrivateDnsEnabled: true,
        SubnetIds: [subnets[0], subnets[1]],
        SecurityGroupIds: [{ 'Fn::GetAtt': [securityGroup, 'GroupId'] }],
      });
    }
  });

  it('lets only the functions’ security groups reach the interface endpoints, on 443', () => {
    const groupsFound = resourcesOf(template, 'AWS::EC2::SecurityGroup');
    expect(groupsFound).toHaveLength(1);
    const group = groupsFound[0]?.[1];
    expect(group?.Properties.VpcId).toBe(vpcId);
    expect(
      ((group?.Properties.SecurityGroupIngress ?? []) as Record<string, unknown>[]).map((rule) => ({
        from: rule.SourceSecurityGroupId,
        ports: [rule.IpProtocol, rule.FromPort, rule.ToPort],
      })),
    ).toEqual(groups.map((id) => ({ from: id, ports: ['tcp', 443, 443] })));
    expect(resourcesOf(template, 'AWS::EC2::SecurityGroupIngress')).toEqual([]);
    // The endpoints need no egress: CDK's placeholder rule matches nothing.
    expect(group?.Properties.SecurityGroupEgress).toEqual([
      expect.objectContaining({ CidrIp: '255.255.255.255/32' }),
    ]);
  });

  it('keeps the endpoints and their security group in the parent stack, once', () => {
    const parent = Template.fromStack(stack);
    // Two gateways (DynamoDB, S3) and three interfaces (KMS, Secrets Manager, X-Ray).
    expect(resourcesOf(parent, 'AWS::EC2::VPCEndpoint')).toHaveLength(5);
    expect(resourcesOf(parent, 'AWS::EC2::SecurityGroup')).toHaveLength(1);
    expect(resourcesOf(template, 'AWS::EC2::VPCEndpoint')).toHaveLength(5);
  });

  it('stays cdk-nag clean, acknowledging network-interface/* only on the placed roles', () => {
    expect(() => app.synth()).not.toThrow();
    expect(findings(app, 'error')).toEqual([]);
    expect(findings(app, 'warning')).toEqual([]);
    const acknowledged = apiFunctions(stack).filter((fn) =>
      fn.role.node.metadata.some((m) =>
        Object.keys(m.data ?? {}).some((k) => k.endsWith(networkInterfacesFinding)),
      ),
    );
    expect(acknowledged.map((fn) => fn.node.path).sort()).toEqual(
      apiFunctions(stack)
        .filter((fn) => isPlaced(template, fn))
        .map((fn) => fn.node.path)
        .sort(),
    );
  }, 120_000);
});

describe('with cdk.json vpc and endpoints "gateway"', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synth({ vpc: vpcWith('gateway') }));
  }, 120_000);

  it('places the same functions and adds only the two free gateway endpoints', () => {
    expect(placedNames(template).sort()).toEqual(postgresFunctions);
    const endpoints = resourcesOf(template, 'AWS::EC2::VPCEndpoint');
    expect(endpoints.map(([, r]) => r.Properties.VpcEndpointType)).toEqual(['Gateway', 'Gateway']);
    expect(resourcesOf(template, 'AWS::EC2::SecurityGroup')).toEqual([]);
    // Without availabilityZones the imported VPC's zones are never rendered (nothing reads them).
    expect(JSON.stringify(template.toJSON())).not.toContain('Fn::GetAZs');
  });
});

describe('with cdk.json vpc and endpoints "none"', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synth({ vpc: JSON.stringify(vpcWith('none')) }));
  }, 120_000);

  it('places the same functions and creates no endpoint (the operator’s NAT or endpoints serve)', () => {
    expect(placedNames(template).sort()).toEqual(postgresFunctions);
    expect(resourcesOf(template, 'AWS::EC2::VPCEndpoint')).toEqual([]);
    expect(resourcesOf(template, 'AWS::EC2::SecurityGroup')).toEqual([]);
  });
});

describe('interface endpoints', () => {
  it('include Secrets Manager only with an import database (the only secret the functions read)', () => {
    expect(interfaceServicesOf({ importDatabase: false })).toEqual(['kms', 'xray']);
    expect(interfaceServicesOf({ importDatabase: true })).toEqual(['kms', 'secretsmanager', 'xray']);
  });

  it('take the first subnet of each zone', () => {
    const config = stageConfigOf(
      new App({ context: { vpc: vpcWith('interface', { availabilityZones: zones }) } }).node,
    ).vpc;
    expect(config && onePerZone(config)).toEqual([subnets[0], subnets[1]]);
  });
});

describe('cdk.json vpc', () => {
  const configWith = (vpc: unknown) => stageConfigOf(new App({ context: { vpc } }).node).vpc;
  const refused = (vpc: unknown, message: RegExp, at = 'vpc') => {
    expect(() => configWith(vpc)).toThrow(message);
    expect(() => configWith(vpc)).toThrow(new RegExp(`at ${at.replace(/[.[\]]/g, '\\$&')}`));
  };

  it('is off when empty, and reads an object or its JSON text alike', () => {
    expect(configWith('')).toBeUndefined();
    expect(configWith(undefined)).toBeUndefined();
    const object = configWith(vpcWith('gateway'));
    expect(object).toEqual(vpcWith('gateway'));
    expect(configWith(JSON.stringify(vpcWith('gateway')))).toEqual(object);
  });

  it('refuses text that is not JSON', () => {
    refused('vpc-0123456789abcdef0', /must be an object or its JSON text: \{"vpcId"/);
  });

  it('refuses ids of the wrong kind or shape', () => {
    refused({ ...vpcWith('none'), vpcId: 'vpc-xyz' }, /'vpc-xyz' is not a VPC id/, 'vpc.vpcId');
    refused(
      { ...vpcWith('none'), privateSubnetIds: ['sg-0aaaaaaaaaaaaaaa1'] },
      /'sg-0aaaaaaaaaaaaaaa1' is not a subnet id/,
      'vpc.privateSubnetIds[0]',
    );
    refused(
      { ...vpcWith('none'), securityGroupIds: 'sg-0aaaaaaaaaaaaaaa1' },
      /must be a list of security group ids/,
      'vpc.securityGroupIds',
    );
    refused(
      vpcWith('gateway', { routeTableIds: ['rtb-1'] }),
      /'rtb-1' is not a route table id/,
      'vpc.routeTableIds[0]',
    );
  });

  it('refuses empty lists, repeats and more than Lambda takes', () => {
    refused(
      { ...vpcWith('none'), privateSubnetIds: [] },
      /must name at least one subnet/,
      'vpc.privateSubnetIds',
    );
    refused(
      { ...vpcWith('none'), privateSubnetIds: [subnets[0], subnets[0]] },
      /must not name the same subnet twice/,
      'vpc.privateSubnetIds',
    );
    const six = Array.from({ length: 6 }, (_, i) => `sg-0aaaaaaaaaaaaaa${i}0`);
    refused({ ...vpcWith('none'), securityGroupIds: six }, /at most 5/, 'vpc.securityGroupIds');
  });

  it('requires an endpoints choice, one of gateway, interface and none', () => {
    const { endpoints: _omitted, ...without } = vpcWith('none');
    refused(without, /must be one of "gateway", "interface", "none"/, 'vpc.endpoints');
    refused(vpcWith('nat'), /must be one of "gateway", "interface", "none".*got "nat"/, 'vpc.endpoints');
  });

  it('requires the route tables for the gateway endpoints, and only then', () => {
    const { routeTableIds: _omitted, ...without } = vpcWith('gateway');
    refused(without, /is required with endpoints "gateway": the route tables/, 'vpc.routeTableIds');
    refused(
      { ...vpcWith('none'), routeTableIds: routeTables },
      /with endpoints "none" leave it out/,
      'vpc.routeTableIds',
    );
  });

  it('requires one zone per subnet for interface endpoints', () => {
    refused(vpcWith('interface'), /is required with endpoints "interface"/, 'vpc.availabilityZones');
    refused(
      vpcWith('interface', { availabilityZones: ['eu-west-1a'] }),
      /one zone per private subnet \(3\), in the same order; got 1/,
      'vpc.availabilityZones',
    );
    refused(
      vpcWith('interface', { availabilityZones: ['euw1-az1', 'eu-west-1b', 'eu-west-1a'] }),
      /'euw1-az1' is not an Availability Zone name/,
      'vpc.availabilityZones[0]',
    );
  });

  it('refuses keys it does not know (a misspelt one would be silently ignored)', () => {
    refused({ ...vpcWith('none'), subnetIds: subnets }, /subnetIds/);
  });
});
