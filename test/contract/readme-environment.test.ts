import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');

/** Variables the local host reads from its environment (infra/local), set-for-itself ones aside. */
function hostVariables(): string[] {
  const names = new Set<string>();
  for (const file of readdirSync(join(root, 'infra/local')).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(root, 'infra/local', file), 'utf8');
    for (const m of text.matchAll(/\benv\.([A-Z][A-Z0-9_]{2,})\b|fromEnv\('([A-Z][A-Z0-9_]{2,})'/g)) {
      names.add((m[1] ?? m[2]) as string);
    }
  }
  // Set by the host for its own handlers (credentials of DynamoDB Local, the upload URL, the test
  // run's marker, the SDK's notice): not the operator's to set.
  for (const own of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_REGION',
    'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
    'POWERTOOLS_SERVICE_NAME',
    'GEOPLANE_IMPORT_UPLOAD_URL',
    'GEOPLANE_TEST_RUN',
  ])
    names.delete(own);
  return [...names].sort();
}

describe("README's environment table", () => {
  it('finds the variables (so the check below checks something)', () => {
    expect(hostVariables()).toEqual(
      expect.arrayContaining(['PORT', 'GEOPLANE_DATA_DIR', 'GEOPLANE_POSTGIS_PORT']),
    );
  });

  it('names every variable the local host reads', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('**Environment of `npm start`**'));
    expect(hostVariables().filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
