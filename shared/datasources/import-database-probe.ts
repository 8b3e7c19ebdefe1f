import { importConfig } from '#config/env.ts';
import type { DependencyProbe } from '#domain/health.ts';
import { onConnection } from './imports/database-connection.ts';
import { withLogin } from './imports/logins.ts';

/**
 * The import database's readiness probe: a login and `SELECT 1` as the loader (ADR 0131), on a
 * connection of its own rather than an ImportDatabase session, so the readiness function's bundle
 * carries none of the import's staging, finalising and publishing code (ADR 0153).
 */
export class ImportDatabaseProbe implements DependencyProbe {
  ping(): Promise<void> {
    return withLogin((connection) =>
      onConnection(
        connection,
        async (client) => {
          await client.query('SELECT 1');
        },
        // A login of its own each time: a kept connection would not show a login refused since.
        { fresh: true },
      ),
    );
  }
}

/** The probe, or undefined when the stage configures no import database. */
export function importDatabaseProbe(): DependencyProbe | undefined {
  return importConfig().database ? new ImportDatabaseProbe() : undefined;
}
