import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#api/routes.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { esbuildOptions } from '#infra/constructs/function-bundles.ts';
import { appEntries } from '#infra/stacks/geoplane-stack.ts';
import { buildBundles } from '../support/bundles.ts';

/**
 * Every function's bundle keeps esbuild's tree shaking of our own modules (ADR 0153). A module of
 * ours that is loaded by a dynamic `import()` (or `require`) is wrapped, with everything it
 * imports, in a lazy initialiser that esbuild can't shake: `harvestStepDeps` once imported
 * `wiring/repositories.ts` that way, and every repository then rode in the four harvest job
 * routes' bundles (~56 KB each). Built unminified with the deployed options in one run, so the
 * wrappers can be read by the module each names.
 */
const entries = appEntries(routes);
let wrapped: Map<string, string[]>;
let inputs: Map<string, string[]>;

/** The modules of ours an unminified bundle wraps in `__esm({ "<path>"() … })`. */
function wrappedModules(text: string): string[] {
  return [...text.matchAll(/__esm\(\{\s*(?:async )?"((?:shared|functions|infra)\/[^"]+)"/g)].map(
    (m) => m[1] as string,
  );
}

describe('bundles keep our modules tree-shakable', () => {
  beforeAll(() => {
    const result = buildSync({
      ...esbuildOptions(),
      minify: false,
      absWorkingDir: repositoryRoot,
      entryPoints: Object.fromEntries(entries.map((e) => [e.replace(/\.ts$/, ''), join(repositoryRoot, e)])),
      outdir: join(repositoryRoot, '.tree-shaking-never-written'),
      outExtension: { '.js': '.mjs' },
      write: false,
      metafile: true,
      logLevel: 'error',
    });
    inputs = new Map(
      Object.entries(result.metafile.outputs)
        .filter(([, o]) => o.entryPoint !== undefined)
        .map(([, o]) => [o.entryPoint as string, Object.keys(o.inputs)]),
    );
    wrapped = new Map(
      result.outputFiles
        .filter((f) => f.path.endsWith('.mjs'))
        .map((f) => [
          f.path.slice(f.path.indexOf('.tree-shaking-never-written/') + 28),
          wrappedModules(f.text),
        ]),
    );
  }, 120_000);

  it('builds every function of the app', () => {
    expect(entries.length).toBeGreaterThan(120);
    expect(wrapped.size).toBe(entries.length);
  });

  it('finds a wrapper where a module of ours is imported dynamically (the check can fail)', () => {
    const text = buildSync({
      ...esbuildOptions(),
      minify: false,
      absWorkingDir: repositoryRoot,
      stdin: {
        contents:
          "export async function handler() { return (await import('./shared/wiring/repositories.ts')).workspaceRepository(); }",
        resolveDir: repositoryRoot,
        loader: 'ts',
      },
      write: false,
      logLevel: 'error',
    }).outputFiles[0]?.text;
    expect(wrappedModules(text ?? '')).toContain('shared/wiring/repositories.ts');
  });

  it('wraps no module of ours in any bundle', () => {
    const offenders = [...wrapped].filter(([, modules]) => modules.length > 0);
    expect(offenders.map(([bundle, modules]) => `${bundle}: ${modules.slice(0, 5).join(', ')}`)).toEqual([]);
  });

  it('keeps what a function never runs out of its bundle (ADR 0153)', () => {
    const of = (entry: string) => inputs.get(entry) ?? [];
    // Readiness only logs in to the import database, and a preview only reads it: none of the
    // import's staging, finalising or COPY.
    for (const entry of ['functions/meta/get-readiness.ts', 'functions/imports/preview-import.ts']) {
      expect(of(entry)).toContain('shared/datasources/imports/logins.ts');
      for (const heavy of [
        'shared/datasources/imports/database.ts',
        'shared/datasources/imports/database-staging.ts',
        'shared/datasources/imports/database-finalize.ts',
        'shared/datasources/imports/generations.ts',
      ]) {
        expect(of(entry)).not.toContain(heavy);
      }
      expect(of(entry).some((i) => i.includes('node_modules/pg-copy-streams/'))).toBe(false);
    }
    // The service routes read an s3:// raster root through the S3 sidecar, not a bundled client.
    for (const entry of ['functions/services/create-service.ts', 'functions/services/update-service.ts']) {
      expect(of(entry)).toContain('shared/datasources/geotiff-readers.ts');
      expect(of(entry).some((i) => i.includes('node_modules/@aws-sdk/client-s3/'))).toBe(false);
    }
    // KMS's client is a sidecar: no change route carries it (locally the secret box is AES).
    for (const entry of ['functions/roles/create-role.ts', 'functions/services/create-service.ts']) {
      expect(of(entry)).toContain('shared/datasources/kms-secret-box.ts');
      expect(of(entry).some((i) => i.includes('node_modules/@aws-sdk/client-kms/'))).toBe(false);
    }
    // The routes that only read or refuse by an import job carry no URI policy and no upload store.
    for (const entry of ['functions/services/delete-service.ts', 'functions/imports/get-import.ts']) {
      expect(of(entry)).toContain('shared/store/imports-repository.ts');
      expect(of(entry)).not.toContain('shared/datasources/imports/sources.ts');
      expect(of(entry)).not.toContain('shared/platform/import-uploads.ts');
    }
  });

  it("stages KMS's and S3's sidecars beside the bundles that load them, and they load", async () => {
    const built = buildBundles(['functions/roles/create-role.ts', 'functions/services/create-service.ts']);
    try {
      for (const entry of ['functions/roles/create-role.ts', 'functions/services/create-service.ts']) {
        expect(built.staged(entry)).toContain('kms.sidecar.mjs');
      }
      expect(built.staged('functions/services/create-service.ts')).toContain('s3-rasters.sidecar.mjs');
      expect(built.staged('functions/roles/create-role.ts')).not.toContain('s3-rasters.sidecar.mjs');
      const beside = (name: string) =>
        pathToFileURL(join(dirname(built.bundle('functions/services/create-service.ts')), name)).href;
      const kms = (await import(beside('kms.sidecar.mjs'))) as Record<string, unknown>;
      expect([typeof kms.KMSClient, typeof kms.EncryptCommand, typeof kms.DecryptCommand]).toEqual([
        'function',
        'function',
        'function',
      ]);
    } finally {
      built.remove();
    }
  }, 60_000);
});
