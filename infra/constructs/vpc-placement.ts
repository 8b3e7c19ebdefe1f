import { Annotations, Fn, Stack, Validations } from 'aws-cdk-lib';
import {
  CfnVPCEndpoint,
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpointAwsService,
  type ISecurityGroup,
  type ISubnet,
  type IVpc,
  Peer,
  Port,
  SecurityGroup,
  Subnet,
  type SubnetSelection,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct, type IConstruct } from 'constructs';
import type { VpcConfig } from './vpc-config.ts';

/**
 * The ENI actions Lambda performs with the execution role of a function in a VPC (the actions of
 * the AWS managed AWSLambdaVPCAccessExecutionRole, without its log actions): the describes on
 * every resource (they take no other), the rest on network interfaces, the configured subnets and
 * security groups only.
 */
export const eniDescribeActions = ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets'] as const;
export const eniActions = [
  'ec2:CreateNetworkInterface',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
] as const;

/** The cdk-nag finding of `network-interface/*` (ENI ids are made by Lambda, at run time). */
export const networkInterfacesFinding =
  'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:network-interface/*]';

/** Interface endpoints a function in the VPC may need, by the IAM service prefix of the API it calls. */
export const interfaceEndpointServices = {
  kms: InterfaceVpcEndpointAwsService.KMS,
  secretsmanager: InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  xray: InterfaceVpcEndpointAwsService.XRAY,
} as const;

export type InterfaceEndpointService = keyof typeof interfaceEndpointServices;

/** Gateway endpoints (free), by the IAM service prefix of the API they carry. */
export const gatewayEndpointServices = {
  dynamodb: GatewayVpcEndpointAwsService.DYNAMODB,
  s3: GatewayVpcEndpointAwsService.S3,
} as const;

/**
 * IAM service prefixes a function in the VPC may hold permissions for without any network path
 * from its subnets: Lambda itself delivers the function's logs and manages its network interfaces.
 */
export const reachedWithoutTheVpc = ['logs', 'ec2'] as const;

/**
 * The APIs the PostgreSQL functions call (ADR 0112), so the interface endpoints of mode `interface`:
 * KMS (connection passwords), X-Ray (active tracing sends the SDK's subsegments from the function)
 * and, when an import database is configured, Secrets Manager (its secret). No placed function
 * calls Step Functions: a rollback's deletion is run by the import state machine itself (ADR
 * 0146). test/infra/vpc-placement.test.ts holds this list to the placed functions' IAM grants.
 */
export function interfaceServicesOf(options: { importDatabase: boolean }): InterfaceEndpointService[] {
  return ['kms', ...(options.importDatabase ? (['secretsmanager'] as const) : []), 'xray'];
}

/** The operator's VPC as CDK objects, in one stack (imported by id; nothing is looked up). */
export interface ImportedNetwork {
  vpc: IVpc;
  subnets: ISubnet[];
  securityGroups: ISecurityGroup[];
}

/**
 * Where the functions that open PostgreSQL connections run (ADR 0112): the operator's private
 * subnets and security groups from cdk.json `vpc`. One object for the whole app; each stack that
 * holds such a function imports the VPC once ({@link VpcPlacement.networkIn}). The data plane reuses
 * it: give its functions {@link VpcPlacement.functionProps} and {@link VpcPlacement.grantNetworkInterfaces}.
 */
export class VpcPlacement {
  private readonly imported = new WeakMap<Stack, ImportedNetwork>();

  constructor(readonly config: VpcConfig) {}

  /** The VPC, its private subnets and the functions' security groups, imported into `scope`'s stack. */
  networkIn(scope: IConstruct): ImportedNetwork {
    const stack = Stack.of(scope);
    const known = this.imported.get(stack);
    if (known) return known;
    const { vpcId, privateSubnetIds, securityGroupIds, availabilityZones } = this.config;
    const root = new Construct(stack, 'GeoPlaneVpc');
    const network: ImportedNetwork = {
      // The zones only describe the import (no subnet is listed on it); the region's when not given.
      vpc: Vpc.fromVpcAttributes(root, 'Vpc', {
        vpcId,
        availabilityZones: availabilityZones ? [...new Set(availabilityZones)] : Fn.getAzs(),
      }),
      subnets: privateSubnetIds.map((subnetId, i) => {
        const zone = availabilityZones?.[i];
        const subnet = Subnet.fromSubnetAttributes(root, `Subnet${i}`, {
          subnetId,
          ...(zone ? { availabilityZone: zone } : {}),
        });
        // Route tables are the gateway endpoints' business (`routeTableIds`); no subnet's is read.
        Annotations.of(subnet).acknowledgeWarning(
          '@aws-cdk/aws-ec2:noSubnetRouteTableId',
          'The functions only need the subnet id; the gateway endpoints take routeTableIds from cdk.json.',
        );
        return subnet;
      }),
      // Immutable: the operator owns these groups; CDK never adds a rule to them.
      securityGroups: securityGroupIds.map((id, i) =>
        SecurityGroup.fromSecurityGroupId(root, `SecurityGroup${i}`, id, { mutable: false }),
      ),
    };
    this.imported.set(stack, network);
    return network;
  }

