import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The layering of ADR 0079, checked by `npm run lint` with dependency-cruiser: here it must pass on
// the real tree and fail (non-zero exit, each rule named) on a fixture with upward imports.
const root = join(import.meta.dirname, '../..');
const config = join(root, '.dependency-cruiser.cjs');
const bin = join(root, 'node_modules/.bin/depcruise');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

function depcruise(cwd: string, ...args: string[]) {
  return spawnSync(bin, ['shared', 'functions', '--config', config, ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The violations (json reporter) and the exit status of the command `npm run lint` runs. */
function cruise(cwd: string): { status: number | null; violations: Violation[]; modules: number } {
  const result = JSON.parse(depcruise(cwd, '--output-type', 'json').stdout) as {
    summary: { violations: Violation[]; totalCruised: number };
  };
  return {
    status: depcruise(cwd).status,
    violations: result.summary.violations,
    modules: result.summary.totalCruised,
  };
}

describe('layering (dependency-cruiser)', () => {
  it('reports every upward import, the cycle and the AWS SDK in the domain of the fixture, and fails', () => {
    const { status, violations } = cruise(join(root, 'test/contract/fixtures/layering'));
    expect(status).not.toBe(0);
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'domain-is-pure: shared/domain/orders.ts → shared/store/orders-table.ts',
        'auth-not-to-http: shared/auth/check.ts → shared/http/errors.ts',
        'functions-not-to-adapters: functions/orders/get-order.ts → shared/store/orders-table.ts',
        'no-circular: shared/domain/ring-a.ts → shared/domain/ring-b.ts',
      ]),
    );
    expect(
      found.some((v) =>
        /^domain-no-platform-packages: shared\/domain\/orders\.ts → .*@aws-sdk\/client-sfn/.test(v),
      ),
    ).toBe(true);
  }, 60_000);

  it('finds no violation in the real tree (and cruises all of it)', () => {
    const { status, violations, modules } = cruise(root);
    expect(violations).toEqual([]);
    expect(status).toBe(0);
    expect(modules).toBeGreaterThan(150);
  }, 60_000);
});
