import { type CfnResource, Stack } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';

/** An IAM policy statement as synthesized. */
export type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

export const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/**
 * Logical id of a construct's resource in its own template (the parent's or a nested stack's); with
 * {@link deploymentTemplate} of `./templates.ts` every resource is found under it.
 */
export function logicalId(construct: { node: { defaultChild?: unknown } }): string {
  const resource = construct.node.defaultChild as CfnResource;
  return Stack.of(resource).getLogicalId(resource);
}

type Resource = { Properties: Record<string, any> };

/**
 * Every identity policy of the template by the logical id that holds it: the inline policies of
 * each role (where the functions' grants live) and any `AWS::IAM::Policy` resource.
 */
export function policyDocuments(template: Template): [string, Statement[]][] {
  const roles = Object.entries(template.findResources('AWS::IAM::Role') as Record<string, Resource>);
  const policies = Object.entries(template.findResources('AWS::IAM::Policy') as Record<string, Resource>);
  return [
    ...roles.flatMap(([id, role]) =>
      ((role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).map(
        (p) => [id, p.PolicyDocument.Statement] as [string, Statement[]],
      ),
    ),
    ...policies.map(([id, p]) => [id, p.Properties.PolicyDocument.Statement] as [string, Statement[]]),
  ];
}

/** Every statement granted to a role: its inline policies and the policies attached to it. */
export function statementsOfRole(
  template: Template,
  role: { node: { defaultChild?: unknown } },
): Statement[] {
  const id = logicalId(role);
  const own = (template.findResources('AWS::IAM::Role')[id]?.Properties.Policies ?? []) as {
    PolicyDocument: { Statement: Statement[] };
  }[];
  const attached = template.findResources('AWS::IAM::Policy', {
    Properties: { Roles: Match.arrayWith([{ Ref: id }]) },
  });
  return [
    ...own.flatMap((p) => p.PolicyDocument.Statement),
    ...Object.values(attached).flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]),
  ];
}

/** The actions of `statements` in one service (`dynamodb`, `states`, …), deduplicated and sorted. */
export function actionsIn(statements: Statement[], service: string): string[] {
  return [
    ...new Set(statements.flatMap((s) => asArray(s.Action)).filter((a) => a.startsWith(`${service}:`))),
  ].sort();
}

/** The actions Step Functions' logging configuration adds to a state machine's role. */
export const logDelivery = [
  'logs:CreateLogDelivery',
  'logs:DeleteLogDelivery',
  'logs:DescribeLogGroups',
  'logs:DescribeResourcePolicies',
  'logs:GetLogDelivery',
  'logs:ListLogDeliveries',
  'logs:PutResourcePolicy',
  'logs:UpdateLogDelivery',
];

/** The actions a state machine's tracing adds to its role. */
export const xray = [
  'xray:GetSamplingRules',
  'xray:GetSamplingTargets',
  'xray:PutTelemetryRecords',
  'xray:PutTraceSegments',
];

/**
 * A workflow's state machine role as both workflows have it: assumed by Step Functions only, with
 * no managed policy, and `lambda:InvokeFunction` in one statement on exactly its task functions
 * (their logical ids) and on no other function.
 */
export function expectTaskInvokerRole(
  template: Template,
  role: { node: { defaultChild?: unknown } },
  taskFunctionIds: readonly string[],
): void {
  const resource = (template.findResources('AWS::IAM::Role') as Record<string, Resource>)[logicalId(role)];
  expect(resource?.Properties.AssumeRolePolicyDocument.Statement).toEqual([
    { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'states.amazonaws.com' } },
  ]);
  expect(resource?.Properties.ManagedPolicyArns).toBeUndefined();
  const invoke = statementsOfRole(template, role).filter((s) =>
    asArray(s.Action).some((a) => a.startsWith('lambda:')),
  );
  expect(invoke).toHaveLength(1);
  expect(asArray(invoke[0]?.Action)).toEqual(['lambda:InvokeFunction']);
  const resources = asArray(invoke[0]?.Resource as unknown[]);
  expect(resources).toHaveLength(taskFunctionIds.length);
  expect(resources).toEqual(
    expect.arrayContaining(taskFunctionIds.map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] }))),
  );
}
