import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // A full run on two shared cores (one DynamoDB Local for every file, harvest and import chaos
    // suites beside the rest) can stretch a test several times over its time alone: tests that
    // took a few seconds alone timed out at 30 s there. A timeout is not an assertion.
    testTimeout: 90_000,
    // A poll waits for something to happen (a page to show a change, an operation to finish): on
    // two shared cores during a full run that can take well over vitest's default second.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 180_000,
    // Black-box tests share one local host; files run in parallel workers against it.
    fileParallelism: true,
    maxWorkers: 2,
    // Longest files first, from a full run's durations, so both workers finish together (#27).
    sequence: { sequencer: LongestFirstSequencer },
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // The integration tests connect to databases and fake servers they start on loopback; the
      // local hosts under test get their own, narrower list (test/support/host-process.ts; ADR 0074).
      GEOPLANE_ALLOWED_DATABASE_HOSTS: '127.0.0.0/8,::1',
    },
  },
});
