import { getImportHistory as operation } from '../../shared/api/operations/imports.ts';
import { importHistory, presentEvent } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, params, query }) => {
  const page = await importHistory(
    { repo: importRepository() },
    { workspaceId: workspace.id, import: params.import, limit: query.limit, cursor: query.cursor },
  );
  return ok({
    events: page.items.map(presentEvent),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
});
