import { setImportPlan as operation } from '../../shared/api/operations/imports.ts';
import { presentImport, setImportPlan } from '../../shared/domain/imports.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeChangeHandler } from '../../shared/wiring/handler.ts';
import { importLimits, importRepository, importStarter } from '../../shared/wiring/imports.ts';
import { layerRepository, serviceRepository } from '../../shared/wiring/repositories.ts';

export const handler = makeChangeHandler(operation, async ({ workspace, params, body, ifMatch }) => {
  const repo = importRepository();
  const names = { layers: layerRepository(), services: serviceRepository() };
  return ok(
    presentImport(
      await setImportPlan(
        { repo, starter: importStarter(), limits: importLimits(), names, targets: { ...names, repo } },
        { workspaceId: workspace.id, import: params.import, body, ifMatch },
      ),
    ),
  );
});
