import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/**
 * The local host's last resort (ADR 0106), in a process of its own: an error no path caught —
 * a rejection nobody awaits, an exception thrown from a timer — is logged and the process goes on.
 */
describe("the local host's last resort", () => {
  it('logs a stray rejection and a stray exception and keeps the process running', async () => {
    const script = `
      const { keepServingOnUncaughtErrors } = await import('./infra/local/server.ts');
      keepServingOnUncaughtErrors();
      Promise.reject(new Error('a rejection nobody awaits'));
      setTimeout(() => { throw new Error('an exception nobody catches'); }, 10);
      setTimeout(() => { console.log('still serving'); }, 300);
    `;
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', script],
      { cwd: root, env: { ...process.env, POWERTOOLS_SERVICE_NAME: 'geoplane-local' }, timeout: 60_000 },
    );
    // Powertools writes errors to stderr.
    const lines = `${stdout}\n${stderr}`.split('\n').filter((l) => l.startsWith('{'));
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.last_resort === true);
    expect(logged.map((l) => [l.level, l.error?.message])).toEqual([
      ['ERROR', 'a rejection nobody awaits'],
      ['ERROR', 'an exception nobody catches'],
    ]);
    expect(stdout).toMatch(/^still serving$/m);
  }, 90_000);
});
