/**
 * The names an import publishes under, checked against its workspace before a row is loaded and
 * again before the catalog is written (ADR 0126): every planned public id against the public-id
 * namespace (layers and groups), the service name against the service names. A clash names the
 * taken name and proposes a free one (`points` → `points_2`); auto_publish takes the proposal.
 */
import type { NameClash } from './import-model.ts';
import { freeName, publicIdsClash } from './import-plans.ts';
import type { ImportPlan } from './import-sources.ts';
import { mapLimited } from './jobs.ts';
import type { LayerRepository } from './layers.ts';
import type { ServiceRepository } from './services.ts';

/** Name markers read at once at most (a plan may name as many layers as its file holds). */
const NAME_LOOKUPS = 16;

/** The lookups the checks read (strongly consistent gets of the name markers). */
export interface NameLookups {
  layers: Pick<LayerRepository, 'findPublicId'>;
  services: Pick<ServiceRepository, 'findByName'>;
}

/**
 * The names of `plan` and `serviceName` the workspace already uses, each with a free name
 * proposed. Names held by `ownServiceId` (the import's own service, on a resumed publish) are not
 * clashes. Proposals avoid every public id of the plan and each other.
 */
export async function findClashes(
  deps: NameLookups,
  workspaceId: string,
  plan: ImportPlan,
  serviceName: string | undefined,
  ownServiceId?: string,
): Promise<NameClash[]> {
  const clashes: NameClash[] = [];
  // A layer that replaces or appends to a layer keeps that layer's name (ADR 0127); a plan of
  // only such layers creates no service.
  const newLayers = plan.layers.filter((l) => !l.target);
  // The names are looked up together (one round of reads, not one per layer; at most
  // NAME_LOOKUPS at a time, whatever the file held); a free name is only searched for a taken one.
  const [service, markers] = await Promise.all([
    serviceName !== undefined && newLayers.length > 0
      ? deps.services.findByName(workspaceId, serviceName)
      : undefined,
    mapLimited(newLayers, NAME_LOOKUPS, (layer) => deps.layers.findPublicId(workspaceId, layer.public_id)),
  ]);
  if (serviceName !== undefined && service && service.id !== ownServiceId) {
    const proposed = await freeName(
      serviceName,
      async (n) => (await deps.services.findByName(workspaceId, n)) !== undefined,
    );
    clashes.push({ kind: 'service_name', name: serviceName, proposed });
  }
  const used = plan.layers.map((l) => l.public_id);
  for (const [i, layer] of newLayers.entries()) {
    const marker = markers[i];
    if (!marker || (ownServiceId !== undefined && marker.service_id === ownServiceId)) continue;
    const proposed = await freeName(
      layer.public_id,
      async (n) => (await deps.layers.findPublicId(workspaceId, n)) !== undefined,
      (n) => used.some((other) => publicIdsClash(n, other)),
    );
    used.push(proposed);
    clashes.push({ kind: 'public_id', name: layer.public_id, proposed, source_layer: layer.source_layer });
  }
  return clashes;
}

/** The plan and service name with every clash's proposal taken (auto_publish), the clashes marked so. */
export function withProposals(
  plan: ImportPlan,
  serviceName: string,
  clashes: NameClash[],
): { plan: ImportPlan; service_name: string; clashes: NameClash[] } {
  const ids = new Map(
    clashes.filter((c) => c.kind === 'public_id').map((c) => [c.source_layer ?? c.name, c.proposed]),
  );
  const service = clashes.find((c) => c.kind === 'service_name');
  return {
    plan: {
      layers: plan.layers.map((l) => {
        const proposed = ids.get(l.source_layer);
        return proposed ? { ...l, public_id: proposed } : l;
      }),
    },
    service_name: service?.proposed ?? serviceName,
    clashes: clashes.map((c) => ({ ...c, renamed: true })),
  };
}

/** What the clashes mean, as warnings (the history keeps them with the transition's event). */
export function clashWarnings(clashes: NameClash[]): string[] {
  return clashes.map((c) => {
    const what =
      c.kind === 'service_name'
        ? `The service name '${c.name}' is taken in this workspace`
        : `public_id '${c.name}'${c.source_layer ? ` (layer '${c.source_layer}')` : ''} is taken in this workspace`;
    return c.renamed
      ? `${what}: auto_publish publishes it as '${c.proposed}'.`
      : `${what}: PUT the plan with ${c.kind === 'service_name' ? 'service_name' : 'public_id'} '${c.proposed}' (free now) or another name.`;
  });
}
