/**
 * Writes `test/support/test-durations.json` (the order the test sequencer runs files in) from a
 * vitest JSON report: `npm run test:durations -- <vitest.json>` (`.ci/run` keeps its run's report at
 * `$GEOPLANE_CI_REPORT` when that is set).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

const report = process.argv[2];
if (!report) {
  console.error('usage: npm run test:durations -- <vitest JSON report>');
  process.exit(2);
}
const root = resolve(new URL('../..', import.meta.url).pathname);
const { testResults } = JSON.parse(readFileSync(report, 'utf8')) as {
  testResults: { name: string; startTime: number; endTime: number }[];
};
const rows = testResults
  .map(
    (t) =>
      [relative(root, t.name).split('\\').join('/'), Math.round((t.endTime - t.startTime) / 1000)] as const,
  )
  .map(([name, s]) => [name.replace(/^.*?(test\/)/, '$1'), s] as const)
  .sort((a, b) => b[1] - a[1]);
writeFileSync(
  new URL('./test-durations.json', import.meta.url),
  `${JSON.stringify(Object.fromEntries(rows), null, 2)}\n`,
);
console.log(`${rows.length} files, ${rows.reduce((n, r) => n + r[1], 0)} s in all`);
