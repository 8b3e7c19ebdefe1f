import { describe, expect, it } from 'vitest';
import { UnavailableError } from '#domain/errors.ts';
import { type DependencyProbe, liveness, readiness } from '#domain/health.ts';

const up: DependencyProbe = { ping: async () => {} };
const down = (message: string): DependencyProbe => ({
  ping: async () => {
    throw new Error(message);
  },
});
const hanging: DependencyProbe = { ping: () => new Promise(() => {}) };

describe('liveness and readiness (ADR 0131)', () => {
  it('liveness is always ok', () => {
    expect(liveness()).toEqual({ status: 'ok' });
  });

  it('is ready when both dependencies answer', async () => {
    await expect(readiness({ catalog: up, importDatabase: up, timeoutMs: 100 })).resolves.toEqual({
      status: 'ready',
      checks: { catalog: 'ok', import_database: 'ok' },
    });
  });

  it('reports an import database that is not configured without failing', async () => {
    await expect(readiness({ catalog: up, timeoutMs: 100 })).resolves.toEqual({
      status: 'ready',
      checks: { catalog: 'ok', import_database: 'not_configured' },
    });
  });

  it.each([
    ['the catalog fails', { catalog: down('ECONNREFUSED 10.1.2.3:8000'), importDatabase: up }, /catalog/],
    [
      'the import database fails',
      { catalog: up, importDatabase: down('password for user x') },
      /import_database/,
    ],
    ['a probe hangs', { catalog: hanging, importDatabase: up }, /catalog \(no answer within 50 ms\)/],
  ])('throws one uniform not_ready when %s, the cause only in `cause`', async (_what, deps, cause) => {
    const error = await readiness({ ...deps, timeoutMs: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    const e = error as UnavailableError;
    expect(e.reason).toBe('not_ready');
    expect(e.message).toBe('The server is not ready to serve requests; try again later.');
    expect(e.extra).toBeUndefined();
    expect(String((e.cause as Error).message)).toMatch(cause);
  });
});
