import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { type BuildOptions, buildSync } from 'esbuild';
import { bundling, sidecarEntryPoints, stageBeside } from '../bundling.ts';

/**
 * `infra/bundling.ts` as esbuild's build API takes it: the values unchanged, only the banner
 * wrapped as `{ js }` and the readonly arrays copied (the benchmark does the same).
 */
export function esbuildOptions(): BuildOptions {
  const { banner, mainFields, external, ...rest } = bundling;
  return { ...rest, banner: { js: banner }, mainFields: [...mainFields], external: [...external] };
}

/** Output name of an entry point: `functions/workspaces/get-workspace.ts` → `functions/workspaces/get-workspace`. */
const outputName = (entry: string) => entry.replace(/\.ts$/, '');

/**
 * The Lambda bundles of one app, built in ONE esbuild run with the options shared with the
 * benchmark, the first time CDK stages one of them (never when bundling is skipped, as in tests).
 * One run parses the shared dependencies (AWS SDK, zod, jose) once instead of once per function
 * and spawns no `npx esbuild` per function; see ADR 0017.
 */
export class FunctionBundles {
  private readonly entries: readonly string[];
  /** Entries of the current build whose bundle is not in its asset yet. */
  private readonly pending = new Set<string>();
  private outDir: string | undefined;

  /**
   * @param root the repository root
   * @param entries every entry point (relative to `root`) the app deploys
   */
  constructor(
    private readonly root: string,
    entries: Iterable<string>,
  ) {
    this.entries = [...new Set(entries)];
  }

  /** The code asset of an entry point: its bundle as `index.mjs` (handler `index.handler`). */
  code(entry: string): Code {
    if (!this.entries.includes(entry)) throw new Error(`${entry} is not one of the app's entry points`);
    return Code.fromAsset(join(this.root, dirname(entry)), {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        // Never pulled: local bundling always succeeds or throws.
        image: DockerImage.fromRegistry('geoplane/local-esbuild-only'),
        // CDK caches staged assets by these props (functions left out), so the entry is named
        // here: otherwise the functions of one folder would share the first one's bundle.
        command: [entry],
        local: {
          tryBundle: (outputDir) => {
            const bundle = this.bundleOf(entry);
            copyFileSync(bundle, join(outputDir, 'index.mjs'));
            // What it loads from beside it: WebAssembly (libpg-query, node-sqlite3-wasm), data,
            // sidecars (ADR 0100) and workers (ADR 0107).
            stageBeside(bundle, outputDir, this.root, this.outDir as string);
            this.copied(entry);
            return true;
          },
        },
      },
    });
  }

  private bundleOf(entry: string): string {
    if (!this.outDir) {
      const outDir = mkdtempSync(join(tmpdir(), 'geoplane-bundles-'));
      process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
      for (const e of this.entries) this.pending.add(e);
      buildSync({
        ...esbuildOptions(),
        absWorkingDir: this.root,
        entryPoints: {
          ...Object.fromEntries(this.entries.map((e) => [outputName(e), join(this.root, e)])),
          ...sidecarEntryPoints(this.root),
        },
        outdir: outDir,
        outExtension: { '.js': '.mjs' },
        logLevel: 'warning',
      });
      this.outDir = outDir;
    }
    return join(this.outDir, `${outputName(entry)}.mjs`);
  }

  /** Removes the build once every bundle is in its asset (a later request would rebuild). */
  private copied(entry: string): void {
    this.pending.delete(entry);
    if (this.pending.size === 0 && this.outDir) {
      rmSync(this.outDir, { recursive: true, force: true });
      this.outDir = undefined;
    }
  }
}
