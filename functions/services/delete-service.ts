import { locationOf } from '../../shared/api/operation.ts';
import { getDeletionOperation } from '../../shared/api/operations/deletions.ts';
import { deleteService as operation } from '../../shared/api/operations/services.ts';
import { requestServiceDeletion } from '../../shared/domain/deletion-requests.ts';
import { presentDeletion } from '../../shared/domain/deletions.ts';
import { accepted, noContent } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';
import { deletionRepository } from '../../shared/wiring/repositories.ts';
import { workflowStarter } from '../../shared/wiring/workflows.ts';

export const handler = makeChangeHandler(
  operation,
  async ({ workspace, service, query, principal, ifMatch }) => {
    const outcome = await requestServiceDeletion(
      { deletions: deletionRepository(), starter: workflowStarter(), imports: importRepository() },
      { workspace, service, recurse: query.recurse ?? false, principalId: principal.id, ifMatch },
    );
    if ('deleted' in outcome) return noContent();
    return accepted(
      presentDeletion(outcome.operation, outcome.plan),
      locationOf(getDeletionOperation, { id: outcome.operation.id }),
    );
  },
);
