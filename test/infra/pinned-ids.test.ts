import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { appWithConsole, templatesOf } from './templates.ts';

/*
 * The logical ids of the stateful resources, pinned (ADR 0114). CloudFormation knows a resource by
 * its logical id: a refactor that moves a construct (another id or parent, another nested stack)
 * makes it delete the old resource, or orphan it when retained, and create a new one. For these
 * types that is data lost, not a redeploy.
 */

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

type Json = Record<string, any>;

/** Why a moved resource of each type is a loss: the failure message tells the developer. */
const why: Record<string, string> = {
  'AWS::DynamoDB::Table':
    'a moved table is a NEW, EMPTY catalog table; the old one is retained and orphaned (every workspace, service and key is in it)',
  'AWS::KMS::Key':
    'a moved key is a NEW key: the connection passwords stored under the old one can no longer be decrypted',
  'AWS::S3::Bucket':
    'a moved bucket is a NEW, EMPTY bucket with another name; the retained one keeps the uploads and logs, orphaned',
  'AWS::ApiGateway::UsagePlan':
    'a moved usage plan is a NEW plan: every workspace usage key attached to the old one loses its limits',
  'AWS::Events::EventBus':
    'a moved event bus is a NEW bus: the rules operators added to the old one stop receiving catalog events',
  'AWS::SNS::Topic': 'a moved topic is a NEW topic: the alarm e-mail subscriptions must be confirmed again',
  'AWS::SQS::Queue': 'a moved queue is a NEW, EMPTY queue: the catalog events set aside in it are lost',
  'AWS::Logs::LogGroup': 'a moved retained log group is a NEW, EMPTY log group; the old logs are orphaned',
};

/**
 * The expected logical ids, by type, with the template that holds them (`GeoPlane` is the parent;
 * a nested stack is named by its construct id). Log groups: only those retained on deletion (the
 * functions' own go with them). Change this list only with a migration that keeps the data (see
 * ADR 0114: CloudFormation resource import, or a restore into the new resource).
 */
const pinned: Record<keyof typeof why, readonly string[]> = {
  'AWS::DynamoDB::Table': ['GeoPlane/CatalogTableBBEA0CBC'],
  'AWS::KMS::Key': ['GeoPlane/AlarmsTopicKeyAB251E47', 'GeoPlane/ManagementConnectionSecretsKey8BD3177F'],
  'AWS::S3::Bucket': [
    'GeoPlane/ConsoleBucket86B6957C',
    'GeoPlane/ConsoleLogs223D8CCD',
    'GeoPlane/ImportUploadsAccessLogsAB5637F0',
    'GeoPlane/ImportUploadsBucketECD42D88',
    // The persistent tile cache (ADR 0139).
    'GeoPlane/TileCacheBucketD89D757C',
  ],
  'AWS::ApiGateway::UsagePlan': ['GeoPlane/ManagementApiUsagePlan260D8D2D'],
  'AWS::Events::EventBus': ['GeoPlane/CatalogEventsBusD8E60B74'],
  'AWS::SNS::Topic': ['GeoPlane/AlarmsTopic3A2DFEBA'],
  'AWS::SQS::Queue': ['GeoPlane/CatalogEventsDeadLettersD5152B4E'],
  'AWS::Logs::LogGroup': ['GeoPlane/ManagementAccessLogsCAEB4872'],
};

describe('logical ids of stateful resources (ADR 0114)', () => {
  let found: Record<string, string[]>;

  beforeAll(async () => {
    // The default deployment as `cdk synth` makes it, console included.
    const { stack } = await appWithConsole({ context: cdkContext });
    found = Object.fromEntries(Object.keys(why).map((type) => [type, [] as string[]]));
    for (const [s, template] of templatesOf(stack)) {
      const where = s === stack ? stack.stackName : s.node.id;
      for (const [id, resource] of Object.entries(template.toJSON().Resources as Record<string, Json>)) {
        if (!(resource.Type in why)) continue;
        if (resource.Type === 'AWS::Logs::LogGroup' && resource.DeletionPolicy !== 'Retain') continue;
        found[resource.Type]?.push(`${where}/${id}`);
      }
    }
  }, 240_000);

  it.each(Object.keys(why))('%s: no resource appears, disappears or changes its logical id', (type) => {
    const actual = [...(found[type] ?? [])].sort();
    const expected = [...(pinned[type] ?? [])].sort();
    const gone = expected.filter((id) => !actual.includes(id));
    const added = actual.filter((id) => !expected.includes(id));
    const message = [
      `${type}: the stateful resources' logical ids changed.`,
      gone.length ? `  no longer in the template: ${gone.join(', ')}` : '',
      added.length ? `  new in the template:       ${added.join(', ')}` : '',
      `  Why it matters: ${why[type]}.`,
      '  If a construct moved, give it back its id (or overrideLogicalId) instead of updating this list;',
      '  a genuinely new stateful resource is added here, a removal needs a migration (ADR 0114).',
    ]
      .filter(Boolean)
      .join('\n');
    expect(actual, message).toEqual(expected);
  });

  it('pins a retained KMS key and the catalog table, which no deploy may ever replace', () => {
    expect(found['AWS::DynamoDB::Table']).toContain('GeoPlane/CatalogTableBBEA0CBC');
    expect(found['AWS::KMS::Key']).toContain('GeoPlane/ManagementConnectionSecretsKey8BD3177F');
  });
});
