import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_REASONS, IMPORT_FAILURE_REASONS } from '#domain/error-reasons.ts';

const root = join(import.meta.dirname, '..', '..');
const LIST = join('shared', 'domain', 'error-reasons.ts');

/** The product's TypeScript (shared/ and functions/), the list itself left out. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
    .filter((file) => relative(root, file) !== LIST);
}

describe('error reasons: one typed list (issue #28)', () => {
  it('are snake_case and listed once', () => {
    expect(ERROR_REASONS.filter((r) => !/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(r))).toEqual([]);
    expect(new Set(ERROR_REASONS).size).toBe(ERROR_REASONS.length);
  });

  it('lists none that no product code gives (the compiler checks the other way round)', () => {
    const text = [...sources('shared'), ...sources('functions')]
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    expect(ERROR_REASONS.filter((r) => !text.includes(`'${r}'`))).toEqual([]);
  });
});

describe('import failure reasons: one typed list beside it (issue #28)', () => {
  it('are snake_case, listed once, and not in ERROR_REASONS too', () => {
    expect(IMPORT_FAILURE_REASONS.filter((r) => !/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(r))).toEqual([]);
    expect(new Set(IMPORT_FAILURE_REASONS).size).toBe(IMPORT_FAILURE_REASONS.length);
    const errorReasons: readonly string[] = ERROR_REASONS;
    expect(IMPORT_FAILURE_REASONS.filter((r) => errorReasons.includes(r))).toEqual([]);
  });

  it('lists none that no product code gives (the compiler checks the other way round)', () => {
    const text = [...sources('shared'), ...sources('functions')]
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    expect(IMPORT_FAILURE_REASONS.filter((r) => !text.includes(`'${r}'`))).toEqual([]);
  });
});
