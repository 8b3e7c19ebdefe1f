import { locationOf } from '../../shared/api/operation.ts';
import { getDeletionOperation } from '../../shared/api/operations/deletions.ts';
import { deleteService as operation } from '../../shared/api/operations/services.ts';
import { deleteService, presentDeletion } from '../../shared/domain/deletions.ts';
import { refuseImportOwnedService } from '../../shared/domain/imports.ts';
import { accepted, noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(
  operation,
  async ({ workspace, service, query, principal, ifMatch }) => {
    if (service.status === 'active')
      await refuseImportOwnedService(importRepository(), workspace.id, service.id);
    const outcome = await deleteService(
      deletionRepository(),
      workflowStarter(),
      workspace,
      service,
      query.recurse ?? false,
      principal.id,
      new Date(),
      ifMatch,
    );
    if ('deleted' in outcome) return noContent();
    return accepted(
      presentDeletion(outcome.operation, outcome.plan),
      locationOf(getDeletionOperation, { id: outcome.operation.id }),
    );
  },
);