  /** The Lambda function props that place a function of `scope`'s stack in the VPC. */
  functionProps(scope: IConstruct): {
    vpc: IVpc;
    vpcSubnets: SubnetSelection;
    securityGroups: ISecurityGroup[];
  } {
    const { vpc, subnets, securityGroups } = this.networkIn(scope);
    return { vpc, vpcSubnets: { subnets }, securityGroups };
  }

  /**
   * What Lambda needs in a placed function's role to create, use and delete its network
   * interfaces (the role is explicit, so CDK adds no AWSLambdaVPCAccessExecutionRole): the two
   * describes (no resource-level permissions) and the rest on ENIs, in the configured subnets
   * with the configured security groups.
   */
  grantNetworkInterfaces(role: IRole): void {
    const stack = Stack.of(role);
    const arn = (resource: string, resourceName: string) =>
      stack.formatArn({ service: 'ec2', resource, resourceName });
    role.addToPrincipalPolicy(new PolicyStatement({ actions: [...eniDescribeActions], resources: ['*'] }));
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...eniActions],
        resources: [
          arn('network-interface', '*'),
          ...this.config.privateSubnetIds.map((id) => arn('subnet', id)),
          ...this.config.securityGroupIds.map((id) => arn('security-group', id)),
        ],
      }),
    );
    Validations.of(role).acknowledge({
      id: networkInterfacesFinding,
      reason:
        'Lambda creates and deletes the network interfaces of a function in a VPC with its execution role; their ' +
        'ids are made at run time. Creation is limited to the configured subnets and security groups (ADR 0112).',
    });
  }
}

export interface VpcEndpointsProps {
  placement: VpcPlacement;
  /** The interface endpoints of mode `interface` ({@link interfaceServicesOf}). */
  interfaceServices: readonly InterfaceEndpointService[];
}

/**
 * The VPC endpoints of cdk.json `vpc.endpoints` (ADR 0112): `gateway` — DynamoDB and S3 gateway
 * endpoints on the configured route tables; `interface` — those plus an interface endpoint per
 * service, with private DNS, in one private subnet per zone, behind a security group that takes
 * HTTPS from the functions' groups only; `none` — nothing.
 */
export class VpcEndpoints extends Construct {
  /** The endpoints by IAM service prefix (`dynamodb`, `s3`, `kms`, …). */
  readonly endpoints = new Map<string, CfnVPCEndpoint>();
  /** The interface endpoints' security group (mode `interface` only). */
  readonly securityGroup: SecurityGroup | undefined;

  constructor(scope: Construct, id: string, props: VpcEndpointsProps) {
    super(scope, id);
    const { config } = props.placement;
    if (config.endpoints === 'none') return;
    const { vpcId, routeTableIds = [] } = config;
    for (const [service, endpoint] of Object.entries(gatewayEndpointServices)) {
      this.endpoints.set(
        service,
        new CfnVPCEndpoint(this, `Gateway-${service}`, {
          vpcId,
          serviceName: endpoint.name,
          vpcEndpointType: 'Gateway',
          routeTableIds,
        }),
      );
    }
    if (config.endpoints !== 'interface') return;

    const { vpc } = props.placement.networkIn(this);
    const securityGroup = new SecurityGroup(this, 'SecurityGroup', {
      vpc,
      description: 'GeoPlane interface VPC endpoints: HTTPS from the functions placed in the VPC',
      allowAllOutbound: false,
    });
    for (const groupId of config.securityGroupIds) {
      securityGroup.addIngressRule(Peer.securityGroupId(groupId), Port.tcp(443), `HTTPS from ${groupId}`);
    }
    this.securityGroup = securityGroup;
    const subnetIds = onePerZone(config);
    for (const service of props.interfaceServices) {
      this.endpoints.set(
        service,
        new CfnVPCEndpoint(this, `Interface-${service}`, {
          vpcId,
          serviceName: interfaceEndpointServices[service].name,
          vpcEndpointType: 'Interface',
          subnetIds,
          securityGroupIds: [securityGroup.securityGroupId],
          // The SDK's regional host names then resolve to the endpoint inside the VPC.
          privateDnsEnabled: true,
        }),
      );
    }
  }
}

/** The first private subnet of each zone: an interface endpoint takes at most one subnet per zone. */
export function onePerZone(config: VpcConfig): string[] {
  const zones = config.availabilityZones;
  if (!zones) return [...config.privateSubnetIds];
  const seen = new Set<string>();
  return config.privateSubnetIds.filter((_id, i) => {
    const zone = zones[i] as string;
    if (seen.has(zone)) return false;
    seen.add(zone);
    return true;
  });
}
