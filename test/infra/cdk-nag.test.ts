import { readFileSync } from 'node:fs';
import { type App, Stack, Validations } from 'aws-cdk-lib';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { consoleDeploymentFindings } from '#infra/constructs/console-site.ts';
import { tileCacheBucketParameter } from '#infra/constructs/data-plane.ts';
import { uploadObjectsFinding } from '#infra/constructs/import-uploads.ts';
import { operationStackOf, uploadBucketParameter } from '#infra/constructs/operation-stacks.ts';
import { executionsFinding } from '#infra/constructs/sweeps.ts';
import { tileObjectsFinding } from '#infra/constructs/tile-cache.ts';
import { createGeoPlaneApp, type GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { logicalId } from './iam.ts';
import { appWithConsole } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

/** Findings of the AwsSolutions pack left after acknowledgments, as "rule at path" lines. */
function findings(scope: IConstruct, severity: 'error' | 'warning') {
  const report = new AwsSolutionsChecks().validateScope(scope);
  return report.violations
    .filter((v) => v.severity === severity)
    .flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath}`));
}

/** Every acknowledgment recorded in the construct tree: rule id → reasons. */
function acknowledgments(root: IConstruct): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const construct of root.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [qualified, reason] of Object.entries(entry.data as Record<string, string>)) {
        const id = qualified.replace(/^annotation::/i, '');
        out.set(id, [...(out.get(id) ?? []), reason]);
      }
    }
  }
  return out;
}

describe('cdk-nag AwsSolutions checks', () => {
  let app: App;

  beforeAll(async () => {
    // The app as infra/app.ts makes it: with the console (issue #14).
    ({ app } = await appWithConsole({ context: cdkContext }));
    // The checks are registered as a validation plugin: an unacknowledged error makes synth throw.
    app.synth();
  });

  it('reports no unacknowledged error', () => {
    expect(findings(app, 'error')).toEqual([]);
  });

  it('reports no unacknowledged warning', () => {
    expect(findings(app, 'warning')).toEqual([]);
  });

  it('acknowledges only the reviewed rules, each with a written reason', () => {
    const acks = acknowledgments(app);
    const stack = app.node.findChild('GeoPlane') as GeoPlaneStack;
    expect([...acks.keys()].sort()).toEqual(
      [
        // The upload bucket's access-log bucket; upload keys under uploads/ in the parent (the
        // import step) and in the nested stacks (the bucket is a parameter there), ADR 0086.
        'AwsSolutions-S1',
        uploadObjectsFinding(stack.importUploads.bucketLogicalId),
        uploadObjectsFinding(uploadBucketParameter),
        // Tile keys under tiles/ (ADR 0139): the tile cache step in the parent, the data plane in its
        // nested stack (the bucket is a parameter there). The tile bucket keeps no access logs (S1).
        tileObjectsFinding(stack.tileCache.bucketLogicalId),
        tileObjectsFinding(tileCacheBucketParameter),
        'AwsSolutions-APIG2',
        'AwsSolutions-APIG3',
        'AwsSolutions-APIG4',
        'AwsSolutions-COG4',
        // No account-wide API Gateway CloudWatch role by default (apiGatewayCloudWatchRole, ADR 0114),
        // so no acknowledgment of its managed policy.
        'AwsSolutions-IAM5[Resource::*]',
        // The catalog events' dead-letter queue is the event source mapping's destination (ADR 0094).
        'AwsSolutions-SQS3',
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*]',
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/usageplans/*/keys]',
        // Tags given on CreateApiKey, only the deployment's (ADR 0111).
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:<AWS::Region>::/tags/*]',
        // The sweep describes executions of the four state machines (names made at run time), ADR 0093.
        executionsFinding(logicalId(stack.deletionWorkflow.stateMachine)),
        executionsFinding(logicalId(stack.importWorkflow.stateMachine)),
        executionsFinding(logicalId(stack.harvestWorkflow.stateMachine)),
        executionsFinding(logicalId(stack.tileCacheWorkflow.stateMachine)),
        // The console's distribution (issue #14): no geo restriction, no WAF, the default certificate.
        'AwsSolutions-CFR1',
        'AwsSolutions-CFR2',
        'AwsSolutions-CFR4',
        // CDK's BucketDeployment handler, which copies the console build into its bucket.
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'AwsSolutions-L1',
        ...consoleDeploymentFindings(logicalId(stack.console?.bucket as never)),
      ].sort(),
    );
    for (const [id, reasons] of acks) {
      for (const reason of reasons) expect(reason.length, id).toBeGreaterThanOrEqual(60);
    }
  });

  it('acknowledges the missing authorizer only on public methods', () => {
    const publicMethods = app.node
      .findAll()
      .filter((c) =>
        c.node.metadata.some(
          (m) =>
            m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY &&
            Object.keys(m.data as object).some((k) => k.endsWith('AwsSolutions-APIG4')),
        ),
      )
      .map((c) => c.node.path);
    const expected = routes
      .filter((op) => op.permission === 'public')
      // The methods live in the nested stack of their area (ADR 0077), one per operation.
      .map((op) => `GeoPlane/Management/${operationStackOf(op)}/Methods/${op.operationId}`);
    expect(expected.length).toBeGreaterThan(0);
    expect(publicMethods.sort()).toEqual(expected.sort());
  });
});

describe('cdk-nag with the other values of the deploy switches (ADR 0114, 0115)', () => {
  it('is clean with a stage, the account CloudWatch role, no console logs and an import reservation', async () => {
    const { app } = await appWithConsole({
      context: {
        ...cdkContext,
        stage: 'dev',
        apiGatewayCloudWatchRole: true,
        consoleAccessLogs: false,
        importStepConcurrency: 5,
      },
    });
    app.synth();
    expect(findings(app, 'error')).toEqual([]);
    expect(findings(app, 'warning')).toEqual([]);
  }, 240_000);
});

describe('the cdk-nag check itself', () => {
  function appWithManagedPolicy(acknowledge: boolean) {
    const { app } = createGeoPlaneApp({
      context: cdkContext,
      bundling: false,
      builtinCloudFormationValidation: false,
    });
    const stack = new Stack(app, 'Offender');
    const role = new Role(stack, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('AdministratorAccess')],
    });
    if (acknowledge) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AdministratorAccess]',
        reason: 'test fixture: shows that an acknowledgment silences exactly this finding and nothing else',
      });
    }
    return app;
  }

  it('finds an unacknowledged error (so the checks above can fail)', () => {
    const app = appWithManagedPolicy(false);
    expect(findings(app, 'error')).toEqual([
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AdministratorAccess] at Offender/Role/Resource',
    ]);
    expect(() => app.synth()).toThrow(/AwsSolutions-IAM4/);
  });

  it('lets an acknowledged finding through', () => {
    const app = appWithManagedPolicy(true);
    expect(findings(app, 'error')).toEqual([]);
  });
});
