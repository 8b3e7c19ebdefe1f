import { z } from 'zod';

/**
 * How the functions placed in the VPC reach the AWS APIs they call (ADR 0112):
 * - `gateway`: DynamoDB and S3 gateway endpoints (free) on `routeTableIds`; the operator's NAT
 *   carries the rest (KMS, Secrets Manager, Step Functions, X-Ray).
 * - `interface`: the gateway endpoints plus an interface endpoint (private DNS) for each of the
 *   other APIs, so the subnets need no NAT at all.
 * - `none`: nothing is created; the operator's NAT or own endpoints already reach every API.
 */
export const vpcEndpointModes = ['gateway', 'interface', 'none'] as const;

export type VpcEndpointMode = (typeof vpcEndpointModes)[number];

/** Lambda's limits on a function's VpcConfig (SubnetIds, SecurityGroupIds). */
export const maxFunctionSubnets = 16;
export const maxFunctionSecurityGroups = 5;

/** EC2 ids: the prefix, then 8 or 17 hexadecimal digits. */
const ec2Id = (prefix: string, what: string) =>
  z
    .string({ error: (issue) => `must be ${what} id (${prefix}-…), got ${JSON.stringify(issue.input)}` })
    .regex(new RegExp(`^${prefix}-([0-9a-f]{8}|[0-9a-f]{17})$`), {
      error: (issue) => `'${issue.input}' is not ${what} id (${prefix}- and 8 or 17 hexadecimal digits)`,
    });

/** An Availability Zone name (`eu-west-1a`, `us-west-2-lax-1a`), not its id (`euw1-az1`). */
const availabilityZone = z
  .string({ error: (issue) => `must be an Availability Zone name, got ${JSON.stringify(issue.input)}` })
  .regex(/^[a-z]{2}(-[a-z0-9]+)+[a-z]$/, {
    error: (issue) => `'${issue.input}' is not an Availability Zone name (e.g. eu-west-1a)`,
  });

/** A non-empty list without repeats. */
const idList = (item: z.ZodString, what: string, max?: number) => {
  let list = z
    .array(item, { error: `must be a list of ${what} ids` })
    .min(1, `must name at least one ${what}`);
  if (max) list = list.max(max, `Lambda takes at most ${max} (its VpcConfig limit)`);
  return list.refine((ids) => new Set(ids).size === ids.length, `must not name the same ${what} twice`);
};

/**
 * The operator's VPC (ADR 0112): the functions that open PostgreSQL connections run in its private
 * subnets with its security groups. Everything is named by id: `cdk synth` looks nothing up.
 */
export const vpcSchema = z
  .strictObject({
    vpcId: ec2Id('vpc', 'a VPC'),
    /** Private subnets (a route to the database; no internet gateway route), one or more AZs. */
    privateSubnetIds: idList(ec2Id('subnet', 'a subnet'), 'subnet', maxFunctionSubnets),
    /** The functions' security groups: egress to the database port and to 443 of the endpoints. */
    securityGroupIds: idList(ec2Id('sg', 'a security group'), 'security group', maxFunctionSecurityGroups),
    endpoints: z.enum(vpcEndpointModes, {
      error: (issue) =>
        `must be one of ${vpcEndpointModes.map((m) => `"${m}"`).join(', ')} (how the functions in the VPC ` +
        `reach DynamoDB, S3, KMS, Secrets Manager and Step Functions; see docs/deploy.md), got ${JSON.stringify(issue.input)}`,
    }),
    /** Route tables of the private subnets: the DynamoDB and S3 gateway endpoints are routes in them. */
    routeTableIds: idList(ec2Id('rtb', 'a route table'), 'route table').optional(),
    /** The Availability Zone of each private subnet, in the same order (interface endpoints: one subnet per zone). */
    availabilityZones: z
      .array(availabilityZone, { error: 'must be a list of Availability Zone names' })
      .optional(),
  })
  .superRefine((vpc, ctx) => {
    if (vpc.endpoints !== 'none' && !vpc.routeTableIds) {
      ctx.addIssue({
        code: 'custom',
        path: ['routeTableIds'],
        message:
          `is required with endpoints "${vpc.endpoints}": the route tables of the private subnets, which ` +
          'get the DynamoDB and S3 gateway endpoints',
      });
    }
    if (vpc.endpoints === 'none' && vpc.routeTableIds) {
      ctx.addIssue({
        code: 'custom',
        path: ['routeTableIds'],
        message: 'is only used by the gateway endpoints: with endpoints "none" leave it out',
      });
    }
    if (vpc.endpoints === 'interface' && !vpc.availabilityZones) {
      ctx.addIssue({
        code: 'custom',
        path: ['availabilityZones'],
        message:
          'is required with endpoints "interface": the Availability Zone of each private subnet, in the same ' +
          'order (an interface endpoint takes one subnet per zone)',
      });
    }
    if (vpc.availabilityZones && vpc.availabilityZones.length !== vpc.privateSubnetIds.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['availabilityZones'],
        message: `must name one zone per private subnet (${vpc.privateSubnetIds.length}), in the same order; got ${vpc.availabilityZones.length}`,
      });
    }
  });

export type VpcConfig = z.output<typeof vpcSchema>;

/**
 * An optional object context key given as an object or its JSON text (`-c key='{…}'`): empty means
 * "not configured"; text that is not JSON is refused with `shape` named in the message.
 */
export function objectOrJsonText<T extends z.ZodType>(schema: T, shape: string) {
  return z.preprocess((value, ctx) => {
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value);
    } catch {
      ctx.issues.push({
        code: 'custom',
        input: value,
        message: `must be an object or its JSON text: ${shape}`,
      });
      return z.NEVER;
    }
  }, schema.optional());
}

/** The `vpc` context key: an object or its JSON text; empty (the default) keeps every function outside any VPC. */
export const vpcContextSchema = objectOrJsonText(
  vpcSchema,
  '{"vpcId", "privateSubnetIds", "securityGroupIds", "endpoints", "routeTableIds"?, "availabilityZones"?}',
);
