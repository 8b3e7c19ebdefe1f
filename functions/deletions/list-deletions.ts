import { listDeletions as operation } from '../../shared/api/operations/deletions.ts';
import { mayManageWorkspace } from '../../shared/auth/workspace-access.ts';
import { listVisibleDeletions } from '../../shared/domain/deletions.ts';
import { pageLimit, resolveWorkspace } from '../../shared/domain/workspaces.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';
import { deletionRepository, workspaceRepository } from '../../shared/store/repositories.ts';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const handler = makeHandler(operation, async ({ query, principal }) => {
  // A workspace named by id may be gone already (its own deletion); a name must resolve.
  // A caller with a role in exactly one workspace (a workspace API key) lists that one: the
  // filter then runs in DynamoDB instead of dropping other workspaces' operations page by page.
  const own = Object.keys(principal.roles);
  const named =
    query.workspace ?? (!principal.superAdmin && own.length === 1 && own[0] !== '*' ? own[0] : undefined);
  let workspaceId: string | undefined;
  if (named !== undefined) {
    workspaceId = uuid.test(named)
      ? named.toLowerCase()
      : ((await resolveWorkspace(workspaceRepository(), named))?.id ?? 'unknown');
  }
  const page = await listVisibleDeletions(
    deletionRepository(),
    { workspaceId, status: query.status },
    pageLimit(query.limit, 100),
    query.cursor,
    principal,
    (ws) => mayManageWorkspace(principal, ws, 'listDeletions'),
  );
  return ok(page);
});
