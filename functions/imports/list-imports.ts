import { listImports as operation } from '#api/operations/imports.ts';
import { presentImport } from '#domain/imports.ts';
import { ok } from '#http/responses.ts';
import { makeHandler } from '#wiring/handler.ts';
import { importRepository } from '#wiring/imports.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await importRepository().list(workspace.id, query.status, query.limit, query.cursor);
  return ok({
    imports: page.items.map((job) => presentImport(job)),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
});
