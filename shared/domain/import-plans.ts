/**
 * Import plans (ADR 0083): the default one discovery suggests, and the checks a plan passes
 * before it is stored — every layer and field must exist in the file, every name that becomes a
 * PostgreSQL identifier must be one PostgreSQL takes as it is (ADR 0110), CRSs known — and the
 * limits an import and a workspace's imports stay within (ADR 0110).
 */
import { InvalidInputError, RuleViolationError } from './errors.ts';
import { NAME_PATTERN, NAME_RULE } from './identifiers.ts';
import type { Discovery, ImportPlan, LayerPlan, LayerTarget, SourceLayer } from './import-sources.ts';

const COLUMN = /^[a-z_][a-z0-9_]{0,62}$/;
/** PostgreSQL's longest identifier in bytes (NAMEDATALEN - 1); longer names are cut to it. */
const MAX_IDENTIFIER_BYTES = 63;
/** Columns a PostgreSQL table holds at most. */
export const MAX_TABLE_COLUMNS = 1600;
/**
 * Names a staged table's columns can't have: the loader's own `fid`, and PostgreSQL's system
 * columns (`oid` only before PostgreSQL 12, but the import database is the operator's choice).
 */
export const RESERVED_COLUMNS: ReadonlySet<string> = new Set([
  'fid',
  'xmin',
  'xmax',
  'cmin',
  'cmax',
  'ctid',
  'tableoid',
  'oid',
]);

/**
 * The table of a plan layer in the import's schemas: the public id lower-cased, every character
 * but `[a-z0-9_]` → `_`, a leading digit prefixed with `_`, cut to 63 bytes. It must give what
 * the import database's `ImportDatabase.tableName` gives (a test holds them together).
 */
export function tableNameOf(publicId: string): string {
  let name = publicId.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (name === '') name = 'layer';
  if (/^[0-9]/.test(name)) name = `_${name}`;
  return name.slice(0, MAX_IDENTIFIER_BYTES);
}

/**
 * The name PostgreSQL gives an object it names itself (`makeObjectName`): `name1[_name2]_label`,
 * the longer of name1 and name2 shortened one character at a time until it fits 63 bytes. The
 * names here are ASCII, so a character is a byte.
 */
export function generatedName(name1: string, name2: string | undefined, label: string): string {
  const overhead = (name2 === undefined ? 0 : 1) + label.length + 1;
  const room = MAX_IDENTIFIER_BYTES - overhead;
  let n1 = name1.length;
  let n2 = name2?.length ?? 0;
  while (n1 + n2 > room) {
    if (n1 > n2) n1--;
    else n2--;
  }
  return `${name1.slice(0, n1)}${name2 === undefined ? '' : `_${name2.slice(0, n2)}`}_${label}`;
}

/**
 * The relation names PostgreSQL picks for what loading a layer creates besides its table: the
 * primary key's index (`<table>_pkey`) and, with geometry, the GiST index (`<table>_<column>_idx`),
 * with `suffix` after the label where a name was taken (`_pkey1`, `_idx2`). Another layer's table
 * with one of these names can't be created once the index exists.
 */
function generatedRelations(table: string, geometryColumn: string | null, suffix = ''): string[] {
  return [
    generatedName(table, undefined, `pkey${suffix}`),
    ...(geometryColumn ? [generatedName(table, geometryColumn, `idx${suffix}`)] : []),
  ];
}

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

/** A layer's relations as far as names go: its table and its geometry column (null: none). */
interface LayerRelations {
  public_id: string;
  table: string;
  geometryColumn: string | null;
}

function relationsOf(layer: LayerPlan, source: SourceLayer | undefined): LayerRelations {
  return {
    public_id: layer.public_id,
    table: tableNameOf(layer.public_id),
    geometryColumn: source?.geometry_type ? (layer.geometry_column ?? 'geom') : null,
  };
}

/** True when PostgreSQL may give `name` to an index it creates for `layer` (see generatedRelations). */
function generatedFor(name: string, layer: LayerRelations): boolean {
  const numbered = /_(?:pkey|idx)([0-9]*)$/.exec(name);
  return (
    numbered !== null && generatedRelations(layer.table, layer.geometryColumn, numbered[1]).includes(name)
  );
}

/** What keeps two layers' tables from living in one schema, or undefined. */
function relationClash(a: LayerRelations, b: LayerRelations): string | undefined {
  if (a.table === b.table) return `both would be stored as table ${a.table}`;
  if (generatedFor(a.table, b))
    return `table ${a.table} is the name PostgreSQL gives an index of table ${b.table}`;
  if (generatedFor(b.table, a))
    return `table ${b.table} is the name PostgreSQL gives an index of table ${a.table}`;
  return undefined;
}

