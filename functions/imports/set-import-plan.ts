import { setImportPlan as operation } from '#api/operations/imports.ts';
import { setImportPlan } from '#domain/import-planning.ts';
import { presentImport } from '#domain/imports.ts';
import { makeChangeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';
import { importLimits, importStarter } from '#wiring/imports.ts';
import { importRepository, layerRepository, serviceRepository } from '#wiring/repositories.ts';

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
