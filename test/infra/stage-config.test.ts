import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '#api/routes.ts';
import { stageBooleanKeys, stageConfigOf } from '#infra/constructs/stage-config.ts';
import { GeoPlaneStack } from '#infra/stacks/geoplane-stack.ts';
import { deploymentTemplate } from './templates.ts';

const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'))
  .context as Record<string, unknown>;

/**
 * The Lambda environment variable each boolean context key becomes, or null for a key the stack
 * itself reads (a new key needs its row).
 */
const environmentOf: Record<string, string | null> = {
  consoleTokenLogin: 'CONSOLE_TOKEN_LOGIN',
  // Whether the stack deploys the console (issue #14): test/infra/console-site.test.ts.
  consoleEnabled: null,
  // API Gateway's account-wide CloudWatch role (ADR 0114): test/infra/deploy-order.test.ts.
  apiGatewayCloudWatchRole: null,
  // The distribution's standard logs (ADR 0115): test/infra/console-site.test.ts.
  consoleAccessLogs: null,
};
const functionBooleanKeys = stageBooleanKeys.filter((key) => environmentOf[key]);

const configWith = (context: Record<string, unknown>) => stageConfigOf(new App({ context }).node);

describe('boolean cdk.json context (ADR 0087)', () => {
  it('knows every boolean key of the stage config', () => {
    expect(stageBooleanKeys).toEqual([
      'consoleTokenLogin',
      'consoleEnabled',
      'apiGatewayCloudWatchRole',
      'consoleAccessLogs',
    ]);
    expect(Object.keys(environmentOf).sort()).toEqual([...stageBooleanKeys].sort());
  });

  describe.each(stageBooleanKeys)('%s', (key) => {
    it.each([
      ['false', false],
      ['0', false],
      [false, false],
      [0, false],
      ['FALSE', false],
      ['true', true],
      ['1', true],
      [true, true],
      [1, true],
    ])('reads %j as %s', (value, expected) => {
      expect(configWith({ [key]: value })[key]).toBe(expected);
    });

    it.each(['yes', 'off', '2', 'fals', 'null'])('refuses %j with a clear error', (value) => {
      expect(() => configWith({ [key]: value })).toThrow(/must be true or false .*got "/);
      expect(() => configWith({ [key]: value })).toThrow(new RegExp(`at ${key}`));
    });

    it('reads "" (not configured) as the default', () => {
      expect(configWith({ [key]: '' })[key]).toBe(configWith({})[key]);
    });
  });
});

describe('boolean cdk.json context the functions get', () => {
  it.each(functionBooleanKeys)(
    '%s: passes "false" from `-c key=false` to the functions as "false"',
    (key) => {
      // Prepare: the context as `cdk synth -c key=false` gives it (a string), without bundling.
      const app = new App({ context: { ...cdkContext, [key]: 'false', 'aws:cdk:bundling-stacks': [] } });
      // Act
      const stack = new GeoPlaneStack(app, 'GeoPlane', { config: stageConfigOf(app.node), routes });
      // Assess
      const functions = deploymentTemplate(stack).findResources('AWS::Lambda::Function');
      const values = new Set(
        Object.values(functions)
          .map((fn) => fn.Properties?.Environment?.Variables?.[environmentOf[key] as string])
          .filter((v) => v !== undefined),
      );
      expect([...values]).toEqual(['false']);
    },
    120_000,
  );
});

describe('boolean environment variables (shared/config/env.ts)', () => {
  const booleans = ['OIDC_TRUST_ROLE_CLAIMS', 'CONSOLE_AUTH_ENABLED', 'CONSOLE_TOKEN_LOGIN'] as const;

  async function configUnder(name: string, value: string) {
    vi.resetModules();
    vi.stubEnv(name, value);
    try {
      const { config } = await import('#config/env.ts');
      return config();
    } finally {
      vi.unstubAllEnvs();
    }
  }

  describe.each(booleans)('%s', (name) => {
    it.each([
      ['false', false],
      ['0', false],
      ['true', true],
      ['1', true],
    ])('reads "%s" as %s', async (value, expected) => {
      expect((await configUnder(name, value))[name]).toBe(expected);
    });

    it('refuses a value that is not a boolean', async () => {
      await expect(configUnder(name, 'maybe')).rejects.toThrow(name);
    });
  });
});

describe('auditRetentionDays (ADR 0094)', () => {
  it('defaults to 90 days and takes the CLI string form', () => {
    expect(configWith({}).auditRetentionDays).toBe(90);
    expect(configWith({ auditRetentionDays: '30' }).auditRetentionDays).toBe(30);
  });

  it.each([['0'], ['-1'], ['1.5'], ['3651'], ['ninety']])('refuses %j, naming the key', (value) => {
    expect(() => configWith({ auditRetentionDays: value })).toThrow(/auditRetentionDays/);
  });
});