/** The plan discovery suggests: every layer, every field, names made usable, CRSs as found. */
export function defaultPlan(discovery: Discovery): ImportPlan {
  const placed: LayerRelations[] = [];
  /** A public id whose table clashes with no other layer's (public ids differing in case share a table). */
  const publicId = (layer: SourceLayer) => {
    const id = publicIdOf(layer.name);
    let candidate = id;
    const relations = (publicId: string): LayerRelations => ({
      public_id: publicId,
      table: tableNameOf(publicId),
      geometryColumn: layer.geometry_type ? 'geom' : null,
    });
    for (let i = 2; placed.some((other) => relationClash(relations(candidate), other)); i++)
      candidate = `${id.slice(0, 60)}_${i}`;
    placed.push(relations(candidate));
    return candidate;
  };
  return {
    layers: discovery.layers.map((layer) => {
      const columns = new Set<string>([...RESERVED_COLUMNS, 'geom']);
      return {
        source_layer: layer.name,
        public_id: publicId(layer),
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

/** True when a TextDecoder (the Shapefile reader's) takes the label. */
function knownEncoding(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

function bad(message: string): InvalidInputError {
  return new InvalidInputError('invalid_plan', message);
}

/** Why `name` can't be a column of a staged table, or undefined. */
function columnProblem(name: string): string | undefined {
  if (!COLUMN.test(name))
    return 'is not a valid column name (1-63 lower case letters, digits and _, not starting with a digit)';
  if (name === 'fid') return "is the loader's own column 'fid'";
  if (RESERVED_COLUMNS.has(name)) return 'is a PostgreSQL system column';
  return undefined;
}

function checkLayer(layer: LayerPlan, source: SourceLayer | undefined, i: number, format: string): void {
  const where = `layers[${i}]`;
  if (!source) throw bad(`${where}: the file has no layer '${layer.source_layer}'.`);
  if (layer.encoding !== undefined) {
    if (format !== 'shapefile') throw bad(`${where}: encoding applies to Shapefiles only.`);
    if (!knownEncoding(layer.encoding)) {
      throw bad(
        `${where}: encoding '${layer.encoding}' is not a code page GeoPlane can decode (e.g. windows-1252, windows-1250, iso-8859-2, utf-8).`,
      );
    }
  }
  if (!NAME_PATTERN.test(layer.public_id)) {
    throw bad(`${where}: public_id '${layer.public_id}' ${NAME_RULE}.`);
  }
  const named = layer.geometry_column ?? 'geom';
  const geometryProblem = columnProblem(named);
  if (geometryProblem) throw bad(`${where}: geometry_column '${named}' ${geometryProblem}.`);
  const geometryColumn = source.geometry_type ? named : undefined;
  const targets = new Set<string>(geometryColumn ? [geometryColumn] : []);
  const sources = new Set(source.fields.map((f) => f.name));
  const seen = new Set<string>();
  for (const [j, field] of layer.fields.entries()) {
    if (!sources.has(field.source))
      throw bad(`${where}.fields[${j}]: the layer has no field '${field.source}'.`);
    if (seen.has(field.source)) throw bad(`${where}.fields[${j}]: field '${field.source}' is listed twice.`);
    seen.add(field.source);
    if (!field.include) continue;
    const problem = columnProblem(field.target);
    if (problem) throw bad(`${where}.fields[${j}]: target '${field.target}' ${problem}.`);
    if (targets.has(field.target)) {
      throw bad(
        `${where}.fields[${j}]: target column '${field.target}' is used twice${field.target === geometryColumn ? ' (it is the geometry column)' : ''}.`,
      );
    }
    targets.add(field.target);
  }
  // fid, the geometry column and the included fields.
  if (targets.size + 1 > MAX_TABLE_COLUMNS) {
    throw bad(
      `${where}: the table would have ${targets.size + 1} columns; PostgreSQL takes at most ${MAX_TABLE_COLUMNS}. Leave fields out (include: false).`,
    );
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

/**
 * Checks a plan against what discovery found; the plan as stored (fields of the layer filled in).
 * Every name that becomes a PostgreSQL identifier is checked as PostgreSQL will see it (ADR 0110):
 * table names after case folding, replacement and the 63-byte cut, against each other and the
 * index names PostgreSQL derives from them; column names against the system columns, `fid`, the
 * geometry column and each other. A source layer is loaded once (400 `invalid_plan`).
 */
export function validatePlan(plan: ImportPlan, discovery: Discovery): ImportPlan {
  if (plan.layers.length === 0) throw bad('The plan needs at least one layer.');
  const ids = new Set<string>();
  const sourceLayers = new Map<string, number>();
  const placed: LayerRelations[] = [];
  plan.layers.forEach((layer, i) => {
    const source = discovery.layers.find((s) => s.name === layer.source_layer);
    checkLayer(layer, source, i, discovery.format);
    const first = sourceLayers.get(layer.source_layer);
    if (first !== undefined) {
      throw bad(
        `layers[${i}]: source layer '${layer.source_layer}' is already loaded by layers[${first}]; a plan loads each source layer once.`,
      );
    }
    sourceLayers.set(layer.source_layer, i);
    if (ids.has(layer.public_id)) throw bad(`layers[${i}]: public_id '${layer.public_id}' is used twice.`);
    ids.add(layer.public_id);
    const relations = relationsOf(layer, source);
    for (const other of placed) {
      const clash = relationClash(relations, other);
      if (clash) {
        throw bad(
          `layers[${i}]: public_id '${layer.public_id}' clashes with public_id '${other.public_id}': ${clash}. Choose public ids that differ in more than case, punctuation and what lies past 63 characters.`,
        );
      }
    }
    placed.push(relations);
  });
  return plan;
}

/** What an import holds against its workspace's quota: the rows and the bytes it loads. */
export interface ImportUsage {
  rows: number;
  bytes: number;
}

/** The limits of one import and of a workspace's imports together (config; ADR 0110). */
export interface ImportQuotas {
  /** Layers one plan loads at most. */
  maxLayers: number;
  /** Features one import loads at most (all its layers). */
  maxRows: number;
  /** Bytes of the file one import loads at most. */
  maxBytes: number;
  /** Rows the workspace's staged and published imports hold together at most. */
  workspaceMaxRows: number;
  /** Bytes (of their files) the workspace's staged and published imports hold together at most. */
  workspaceMaxBytes: number;
}

/**
 * What loading `plan` stages: its layers, the features discovery counted in them, and the bytes
 * of the file (a plan loads each source layer once, so its tables hold about what the file holds).
 * The loader never stages more than this (ADR 0110): the import reserves it.
 */
export function planFootprint(plan: ImportPlan, discovery: Discovery): ImportUsage & { layers: number } {
  let rows = 0;
  for (const layer of plan.layers) {
    rows += discovery.layers.find((s) => s.name === layer.source_layer)?.feature_count ?? 0;
  }
  return { layers: plan.layers.length, rows, bytes: discovery.size_bytes };
}

const count = (n: number) => n.toLocaleString('en-US');

/** The refusal (422) when a plan's footprint is over one import's limits, or undefined. */
export function importLimitRefusal(
  footprint: ImportUsage & { layers: number },
  quotas: ImportQuotas,
): RuleViolationError | undefined {
  if (footprint.layers > quotas.maxLayers) {
    return new RuleViolationError(
      'import_layer_limit',
      `The plan loads ${count(footprint.layers)} layers; an import loads at most ${count(quotas.maxLayers)}. Leave layers out of the plan (PUT …/plan) or split the file.`,
    );
  }
  if (footprint.rows > quotas.maxRows) {
    return new RuleViolationError(
      'import_row_limit',
      `The plan loads ${count(footprint.rows)} features; an import loads at most ${count(quotas.maxRows)}. Leave layers out of the plan (PUT …/plan) or split the file.`,
    );
  }
  if (footprint.bytes > quotas.maxBytes) {
    return new RuleViolationError(
      'import_byte_limit',
      `The file is ${count(footprint.bytes)} bytes; an import loads at most ${count(quotas.maxBytes)} bytes. Split the file.`,
    );
  }
  return undefined;
}

/**
 * The refusal (422 `workspace_import_quota`) when reserving `need` instead of `held` would take
 * the workspace's imports past its quota, with `usage` what they hold now (including `held`), or
 * undefined. Only what grows is checked: a smaller plan is never refused.
 */
export function workspaceQuotaRefusal(
  usage: ImportUsage,
  held: ImportUsage,
  need: ImportUsage,
  quotas: ImportQuotas,
): RuleViolationError | undefined {
  const over = (
    what: string,
    used: number,
    heldNow: number,
    needed: number,
    max: number,
  ): RuleViolationError | undefined => {
    if (needed <= heldNow || used - heldNow + needed <= max) return undefined;
    return new RuleViolationError(
      'workspace_import_quota',
      `The workspace's imports hold ${count(used - heldNow)} of its ${count(max)} ${what}; this import needs ${count(needed)}. Cancel or roll back imports the workspace no longer needs, or load less (PUT …/plan).`,
    );
  };
  return (
    over('import rows', usage.rows, held.rows, need.rows, quotas.workspaceMaxRows) ??
    over('import bytes', usage.bytes, held.bytes, need.bytes, quotas.workspaceMaxBytes)
  );
}

/** A plan layer as setImportPlan takes it: `fields` (and the geometry column) may be left out. */
export type LayerPlanInput = Omit<LayerPlan, 'fields' | 'public_id'> & {
  fields?: LayerPlan['fields'];
  /** Required but for a layer with a target (it keeps the target's, ADR 0127). */
  public_id?: string;
};

/** A plan as setImportPlan takes it (ADR 0126): layers may be partial; the service may be renamed. */
export interface ImportPlanInput {
  service_name?: string;
  layers: LayerPlanInput[];
}

/**
 * A partial plan made whole (ADR 0126): a layer without `fields` takes the discovered ones as the
 * default plan maps them (every field, names made usable), and its geometry column and CSV
 * geometry columns likewise when not given. A layer the file doesn't have stays as given (the
 * plan check names it).
 */
export function completePlan(plan: ImportPlanInput, discovery: Discovery): ImportPlan {
  const defaults = defaultPlan(discovery).layers;
  return {
    layers: plan.layers.map((layer, i) => {
      if (layer.public_id === undefined) {
        throw bad(
          `layers[${i}]: public_id is required (leave it out only with a target, an existing layer to replace or append to).`,
        );
      }
      if (layer.fields) return layer as LayerPlan;
      const found = defaults.find((d) => d.source_layer === layer.source_layer);
      return {
        ...layer,
        public_id: layer.public_id,
        fields: found?.fields ?? [],
        ...(layer.geometry_column === undefined && found?.geometry_column
          ? { geometry_column: found.geometry_column }
          : {}),
        ...(layer.csv === undefined && found?.csv ? { csv: found.csv } : {}),
      };
    }),
  };
}

/**
 * The default plan with the public ids asked for at createImport (ADR 0126): an entry without
 * `source_layer` names the file's first layer. Entries naming a layer the file doesn't have are
 * returned as `unmatched` (the import then waits for a plan).
 */
export function planWithNames(
  plan: ImportPlan,
  requested: { source_layer?: string; public_id?: string; target?: LayerTarget }[] | undefined,
): { plan: { layers: LayerPlanInput[] }; unmatched: string[] } {
  if (!requested?.length) return { plan, unmatched: [] };
  const unmatched: string[] = [];
  const layers: LayerPlanInput[] = plan.layers.map((l) => ({ ...l }));
  for (const entry of requested) {
    const index =
      entry.source_layer === undefined ? 0 : layers.findIndex((l) => l.source_layer === entry.source_layer);
    const layer = layers[index];
    if (!layer) unmatched.push(entry.source_layer ?? '');
    else if (entry.target) {
      // Its fields are mapped to the target's columns once the target is resolved (ADR 0127).
      const { fields: _default, geometry_column: _geometry, public_id: _id, ...rest } = layer;
      layers[index] = { ...rest, target: entry.target };
    } else if (entry.public_id !== undefined) layer.public_id = entry.public_id;
  }
  return { plan: { layers }, unmatched };
}

/**
 * The first free name `<base>_2`, `<base>_3`, … (cut to fit `max` characters) that `taken` says is
 * free and that `avoid` doesn't hold (names the same plan already uses).
 */
export async function freeName(
  base: string,
  taken: (name: string) => Promise<boolean>,
  avoid: (name: string) => boolean = () => false,
  max = 64,
): Promise<string> {
  for (let i = 2; i < 10_000; i++) {
    const suffix = `_${i}`;
    const candidate = `${base.slice(0, max - suffix.length)}${suffix}`;
    if (!avoid(candidate) && !(await taken(candidate))) return candidate;
  }
  throw new RuleViolationError('no_free_name', `No free name was found for '${base}'.`);
}

/** True when `a` and `b` can't be public ids of two layers of one plan (same table or an index's name). */
export function publicIdsClash(a: string, b: string): boolean {
  const rel = (id: string): LayerRelations => ({
    public_id: id,
    table: tableNameOf(id),
    geometryColumn: 'geom',
  });
  return a === b || relationClash(rel(a), rel(b)) !== undefined;
}
