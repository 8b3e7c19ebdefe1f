import type { ManagementCatalog } from '#domain/roles.ts';
import permissions from './operation-permissions.json' with { type: 'json' };

let catalog: ManagementCatalog | undefined;

/**
 * Every operation of this API a policy may name, with the action it uses (its permission class).
 * Read from the generated `operation-permissions.json` (drift-checked against the route table),
 * so a handler that needs it doesn't bundle every operation's schemas.
 */
export function managementCatalog(): ManagementCatalog {
  catalog ??= new Map(
    Object.entries(permissions as Record<string, string>)
      .filter(([, p]) => p !== 'public' && p !== 'authenticated')
      .map(([id, p]) => [id, p as 'read' | 'write' | 'manage' | 'global']),
  );
  return catalog;
}
