import { locationOf } from '../../shared/api/operation.ts';
import { getImport, retryImport as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, requireImport, retryImport } from '../../shared/domain/imports.ts';
import { accepted } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importLimits, importRepository, importStarter } from '../../shared/wiring/imports.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params }) => {
  const repo = importRepository();
  const job = await requireImport(repo, workspace.id, params.import);
  const next = await retryImport({ repo, starter: importStarter(), limits: importLimits() }, job);
  return accepted(presentImport(next), locationOf(getImport, { workspace: workspace.id, import: job.id }));
});
