import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';

const root = join(import.meta.dirname, '../..');

/** The README's replayed blocks: each ```sh block right after a `<!-- readme-flow -->` marker, in order. */
function readmeFlows(): string[] {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  return [...text.matchAll(/<!-- readme-flow -->\s*```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

const missing = ['curl', 'jq'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
if (missing.length > 0) {
  console.warn(
    `README flows skipped: ${missing.join(' and ')} not installed (.ci/run installs them with apt)`,
  );
}

describe('the README walk through the API', () => {
  it('has the blocks this test replays', () => {
    expect(readmeFlows().length).toBeGreaterThanOrEqual(4);
  });

  it.skipIf(missing.length > 0)(
    'runs every block, in order, against the local host as written',
    () => {
      const host = inject('host');
      // Only where the host is: its URL for the default one, its data dir for `.local/`.
      const script = readmeFlows()
        .join('\n')
        .replaceAll('https://127.0.0.1:8443/api/v1', host.url)
        .replaceAll('.local/', `${host.dataDir}/`);
      const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {
        cwd: root,
        env: { ...process.env, GEOPLANE_DATA_DIR: host.dataDir },
        encoding: 'utf8',
        timeout: 90_000,
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      const lines = run.stdout.split('\n');
      expect(lines).toContain('demo');
      expect(lines).toContain('roads');
      expect(lines).toContain('{"name":"places-db","configured_secrets":["password"]}');
      expect(lines).toContain('true');
      expect(lines).toContain('places');
      expect(lines).toContain('{"valid":true,"columns":["name"],"geometry":"geom"}');
      expect(lines.some((l) => l.startsWith('{"valid":false,"error":'))).toBe(true);
      expect(lines).toContain('409');
      // The audit trail, newest first: the recursive deletion, the refused one, the layer.
      expect(lines).toContain('deleteService succeeded');
      expect(lines).toContain('deleteService refused');
      expect(lines).toContain('createLayer succeeded');
      // See your data: a public layer's features and tile without a credential, the key's collections.
      expect(lines.filter((l) => /^Place \d+$/.test(l))).toHaveLength(2);
      expect(lines).toContain('200 application/vnd.mapbox-vector-tile');
    },
    120_000,
  );
});
