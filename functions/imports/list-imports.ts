import { listImports as operation } from '#api/operations/imports.ts';
import { listImports, presentImport } from '#domain/imports.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { importRepository } from '#wiring/repositories.ts';

export const handler = makeHandler(operation, async ({ workspace, query }) => {
  const page = await listImports({ repo: importRepository() }, { workspaceId: workspace.id, ...query });
  return ok({
    imports: page.items.map((job) => presentImport(job)),
    ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
  });
});
