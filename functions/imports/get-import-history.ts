import { getImportHistory as operation } from '../../shared/api/operations/imports.ts';
import { presentEvent, requireImport } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, params, query }) => {
  const repo = importRepository();
  const job = await requireImport(repo, workspace.id, params.import);
  const page = await repo.history(workspace.id, job.id, query.limit, query.cursor);
  return ok({
    events: page.items.map(presentEvent),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
});
