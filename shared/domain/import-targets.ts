/**
 * Replace and append (ADR 0127): a plan layer may name an existing layer as its target instead of
 * becoming a new one. The layer keeps its id, public id, styles, groups, policies and URLs; only
 * its rows change. Only layers an import published can be targets (their table lives in the import
 * database, which the loader owns); the new rows' columns must be the target's, type for type —
 * checked here, when the plan is made, against the plan that created the layer, and again by the
 * import database when the rows go in.
 */
import { RuleViolationError } from './errors.ts';
import type { ImportJob } from './import-model.ts';
import { columnName, type LayerPlanInput, tableNameOf } from './import-plans.ts';
import type { Discovery, FieldType, LayerPlan, LayerTarget, SourceLayer } from './import-sources.ts';
import { mapLimited } from './jobs.ts';
import type { Layer, LayerRepository } from './layers.ts';
import type { ServiceRepository } from './services.ts';

/** What resolving a target reads. */
export interface TargetLookups {
  layers: Pick<LayerRepository, 'findPublicId' | 'find'>;
  services: Pick<ServiceRepository, 'list'>;
  /** The job that published a service (ImportRepository.findByService). */
  repo: { findByService(workspaceId: string, serviceId: string): Promise<ImportJob | undefined> };
}

/** A target as the import database takes it: the layer's table and how the rows go in. */
export interface TargetTable {
  /** The plan layer's position (names the previous generation's table). */
  index: number;
  /** The staged table of the plan layer (in the import's staging schema). */
  table: string;
  /** The layer's table, `import_<hex>.<table>`. */
  relation: string;
  mode: LayerTarget['mode'];
}

/** What a replace or an append did to one layer, as the import database reports it. */
export interface TargetOutcome {
  relation: string;
  mode: LayerTarget['mode'];
  /** Rows the layer holds now. */
  rows: number;
  /** Rows it held before. */
  previous_rows: number;
  /** Append: the fids the new rows got. */
  first_fid?: number;
  last_fid?: number;
}

const IMPORT_RELATION = /^(import_[0-9a-f]{32})\.([a-z_][a-z0-9_]{0,62})$/;

/** A target layer with what its columns are. */
export interface ResolvedTarget {
  layer: Layer;
  relation: string;
  /** The table's columns (besides fid and the geometry) and their types. */
  columns: Map<string, FieldType>;
  /** The geometry column; undefined when the table has none. */
  geometry_column?: string;
}

function refuse(where: string, message: string): RuleViolationError {
  return new RuleViolationError('import_target_invalid', `${where}: ${message}`);
}

/** The layer a target names: by public id, else by id. */
export async function findTargetLayer(
  deps: Pick<TargetLookups, 'layers' | 'services'>,
  workspaceId: string,
  ref: string,
): Promise<Layer | undefined> {
  const marker = await deps.layers.findPublicId(workspaceId, ref);
  if (marker?.kind === 'layer' && marker.service_id)
    return deps.layers.find(workspaceId, marker.service_id, marker.target_id);
  // An id: a layer's key holds its service, so each service is asked (plans are rare writes).
  let cursor: string | undefined;
  do {
    const page = await deps.services.list(workspaceId, 100, cursor);
    // A page's services are asked together, a few at a time.
    const found = (
      await mapLimited(page.items, TARGET_READS, (service) => deps.layers.find(workspaceId, service.id, ref))
    ).find((layer) => layer !== undefined);
    if (found) return found;
    cursor = page.nextCursor;
  } while (cursor);
  return undefined;
}

/** Services one target lookup asks at once. */
const TARGET_READS = 16;

/** Targets looked up at once (each may ask TARGET_READS services). */
const TARGET_LAYERS = 4;

/** The columns of an imported layer's table, from the plan of the import that created it. */
function columnsOf(owner: ImportJob, table: string): Omit<ResolvedTarget, 'layer' | 'relation'> | undefined {
  const layer = owner.plan?.layers.find((l) => !l.target && tableNameOf(l.public_id) === table);
  const source = owner.discovery?.layers.find((s) => s.name === layer?.source_layer);
  if (!layer || !source) return undefined;
  const columns = new Map<string, FieldType>();
  for (const field of layer.fields) {
    if (!field.include) continue;
    const found = source.fields.find((f) => f.name === field.source);
    columns.set(field.target, field.type ?? found?.type ?? 'text');
  }
  return {
    columns,
    ...(source.geometry_type ? { geometry_column: layer.geometry_column ?? 'geom' } : {}),
  };
}

