import { locationOf } from '../../shared/api/operation.ts';
import { getImport, createImport as operation } from '../../shared/api/operations/imports.ts';
import { createImport, presentImport } from '../../shared/domain/imports.ts';
import { created } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import {
  importLimits,
  importRepository,
  importStarter,
  importUploads,
  importUriPolicy,
} from '../../shared/wiring/imports.ts';
import { serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, body, principal }) => {
  const { job, upload } = await createImport(
    {
      repo: importRepository(),
      services: serviceRepository(),
      uploads: importUploads(),
      uris: importUriPolicy(),
      starter: importStarter(),
      limits: importLimits(),
    },
    workspace,
    body,
    principal.id,
  );
  return created(
    presentImport(job, upload),
    locationOf(getImport, { workspace: workspace.id, import: job.id }),
  );
});
