import { locationOf } from '../../shared/api/operation.ts';
import { getImport, publishImport as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, publishImport } from '../../shared/domain/imports.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importRepository, importStarter } from '../../shared/wiring/imports.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params }) => {
  const next = await publishImport(
    { repo: importRepository(), starter: importStarter() },
    { workspaceId: workspace.id, import: params.import },
  );
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: next.id }));
});
