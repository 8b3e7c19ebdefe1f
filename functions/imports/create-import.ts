import { locationOf } from '#api/operation.ts';
import { getImport, createImport as operation } from '#api/operations/imports.ts';
import { createImport } from '#domain/import-creation.ts';
import { presentImport } from '#domain/imports.ts';
import { makeIdempotentHandler } from '#entry/handler.ts';
import { created } from '#http/responses.ts';
import { importUriPolicy } from '#wiring/import-uris.ts';
import { importLimits, importStarter, importUploads } from '#wiring/imports.ts';
import { importRepository, layerRepository, serviceRepository } from '#wiring/repositories.ts';

export const handler = makeIdempotentHandler(operation, async ({ workspace, body, principal }) => {
  const repo = importRepository();
  const services = serviceRepository();
  const { job, upload } = await createImport(
    {
      repo,
      services,
      uploads: importUploads(),
      uris: importUriPolicy(),
      starter: importStarter(),
      limits: importLimits(),
      targets: { layers: layerRepository(), services, repo },
    },
    { workspace, body, principalId: principal.id },
  );
  return created(
    presentImport(job, upload),
    locationOf(getImport, { workspace: workspace.id, import: job.id }),
  );
});
