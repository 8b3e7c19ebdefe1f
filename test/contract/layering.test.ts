import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The layering of ADR 0079, checked by `npm run lint` with dependency-cruiser: here it must pass on
// the real tree and fail (non-zero exit, each rule named) on a fixture with upward imports. Two
// runs, as in the lint script: the TypeScript rooms, and the console's TSX with its own parser.
const root = join(import.meta.dirname, '../..');
const bin = join(root, 'node_modules/.bin/depcruise');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { lint: string } };

/** The `depcruise` runs of `npm run lint`: their folders and configuration, as the script names them. */
const runs = [...pkg.scripts.lint.matchAll(/depcruise ([^&]+?) --config (\S+)/g)].map((m) => ({
  dirs: (m[1] as string).split(' '),
  config: join(root, m[2] as string),
}));

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

function depcruise(cwd: string, run: (typeof runs)[number], ...args: string[]) {
  return spawnSync(bin, [...run.dirs, '--config', run.config, ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The violations (json reporter) and the exit status of each command `npm run lint` runs. */
function cruise(cwd: string): { status: number | null; violations: Violation[]; modules: number }[] {
  return runs.map((run) => {
    const result = JSON.parse(depcruise(cwd, run, '--output-type', 'json').stdout) as {
      summary: { violations: Violation[]; totalCruised: number };
    };
    return {
      status: depcruise(cwd, run).status,
      violations: result.summary.violations,
      modules: result.summary.totalCruised,
    };
  });
}

describe('layering (dependency-cruiser)', () => {
  it('runs over every room: shared, functions, infra, cli, bench and the console', () => {
    expect(runs.flatMap((r) => r.dirs).sort()).toEqual(
      ['bench', 'cli', 'console/src', 'functions', 'infra', 'shared'].sort(),
    );
  });

  it('reports every upward import, the cycle and the AWS SDK in the domain of the fixture, and fails', () => {
    const results = cruise(join(root, 'test/contract/fixtures/layering'));
    for (const { status } of results) expect(status).not.toBe(0);
    const found = results.flatMap(({ violations }) =>
      violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'domain-is-pure: shared/domain/orders.ts → shared/store/orders-table.ts',
        'auth-not-to-http: shared/auth/check.ts → shared/http/errors.ts',
        'functions-not-to-adapters: functions/orders/get-order.ts → shared/store/orders-table.ts',
        'no-circular: shared/domain/ring-a.ts → shared/domain/ring-b.ts',
        'lambda-code-stays-inside: shared/api/writer.ts → client/generate.ts',
        'cli-through-the-client: cli/orders.ts → shared/store/orders-table.ts',
        'product-not-to-tools: infra/constructs/orders-api.ts → bench/seed.ts',
        'nothing-imports-the-local-host: infra/constructs/orders-api.ts → infra/local/host.ts',
        'cdk-reads-definitions: infra/constructs/orders-api.ts → shared/wiring/ports.ts',
        'console-through-the-client: console/src/page.tsx → shared/domain/orders.ts',
        'rooms-by-name: functions/orders/get-order.ts → shared/store/orders-table.ts',
        'client-by-name: cli/orders.ts → client/generate.ts',
        'client-by-name: console/src/page.tsx → client/generate.ts',
        'console-rooms-by-name: console/src/pages/orders.tsx → console/src/components/order-list.tsx',
        'console-rooms-by-name: console/src/pages/orders.tsx → client/generate.ts',
        'log-at-the-bottom: shared/telemetry/metrics.ts → shared/store/orders-table.ts',
        'functions-not-to-adapters: shared/entry/handler.ts → shared/store/orders-table.ts',
        'shared-not-to-functions: shared/http/stack.ts → shared/entry/handler.ts',
        'only-functions-use-wiring: shared/http/stack.ts → shared/wiring/ports.ts',
        'edge-not-to-adapters: shared/http/stack.ts → shared/store/orders-table.ts',
        'api-not-up: shared/api/routes.ts → shared/http/errors.ts',
        'adapters-only-down: shared/platform/bus.ts → shared/http/errors.ts',
        'config-at-the-bottom: shared/config/env.ts → shared/domain/orders.ts',
        'not-to-unresolvable: shared/config/env.ts → ./missing.ts',
      ]),
    );
    expect(
      found.some((v) =>
        /^domain-no-platform-packages: shared\/domain\/orders\.ts → .*@aws-sdk\/client-sfn/.test(v),
      ),
    ).toBe(true);
  }, 60_000);

  it('finds no violation in the real tree (and cruises all of it)', () => {
    const results = cruise(root);
    for (const { status, violations, modules } of results) {
      expect(violations).toEqual([]);
      expect(status).toBe(0);
      expect(modules).toBeGreaterThan(60);
    }
    expect(results.reduce((n, r) => n + r.modules, 0)).toBeGreaterThan(550);
  }, 120_000);
});
