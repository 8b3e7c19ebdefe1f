import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildSync } from 'esbuild';
import { type StagedAsset, sidecarEntryPoints, stageBeside } from '#infra/bundling.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { esbuildOptions } from '#infra/constructs/function-bundles.ts';

/** Entry points bundled as CDK bundles them, and what was staged beside each. */
export interface BuiltBundles {
  /** The bundle of an entry point (`functions/….ts`, or the name an extra entry was given). */
  bundle(entry: string): string;
  /** The names of what was staged beside an entry point's bundle (WebAssembly, data, sidecars, workers). */
  staged(entry: string): string[];
  /** The same, with their kinds and sizes. */
  assets(entry: string): StagedAsset[];
  /** Removes every bundle. */
  remove(): void;
}

/**
 * Bundles `entries` (repository paths of functions) and `extra` (name → absolute path of a module
 * of the test's own) in ONE esbuild run with the deployed options and the sidecars, as CDK does
 * (ADR 0017), then stages beside each bundle what it names as CDK stages it (ADR 0100).
 */
export function buildBundles(
  entries: readonly string[],
  extra: Readonly<Record<string, string>> = {},
): BuiltBundles {
  const out = mkdtempSync(join(tmpdir(), 'geoplane-bundles-'));
  const name = (entry: string) => entry.replace(/\.ts$/, '');
  const bundle = (entry: string) => join(out, `${name(entry)}.mjs`);
  buildSync({
    ...esbuildOptions(),
    absWorkingDir: repositoryRoot,
    entryPoints: {
      ...Object.fromEntries(entries.map((e) => [name(e), join(repositoryRoot, e)])),
      ...extra,
      ...sidecarEntryPoints(repositoryRoot),
    },
    outdir: out,
    outExtension: { '.js': '.mjs' },
    logLevel: 'error',
  });
  const staged = new Map<string, StagedAsset[]>();
  for (const entry of [...entries, ...Object.keys(extra)]) {
    const file = bundle(entry);
    staged.set(entry, stageBeside(file, dirname(file), repositoryRoot, out));
  }
  return {
    bundle,
    staged: (entry) => (staged.get(entry) ?? []).map((a) => a.name),
    assets: (entry) => staged.get(entry) ?? [],
    remove: () => rmSync(out, { recursive: true, force: true }),
  };
}
