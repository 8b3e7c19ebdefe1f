import { putImportPlan as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, putImportPlan, requireImport } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importLimits, importRepository, importStarter } from '../../shared/wiring/imports.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) => {
  const repo = importRepository();
  const job = await requireImport(repo, workspace.id, params.import);
  return ok(
    presentImport(
      await putImportPlan({ repo, starter: importStarter(), limits: importLimits() }, job, body, ifMatch),
    ),
  );
});
