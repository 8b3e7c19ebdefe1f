import { importConfig } from '#config/env.ts';
import type { DependencyProbe } from '#domain/health.ts';
import { withDatabase } from './imports/logins.ts';

/** The import database's readiness probe: a login and `SELECT 1` as the loader (ADR 0131). */
export class ImportDatabaseProbe implements DependencyProbe {
  ping(): Promise<void> {
    return withDatabase((db) =>
      db.session(async (session) => {
        await session.query('SELECT 1');
      }),
    );
  }
}

/** The probe, or undefined when the stage configures no import database. */
export function importDatabaseProbe(): DependencyProbe | undefined {
  return importConfig().database ? new ImportDatabaseProbe() : undefined;
}
