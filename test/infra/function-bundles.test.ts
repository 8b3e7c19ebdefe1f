import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundling } from '#infra/bundling.ts';
import { repositoryRoot } from '#infra/constructs/api-function.ts';
import { FunctionBundles } from '#infra/constructs/function-bundles.ts';

// Two entry points of one folder: CDK caches assets by their props, so they must not collide.
const entries = ['functions/workspaces/get-workspace.ts', 'functions/workspaces/list-workspaces.ts'];

describe('FunctionBundles (with bundling on)', () => {
  let assetDirs: string[];

  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:enable-asset-metadata': true } });
    const stack = new Stack(app, 'Bundles');
    const bundles = new FunctionBundles(repositoryRoot, entries);
    entries.forEach((entry, i) => {
      new LambdaFunction(stack, `Fn${i}`, {
        code: bundles.code(entry),
        handler: 'index.handler',
        runtime: Runtime.NODEJS_24_X,
      });
    });
    const template = Template.fromStack(stack);
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    assetDirs = functions.map((fn) => join(app.outdir, fn.Metadata['aws:asset:path']));
  }, 60_000);

  it('stages one asset per entry point, each with its own bundle as index.mjs', () => {
    expect(new Set(assetDirs).size).toBe(entries.length);
    for (const dir of assetDirs) expect(existsSync(join(dir, 'index.mjs'))).toBe(true);
    const [first, second] = assetDirs.map((dir) => readFileSync(join(dir, 'index.mjs'), 'utf8'));
    expect(first).not.toBe(second);
  });

  it('writes minified ESM with the shared banner, the AWS SDK bundled', () => {
    const code = readFileSync(join(assetDirs[0] as string, 'index.mjs'), 'utf8');
    expect(code.startsWith(bundling.banner)).toBe(true);
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
    // Minified: a few very long lines.
    expect(code.length / code.split('\n').length).toBeGreaterThan(1000);
  });

  it('exports the handler Lambda calls', async () => {
    const module = (await import(pathToFileURL(join(assetDirs[0] as string, 'index.mjs')).href)) as {
      handler?: unknown;
    };
    expect(typeof module.handler).toBe('function');
  });

  it('stages the tracer as a sidecar beside each bundle instead of inlining the X-Ray SDK (ADR 0100)', async () => {
    for (const dir of assetDirs) {
      expect(existsSync(join(dir, 'tracer.sidecar.mjs'))).toBe(true);
      expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).not.toContain('AWS_XRAY_DAEMON_ADDRESS');
    }
    const sidecar = (await import(
      pathToFileURL(join(assetDirs[0] as string, 'tracer.sidecar.mjs')).href
    )) as {
      Tracer?: unknown;
    };
    expect(typeof sidecar.Tracer).toBe('function');
  });

  it('refuses an entry point it was not given', () => {
    const bundles = new FunctionBundles(repositoryRoot, entries);
    expect(() => bundles.code('functions/nope.ts')).toThrow(/not one of the app's entry points/);
  });
});
