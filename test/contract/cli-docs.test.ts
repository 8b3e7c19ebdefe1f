import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.ts';

/**
 * docs/cli.md documents the CLI as built (cli/program.ts): every command has its row in the
 * Commands table with each of its options, and every row names a command that exists.
 */

const root = resolve(import.meta.dirname, '../..');
const docs = readFileSync(join(root, 'docs/cli.md'), 'utf8');

/** Every command that runs an action, as `geoplane imports list`, with its long options. */
function leaves(command: Command, prefix: string[] = []): { path: string; options: string[] }[] {
  const path = [...prefix, command.name()];
  if (command.commands.length > 0) return command.commands.flatMap((sub) => leaves(sub, path));
  const options = command.options.map((o) => o.long).filter((o): o is string => o !== undefined);
  return [{ path: path.join(' '), options }];
}

/** The Commands table's rows, by the command they start with. */
function rows(): Map<string, string> {
  const table = new Map<string, string>();
  for (const line of docs.split('\n')) {
    const found = /^\| `(geoplane(?: [a-z][a-z-]*)+)/.exec(line);
    if (found?.[1]) table.set(found[1], line);
  }
  return table;
}

describe('docs/cli.md documents every command of the CLI', () => {
  const commands = leaves(buildProgram());
  const table = rows();

  it('finds the commands and the table', () => {
    expect(commands.map((c) => c.path)).toEqual(
      expect.arrayContaining(['geoplane import', 'geoplane imports retry', 'geoplane layers list']),
    );
    expect(table.size).toBeGreaterThanOrEqual(commands.length);
  });

  it.each(commands.map((c) => [c.path, c.options] as const))(
    '%s has a row naming each of its options',
    (path, options) => {
      const row = table.get(path);
      expect(row, `no row for ${path}`).toBeDefined();
      // --url and --api-key are described once, under "Credentials and TLS"; polling under "Polling".
      for (const option of options.filter(
        (o) => !['--url', '--api-key', '--interval', '--timeout', '--endpoint', '--table'].includes(o),
      ))
        expect(row, `${path}: ${option}`).toContain(option);
      for (const option of options) expect(docs, `${path}: ${option}`).toContain(option);
    },
  );

  it('every row names a command that exists', () => {
    const known = new Set(commands.map((c) => c.path));
    for (const path of table.keys()) expect(known, path).toContain(path);
  });

  it('documents the exit codes', () => {
    for (const code of ['| 0 |', '| 1 |', '| 2 |', '| 3 |']) expect(docs).toContain(code);
  });
});
