/** Writing the benchmark's reports: the run's header line, and the file of a section run alone. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { root } from './bundles.ts';
import { loadAtStart, startedAt } from './run-plan.ts';
import { fixed } from './stats.ts';

/** The commit the run measured (`+ uncommitted changes` when the tree differs from it). */
export function gitDescription(): string {
  // For runs outside a git checkout (an exported tree), the caller may name the commit.
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const sha = git('rev-parse', '--short', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no');
    return dirty ? `${sha} + uncommitted changes` : sha;
  } catch {
    return 'not a git checkout';
  }
}

/** Load averages as the report shows them (`0.4 0.6 0.7`). */
export const loadText = (l: number[]) => l.map((n) => n.toFixed(1)).join(' ');

/**
 * The header line of a report: when, which commit, Node, the CPUs, the load average at the run's
 * start and now, and how long the run took (`took`: what the time went to, in parentheses).
 */
export function runLine(took?: string): string {
  return (
    `${new Date().toISOString()} · ${gitDescription()} · Node ${process.version} · ${cpus().length} × ` +
    `${cpus()[0]?.model.trim() ?? 'unknown CPU'} · load average ${loadText(loadAtStart)} at start, ${loadText(loadavg())} at end · ` +
    `run took ${fixed((Date.now() - startedAt) / 1000, 0)} s${took ? ` (${took})` : ''}`
  );
}

/** Writes a section's report run alone to `.bench/results-<name>.md` and prints it (`shown`: the file as printed). */
export function writeAloneReport(name: string, report: string, shown?: string): void {
  const file = join(root, '.bench', `results-${name}.md`);
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(file, report);
  process.stdout.write(`${report}\n(also written to ${shown ?? file})\n`);
}

/** The report of a section run alone: its title, the run's line, its verdict lines, then the section. */
export function aloneReport(title: string, verdicts: string[], section: string, took?: string): string {
  return [title, '', runLine(took), '', ...verdicts, '', section].join('\n');
}
