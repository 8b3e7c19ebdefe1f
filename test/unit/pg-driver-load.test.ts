import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `loadPg` in a fresh Node process (what a Lambda's cold start does): pg's runtime check must not
 * load undici (fetch), which costs 15–19 ms of every cold start that reaches PostGIS on Node 20.
 * Node's own `process.moduleLoadList` names every internal module it loaded.
 */
function loadInFreshNode(before = ''): { undici: boolean; navigator: string; client: string } {
  const script = `${before}
import { loadPg } from '#datasources/pg-driver.ts';
const pg = await loadPg();
console.log(JSON.stringify({
  undici: process.moduleLoadList.some((m) => m.includes('undici')),
  navigator: typeof globalThis.navigator,
  client: typeof pg.Client,
}));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: process.cwd(),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(out.trim().split('\n').pop() ?? '{}');
}

describe('loadPg in a fresh process', () => {
  it('loads pg without loading undici, and leaves no navigator behind', () => {
    expect(loadInFreshNode()).toEqual({ undici: false, navigator: 'undefined', client: 'function' });
  });

  it('leaves a navigator that was there alone', () => {
    const before = "globalThis.navigator = { userAgent: 'test' };";
    expect(loadInFreshNode(before)).toEqual({ undici: false, navigator: 'object', client: 'function' });
  });
});
