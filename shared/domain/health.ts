import { UnavailableError } from './errors.ts';

/** Port: one cheap round trip to a dependency; throws when it can't be reached. */
export interface DependencyProbe {
  ping(): Promise<void>;
}

/** What readiness checks: the catalog store, and the import database where one is configured. */
export interface ReadinessDeps {
  catalog: DependencyProbe;
  /** Absent when the stage configures no import database (imports are then off). */
  importDatabase?: DependencyProbe;
  /** How long one probe may take before it counts as unreachable. */
  timeoutMs: number;
}

/** The readiness answer: every check by name, `ok` or `not_configured`; nothing else (no hosts, versions). */
export interface Readiness {
  status: 'ready';
  checks: { catalog: 'ok'; import_database: 'ok' | 'not_configured' };
}

/** Liveness: the process answers. It reads nothing, so it never fails while the function runs. */
export function liveness(): { status: 'ok' } {
  return { status: 'ok' };
}

function withinTime(probe: DependencyProbe, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([probe.ping(), late]).finally(() => clearTimeout(timer));
}

/**
 * Readiness: both probes run at once, each within the time limit. Any failure is one uniform
 * UnavailableError (503) that says nothing about which dependency failed or why; the causes travel
 * as its `cause`, which is logged and never answered (ADR 0090, 0131).
 */
export async function readiness(deps: ReadinessDeps): Promise<Readiness> {
  const [catalog, importDatabase] = await Promise.allSettled([
    withinTime(deps.catalog, deps.timeoutMs),
    deps.importDatabase ? withinTime(deps.importDatabase, deps.timeoutMs) : Promise.resolve(),
  ]);
  const failures = [
    ...(catalog.status === 'rejected' ? [{ dependency: 'catalog', error: catalog.reason }] : []),
    ...(importDatabase.status === 'rejected'
      ? [{ dependency: 'import_database', error: importDatabase.reason }]
      : []),
  ];
  if (failures.length > 0) {
    throw new UnavailableError(
      'not_ready',
      'The server is not ready to serve requests; try again later.',
      undefined,
      {
        cause: new Error(
          `unreachable: ${failures.map((f) => `${f.dependency} (${f.error instanceof Error ? f.error.message : String(f.error)})`).join('; ')}`,
        ),
      },
    );
  }
  return {
    status: 'ready',
    checks: { catalog: 'ok', import_database: deps.importDatabase ? 'ok' : 'not_configured' },
  };
}
