import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Runs the test files longest first, by the durations of a full run (`test-durations.json`, from
 * a CI run's JSON report: `npm run test:durations -- <report>`), so the two workers end together.
 * Vitest's own order needs its result cache, which a fresh clone has not: it ran larger files
 * first, and the 8-minute harvest suite (a small file) last, alone. A file the table doesn't know
 * counts as {@link UNKNOWN_SECONDS}.
 */
const UNKNOWN_SECONDS = 30;

const durations = JSON.parse(
  readFileSync(new URL('./test-durations.json', import.meta.url), 'utf8'),
) as Record<string, number>;

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (f: TestSpecification) =>
      durations[relative(this.ctx.config.root, f.moduleId).split('\\').join('/')] ?? UNKNOWN_SECONDS;
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}
