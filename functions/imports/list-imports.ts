import { listImports as operation } from '../../shared/api/operations/imports.ts';
import { presentImport } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';
import { importRepository } from '../../shared/wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await importRepository().list(workspace.id, query.status, query.limit, query.cursor);
  return ok({
    imports: page.items.map((job) => presentImport(job)),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
});
