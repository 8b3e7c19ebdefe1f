/*
 * The ports of mosaic harvest jobs (ADR 0136), built once per process on first use: the routes
 * need the job repository and the starter; the workflow step also the raster sources.
 */
import type { HarvestJobRepository, HarvestStarter, HarvestStepDeps } from '#domain/mosaic-harvest-jobs.ts';
import { DynamoHarvestJobRepository } from '#store/mosaic-harvest-jobs-repository.ts';
import { rasterSources } from './rasters.ts';
import { mosaicRepository, serviceRepository } from './repositories.ts';
import { workflowStarter } from './workflows.ts';

let repo: HarvestJobRepository | undefined;

/** The harvest job repository. */
export function harvestJobRepository(): HarvestJobRepository {
  repo ??= new DynamoHarvestJobRepository();
  return repo;
}

/** Starts the harvest workflow (Step Functions, or the local runner). */
export function harvestStarter(): HarvestStarter {
  return workflowStarter();
}

/**
 * What the harvest step needs: jobs, the mosaic, the service as it is now, and the raster sources.
 * Imported statically: a dynamic `import()` of a module makes esbuild wrap it and everything it
 * imports in a lazy initialiser it can't tree-shake, which put every repository into the bundles
 * of the four harvest job routes (ADR 0153).
 */
export function harvestStepDeps(): HarvestStepDeps {
  const services = serviceRepository();
  return {
    jobs: harvestJobRepository(),
    mosaics: mosaicRepository(),
    sources: rasterSources,
    service: (workspaceId, serviceId) => services.findById(workspaceId, serviceId),
  };
}
