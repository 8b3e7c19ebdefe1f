import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { bootstrapAdminsData } from '#infra/constructs/bootstrap-admins.ts';
import { stageConfigOf } from '#infra/constructs/stage-config.ts';
import type { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { actionsIn, asArray, logicalId, statementsOfRole } from './iam.ts';
import { cdkContext, synthesize } from './templates.ts';

const admins = [
  { claim_name: 'email', claim_value: 'ops@example.com' },
  { claim_name: 'groups', claim_value: 'geoplane-admins' },
];

describe('bootstrapAdmins in the stage configuration', () => {
  const parse = (bootstrapAdmins: unknown) =>
    stageConfigOf(new App({ context: { ...cdkContext, bootstrapAdmins } }).node).bootstrapAdmins;

  it('is an empty list by default (cdk.json) and when unset or empty', () => {
    expect(cdkContext.bootstrapAdmins).toEqual([]);
    expect(parse(undefined)).toEqual([]);
    expect(parse('')).toEqual([]);
  });

  it('reads a list, or its JSON text as `-c bootstrapAdmins=…` passes it', () => {
    expect(parse(admins)).toEqual(admins);
    expect(parse(JSON.stringify(admins))).toEqual(admins);
  });

  it.each([
    ['text that is not JSON', '[{claim_name: email}]', /JSON text/],
    ['an object instead of a list', { claim_name: 'email', claim_value: 'x' }, /must be a list/],
    ['an entry without claim_value', [{ claim_name: 'email' }], /entry 0: claim_value/],
    ['an empty claim name', [{ claim_name: '', claim_value: 'x' }], /entry 0: claim_name/],
    ['an unknown field', [{ claim_name: 'email', claim_value: 'x', role_id: 'admin' }], /unknown field/],
  ])('refuses %s', (_what, value, message) => {
    expect(() => parse(value)).toThrow(message);
  });
});

describe('the bootstrapAdmins custom resource', () => {
  let stack: GeoPlaneStack;
  let template: Template;

  beforeAll(() => {
    ({ stack, template } = synthesize({ bootstrapAdmins: JSON.stringify(admins) }));
  });

  it('passes the listed claims to the custom resource, backed by its own function', () => {
    template.resourceCountIs('Custom::GeoPlaneBootstrapAdmins', 1);
    template.hasResourceProperties('Custom::GeoPlaneBootstrapAdmins', {
      ServiceToken: { 'Fn::GetAtt': [logicalId(stack.bootstrapAdmins.function.function), 'Arn'] },
      Admins: admins,
    });
  });

  it('exists with an empty list too, so that emptying the list removes what it made', () => {
    const empty = synthesize().template;
    empty.hasResourceProperties('Custom::GeoPlaneBootstrapAdmins', { Admins: [] });
  });

  it('gives its function the table name and only Query, PutItem and DeleteItem on the table', () => {
    const fn = stack.bootstrapAdmins.function;
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^bootstrapAdmins'),
      Environment: { Variables: Match.objectLike({ TABLE_NAME: { Ref: logicalId(stack.table.table) } }) },
    });
    const statements = statementsOfRole(template, fn.role);
    expect(actionsIn(statements, 'dynamodb').sort()).toEqual(
      bootstrapAdminsData.map((a) => `dynamodb:${a}`).sort(),
    );
    const tableArn = { 'Fn::GetAtt': [logicalId(stack.table.table), 'Arn'] };
    for (const statement of statements.filter((s) =>
      asArray(s.Action).some((a) => a.startsWith('dynamodb:')),
    )) {
      expect(JSON.stringify(statement.Resource)).not.toContain('*');
      expect(asArray(statement.Resource)).toContainEqual(tableArn);
    }
    // Nothing beyond its logs, X-Ray and the table.
    const services = new Set(statements.flatMap((s) => asArray(s.Action).map((a) => a.split(':')[0])));
    expect([...services].sort()).toEqual(['dynamodb', 'logs', 'xray']);
  });

  it('leaves no cdk-nag AwsSolutions finding on the custom resource or its function', () => {
    const report = new AwsSolutionsChecks().validateScope(stack.bootstrapAdmins);
    const left = report.violations.flatMap((v) =>
      v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`),
    );
    expect(left).toEqual([]);
  });
});