/**
 * The layer `target.layer` names (its public id or id) with its columns; refused (422
 * `import_target_invalid`) when there is none, when it is a SQL view, or when no import published
 * it (a table of the operator's own database is never written).
 */
export async function resolveTarget(
  deps: TargetLookups,
  workspaceId: string,
  target: LayerTarget,
  where: string,
): Promise<ResolvedTarget> {
  const layer = await findTargetLayer(deps, workspaceId, target.layer);
  if (!layer) throw refuse(where, `the workspace has no layer '${target.layer}' to ${target.mode}.`);
  const match = IMPORT_RELATION.exec(layer.source_layer);
  const owner =
    layer.is_sql_view || !match ? undefined : await deps.repo.findByService(workspaceId, layer.service_id);
  const hex = owner?.id.replaceAll('-', '');
  const shape =
    owner?.status === 'published' && match && match[1] === `import_${hex}`
      ? columnsOf(owner, match[2] as string)
      : undefined;
  if (!shape) {
    throw refuse(
      where,
      `layer '${layer.public_id}' was not published by an import, so its data can't be replaced or appended to here (only imported layers can; a layer of your own database is changed there).`,
    );
  }
  return { layer, relation: layer.source_layer, ...shape };
}

/**
 * A plan layer that targets `resolved`, made whole and checked: its public id is the layer's (its
 * staged table is named after it), its geometry column the table's; without `fields`, every field
 * of the file whose column name the table has is mapped to it with the table's type (the others
 * are left out, and said so); with `fields`, each included field must name a column of the table
 * with the table's type. The file's layer must have a geometry exactly when the table has one.
 * Returns the layer and what was left out.
 */
export function targetLayerPlan(
  layer: LayerPlanInput & { target: LayerTarget },
  resolved: ResolvedTarget,
  source: SourceLayer | undefined,
  where: string,
): { layer: LayerPlan; notes: string[] } {
  const name = `layer '${resolved.layer.public_id}'`;
  if (!source) throw refuse(where, `the file has no layer '${layer.source_layer}'.`);
  if (Boolean(source.geometry_type) !== Boolean(resolved.geometry_column)) {
    throw refuse(
      where,
      resolved.geometry_column
        ? `the file's layer '${source.name}' has no geometry, but ${name} has.`
        : `the file's layer '${source.name}' has geometries, but ${name} has none.`,
    );
  }
  if (layer.public_id !== undefined && layer.public_id !== resolved.layer.public_id) {
    throw refuse(where, `a layer with a target keeps the public id of ${name}; leave public_id out.`);
  }
  if (layer.geometry_column !== undefined && layer.geometry_column !== resolved.geometry_column) {
    throw refuse(
      where,
      `geometry_column '${layer.geometry_column}' is not the one of ${name} ('${resolved.geometry_column}'); leave it out.`,
    );
  }
  const columns = [...resolved.columns].map(([c, t]) => `${c} (${t})`).join(', ') || 'none';
  const notes: string[] = [];
  let fields: LayerPlan['fields'];
  if (layer.fields) {
    fields = layer.fields;
    for (const [j, field] of fields.entries()) {
      if (!field.include) continue;
      const type = field.type ?? source.fields.find((f) => f.name === field.source)?.type;
      const wanted = resolved.columns.get(field.target);
      if (!wanted) {
        throw refuse(
          `${where}.fields[${j}]`,
          `${name} has no column '${field.target}'. Its columns: ${columns}. Map the field to one of them or leave it out (include: false).`,
        );
      }
      if (type !== wanted) {
        throw refuse(
          `${where}.fields[${j}]`,
          `column '${field.target}' of ${name} is ${wanted}, but field '${field.source}' is ${type}; set type: '${wanted}' or leave the field out.`,
        );
      }
    }
  } else {
    const used = new Set<string>();
    fields = source.fields.map((f) => {
      const target = columnName(f.name);
      const type = resolved.columns.get(target);
      const include = type !== undefined && !used.has(target);
      if (include) used.add(target);
      else notes.push(`Field '${f.name}' of '${source.name}' has no column in ${name}: left out.`);
      return { source: f.name, target, ...(type ? { type } : {}), include };
    });
  }
  const { fields: _given, ...rest } = layer;
  return {
    layer: {
      ...rest,
      public_id: resolved.layer.public_id,
      target: { layer: resolved.layer.id, mode: layer.target.mode },
      fields,
      ...(resolved.geometry_column ? { geometry_column: resolved.geometry_column } : {}),
    },
    notes,
  };
}

