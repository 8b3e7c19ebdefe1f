import { bootstrapAdminsOf, reconcileBootstrapAdmins } from '#domain/bootstrap-admins.ts';
import { makeCustomResourceHandler } from '#entry/custom-resource.ts';
import { claimMappingRepository, roleRepository } from '#wiring/repositories.ts';

/** One per stack: the resource never changes identity, so an Update is never a replacement. */
const PHYSICAL_ID = 'geoplane-bootstrap-admins';

/**
 * The `bootstrapAdmins` custom resource (ADR 0089): Create/Update make the listed claims global
 * super_admin mappings and remove the ones it made that are no longer listed; Delete removes all it made.
 */
export const handler = makeCustomResourceHandler(async (event) => {
  const admins =
    event.RequestType === 'Delete' ? [] : bootstrapAdminsOf(event.ResourceProperties.Admins ?? []);
  const outcome = await reconcileBootstrapAdmins(
    { mappings: claimMappingRepository(), roles: roleRepository() },
    { admins },
  );
  return {
    physicalResourceId: PHYSICAL_ID,
    data: {
      Created: outcome.created.length,
      Existing: outcome.existing.length,
      Removed: outcome.removed.length,
    },
  };
});
