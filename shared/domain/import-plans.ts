/**
 * Import plans (ADR 0083): the default one discovery suggests, and the checks a plan passes
 * before it is stored — every layer and field must exist in the file, names must be usable as
 * public ids and column names, CRSs known.
 */
import { InvalidInputError } from './errors.ts';
import type { Discovery, ImportPlan, LayerPlan, SourceLayer } from './import-sources.ts';

const PUBLIC_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const COLUMN = /^[a-z_][a-z0-9_]{0,62}$/;
/** Columns the loader adds itself. */
const RESERVED_COLUMNS = new Set(['fid']);

/** A column name from a source field name: lower case, `[a-z0-9_]`, not starting with a digit. */
export function columnName(source: string): string {
  let name = source
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (!name) name = 'field';
  if (/^[0-9]/.test(name)) name = `f_${name}`;
  return name.slice(0, 63);
}

/** A public id from a layer name. */
export function publicIdOf(layer: string): string {
  const id = layer
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return id || 'layer';
}

function unique(name: string, taken: Set<string>, max: number): string {
  let candidate = name;
  for (let i = 2; taken.has(candidate); i++) candidate = `${name.slice(0, max - String(i).length - 1)}_${i}`;
  taken.add(candidate);
  return candidate;
}

/** The plan discovery suggests: every layer, every field, names made usable, CRSs as found. */
export function defaultPlan(discovery: Discovery): ImportPlan {
  const tables = new Set<string>();
  /** A public id whose table name no other layer has (public ids differing in case share a table). */
  const publicId = (name: string) => {
    const id = publicIdOf(name);
    let candidate = id;
    for (let i = 2; tables.has(columnName(candidate)); i++) candidate = `${id.slice(0, 60)}_${i}`;
    tables.add(columnName(candidate));
    return candidate;
  };
  return {
    layers: discovery.layers.map((layer) => {
      const columns = new Set<string>(['fid', 'geom']);
      return {
        source_layer: layer.name,
        public_id: publicId(layer.name),
        title: layer.name,
        enabled: true,
        public: false,
        fields: layer.fields.map((f) => ({
          source: f.name,
          target: unique(columnName(f.name), columns, 63),
          type: f.type,
          include: true,
        })),
        ...(layer.geometry_type ? { geometry_column: 'geom' } : {}),
        ...(layer.csv ? { csv: layer.csv } : {}),
      };
    }),
  };
}

/** Layers of the plan whose CRS is unknown (the plan must give `source_srid`). */
export function layersWithoutCrs(plan: ImportPlan, discovery: Discovery): string[] {
  return plan.layers
    .filter((l) => {
      const source = discovery.layers.find((s) => s.name === l.source_layer);
      return source?.geometry_type && source.srid === null && l.source_srid === undefined;
    })
    .map((l) => l.source_layer);
}

function bad(message: string): InvalidInputError {
  return new InvalidInputError('invalid_plan', message);
}

function checkLayer(layer: LayerPlan, source: SourceLayer | undefined, i: number): void {
  const where = `layers[${i}]`;
  if (!source) throw bad(`${where}: the file has no layer '${layer.source_layer}'.`);
  if (!PUBLIC_ID.test(layer.public_id)) {
    throw bad(
      `${where}: public_id '${layer.public_id}' must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    );
  }
  const geometryColumn = layer.geometry_column ?? 'geom';
  if (!COLUMN.test(geometryColumn))
    throw bad(
      `${where}: geometry_column '${geometryColumn}' is not a valid column name (lower case letters, digits, '_').`,
    );
  const targets = new Set<string>(['fid', ...(source.geometry_type ? [geometryColumn] : [])]);
  const sources = new Set(source.fields.map((f) => f.name));
  const seen = new Set<string>();
  for (const [j, field] of layer.fields.entries()) {
    if (!sources.has(field.source))
      throw bad(`${where}.fields[${j}]: the layer has no field '${field.source}'.`);
    if (seen.has(field.source)) throw bad(`${where}.fields[${j}]: field '${field.source}' is listed twice.`);
    seen.add(field.source);
    if (!field.include) continue;
    if (!COLUMN.test(field.target) || RESERVED_COLUMNS.has(field.target)) {
      throw bad(
        `${where}.fields[${j}]: target '${field.target}' is not a valid column name (lower case letters, digits, '_'; not 'fid').`,
      );
    }
    if (targets.has(field.target))
      throw bad(`${where}.fields[${j}]: target column '${field.target}' is used twice.`);
    targets.add(field.target);
  }
  if (layer.csv && !source.csv) throw bad(`${where}: csv geometry columns apply to CSV layers only.`);
  // The detected geometry columns are not fields; any column of the file may be named.
  const columns = new Set([...sources, ...Object.values(source.csv ?? {})]);
  for (const column of [layer.csv?.lat, layer.csv?.lon, layer.csv?.wkt]) {
    if (column !== undefined && !columns.has(column))
      throw bad(`${where}: the CSV has no column '${column}'.`);
  }
  if (layer.csv && !(layer.csv.wkt || (layer.csv.lat && layer.csv.lon))) {
    throw bad(`${where}: csv needs either wkt or both lat and lon.`);
  }
}

/** Checks a plan against what discovery found; the plan as stored (fields of the layer filled in). */
export function validatePlan(plan: ImportPlan, discovery: Discovery): ImportPlan {
  if (plan.layers.length === 0) throw bad('The plan needs at least one layer.');
  const ids = new Set<string>();
  const tables = new Set<string>();
  plan.layers.forEach((layer, i) => {
    checkLayer(
      layer,
      discovery.layers.find((s) => s.name === layer.source_layer),
      i,
    );
    if (ids.has(layer.public_id)) throw bad(`layers[${i}]: public_id '${layer.public_id}' is used twice.`);
    ids.add(layer.public_id);
    const table = columnName(layer.public_id);
    if (tables.has(table))
      throw bad(`layers[${i}]: public_id '${layer.public_id}' maps to the same table as another layer.`);
    tables.add(table);
  });
  return plan;
}
