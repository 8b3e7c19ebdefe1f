import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { processRuns } from '#infra/local/processes.ts';

// Whether the process a lock or a build dir is named after still runs (infra/local/processes.ts).
describe('processRuns', () => {
  it('is true for a running process, this one and init (pid 1), and false for one that ended', () => {
    expect(processRuns(process.pid)).toBe(true);
    expect(processRuns(1)).toBe(true);
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    expect(ended).toBeGreaterThan(0);
    expect(processRuns(ended as number)).toBe(false);
  });
});