/** What looking up one layer's target found: the layer, or the refusal (undefined: no target). */
export type TargetLookup = { resolved: ResolvedTarget } | { error: unknown } | undefined;

/**
 * The targets of `layers` looked up together (a few at a time), by index. The caller judges them
 * in plan order, so the first refusal named is the first layer's, as when they were looked up in turn.
 */
export function lookUpTargets(
  deps: TargetLookups,
  workspaceId: string,
  layers: readonly { target?: LayerTarget | undefined }[],
): Promise<TargetLookup[]> {
  return mapLimited([...layers.entries()], TARGET_LAYERS, ([i, layer]) =>
    layer.target
      ? resolveTarget(deps, workspaceId, layer.target, `layers[${i}]`).then(
          (resolved): TargetLookup => ({ resolved }),
          (error: unknown): TargetLookup => ({ error }),
        )
      : Promise.resolve(undefined),
  );
}

/**
 * Every targeting layer of `layers` resolved and made whole (see targetLayerPlan); other layers as
 * they are. Two plan layers can't target one layer.
 */
export async function resolveTargets(
  deps: TargetLookups,
  workspaceId: string,
  layers: LayerPlanInput[],
  discovery: Discovery,
): Promise<{ layers: LayerPlanInput[]; notes: string[]; targets: Map<number, ResolvedTarget> }> {
  const notes: string[] = [];
  const targets = new Map<number, ResolvedTarget>();
  const out: LayerPlanInput[] = [];
  const lookups = await lookUpTargets(deps, workspaceId, layers);
  for (const [i, layer] of layers.entries()) {
    const target = layer.target;
    const lookup = lookups[i];
    if (!target || !lookup) {
      out.push(layer);
      continue;
    }
    const where = `layers[${i}]`;
    if ('error' in lookup) throw lookup.error;
    const { resolved } = lookup;
    const twice = [...targets].find(([, t]) => t.layer.id === resolved.layer.id);
    if (twice)
      throw refuse(where, `layers[${twice[0]}] already targets layer '${resolved.layer.public_id}'.`);
    targets.set(i, resolved);
    const source = discovery.layers.find((s) => s.name === layer.source_layer);
    const made = targetLayerPlan({ ...layer, target }, resolved, source, where);
    out.push(made.layer);
    notes.push(...made.notes);
  }
  return { layers: out, notes, targets };
}

/** The plan layers that target a layer, as the import database takes them. */
export function targetTables(
  plan: { layers: LayerPlan[] },
  targets: Map<number, ResolvedTarget>,
): TargetTable[] {
  return plan.layers.flatMap((l, index) => {
    const resolved = targets.get(index);
    return l.target && resolved
      ? [{ index, table: tableNameOf(l.public_id), relation: resolved.relation, mode: l.target.mode }]
      : [];
  });
}

/** What a replace or an append did, for the history. */
export function outcomeNote(outcome: TargetOutcome, publicId: string, undone = false): string {
  const n = (x: number) => x.toLocaleString('en-US');
  if (outcome.mode === 'append') {
    const added = (outcome.last_fid ?? 0) - (outcome.first_fid ?? 1) + 1;
    return undone
      ? `Layer '${publicId}': the ${n(added)} appended rows were removed (${n(outcome.rows)} rows now).`
      : `Layer '${publicId}': ${n(added)} rows appended (fids ${n(outcome.first_fid ?? 0)}–${n(outcome.last_fid ?? 0)}; ${n(outcome.rows)} rows now).`;
  }
  return undone
    ? `Layer '${publicId}': its previous data was restored (${n(outcome.rows)} rows).`
    : `Layer '${publicId}': its ${n(outcome.previous_rows)} rows were replaced by ${n(outcome.rows)}; the previous data is kept for a rollback.`;
}

/** True when a plan layer of `job` targets the layer `layerId`. */
export function targetsLayer(job: Pick<ImportJob, 'plan'>, layerId: string): boolean {
  return job.plan?.layers.some((l) => l.target?.layer === layerId) ?? false;
}

/** True when `job` replaces or appends to any layer. */
export function hasTargets(job: Pick<ImportJob, 'plan'>): boolean {
  return job.plan?.layers.some((l) => l.target) ?? false;
}
