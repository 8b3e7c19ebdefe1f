import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stageContextKeys } from '#infra/constructs/stage-config.ts';

const root = join(import.meta.dirname, '../..');

/** The heading of the operator's guide's key table (docs/deploy.md): the table is what follows it. */
const KEY_TABLE_HEADING = '## Every cdk.json key';

/** The deployment's context keys: cdk.json's (CDK's own feature flags aside) and the ones stage-config.ts reads. */
function contextKeys(): string[] {
  const cdkJson = JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const fromCdkJson = Object.keys(cdkJson.context ?? {}).filter((key) => !key.startsWith('@aws-cdk'));
  return [...new Set([...fromCdkJson, ...stageContextKeys])].sort();
}

/** The section of docs/deploy.md under the key table's heading, up to the next `## ` heading. */
function keySection(): string {
  const guide = readFileSync(join(root, 'docs/deploy.md'), 'utf8');
  const start = guide.indexOf(`\n${KEY_TABLE_HEADING}`);
  if (start < 0) throw new Error(`docs/deploy.md has no "${KEY_TABLE_HEADING}" section`);
  const rest = guide.slice(start + 1);
  const end = rest.indexOf('\n## ', KEY_TABLE_HEADING.length);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The keys the table documents: the backticked name in the first cell of each body row. */
function documentedKeys(): string[] {
  const keys: string[] = [];
  for (const line of keySection().split('\n')) {
    const row = /^\|\s*`([^`]+)`\s*\|/.exec(line.trim());
    if (row) keys.push(row[1] as string);
  }
  return keys;
}

describe("docs/deploy.md's cdk.json key table", () => {
  it('finds the keys on both sides (so the checks below check something)', () => {
    expect(contextKeys()).toEqual(
      expect.arrayContaining(['stage', 'vpc', 'importDatabase', 'bootstrapAdmins']),
    );
    expect(documentedKeys().length).toBeGreaterThan(20);
  });

  it('documents every context key of cdk.json and of stage-config.ts', () => {
    const documented = new Set(documentedKeys());
    expect(contextKeys().filter((key) => !documented.has(key))).toEqual([]);
  });

  it('documents no key that neither cdk.json nor stage-config.ts has', () => {
    const known = new Set(contextKeys());
    expect(documentedKeys().filter((key) => !known.has(key))).toEqual([]);
  });

  it('documents each key once', () => {
    const keys = documentedKeys();
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });
});
