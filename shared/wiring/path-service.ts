import { type KnownService, requireService, type Service } from '../domain/services.ts';
import { serviceRepository } from './repositories.ts';

/** What a read of a `{service}` route knows: the resolved workspace, the parameter, the carried service. */
export interface ServiceRouteRequest {
  workspace: { id: string };
  params: { service: string };
  knownService?: KnownService;
}

/**
 * The active service a read route names, taking the one the authorizer carried when it read it
 * for this very parameter and workspace (ADR 0099), else reading it; 404 `service_not_found`
 * otherwise. For reads only: the carried service's password is withheld, so a handler that
 * connects to the source or changes the service calls `requireService` itself.
 */
export function pathService(request: ServiceRouteRequest): Promise<Service> {
  return requireService(
    serviceRepository(),
    request.workspace.id,
    request.params.service,
    false,
    request.knownService,
  );
}
