import { getImportHistory as operation } from '#api/operations/imports.ts';
import { importHistory, presentEvent } from '#domain/imports.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { importRepository } from '#wiring/repositories.ts';

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
