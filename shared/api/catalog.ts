import type { ManagementCatalog } from '../domain/roles.ts';
import { routes } from './routes.ts';

let catalog: ManagementCatalog | undefined;

/** Every operation of this API a policy may name, with the action it uses (its permission class). */
export function managementCatalog(): ManagementCatalog {
  catalog ??= new Map(
    routes
      .filter((r) => r.permission !== 'public' && r.permission !== 'authenticated')
      .map((r) => [r.operationId, r.permission as 'read' | 'write' | 'manage' | 'global']),
  );
  return catalog;
}
