/**
 * The gate every user SQL passes before it reaches PostGIS (DESIGN §8 validate-sql, ADR 0035).
 *
 * The SQL is parsed with PostgreSQL's own parser (libpg-query, the server's grammar compiled to
 * WASM) — never inspected with regexes — and the whole parse tree is walked: exactly one
 * statement, a plain SELECT (set operations, VALUES and read-only CTEs included), no SELECT INTO,
 * no locking clause, no data-modifying CTE, no system-catalog relation, and every function call
 * on an allowlist. It is the first line of defence; the caller's READ ONLY transaction and
 * statement_timeout are the second.
 */
import type { parse as ParseSql } from 'libpg-query';
import { MAX_SQL_BYTES } from '#domain/datasource.ts';

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

type Parser = { parse: typeof ParseSql; loadModule: () => Promise<void> };

let parser: Promise<Parser> | undefined;

/**
 * The parser with its WebAssembly compiled and instantiated (ADR 0100): from the sidecar beside
 * the bundle, or the package when run from source. A failed load is tried again on the next use.
 */
function sqlParser(): Promise<Parser> {
  parser ??= (
    (typeof GEOPLANE_BUNDLE !== 'undefined'
      ? import(new URL('./libpg-query.sidecar.mjs', import.meta.url).href)
      : import('libpg-query')) as Promise<Parser>
  )
    .then(async (module) => {
      await module.loadModule();
      return module;
    })
    .catch((error: unknown) => {
      parser = undefined;
      throw error;
    });
  return parser;
}

/**
 * Starts loading the parser now (issue #27, ADR 0100): called at init by the handlers whose
 * requests parse SQL, so its WebAssembly (1.7 MB) compiles during a Lambda's init phase, beside the
 * handler's first reads, instead of inside its first parse. The other bundles that contain the
 * guard (it is in the PostGIS gateway's import graph) never pay for it. A failure here surfaces at
 * that parse.
 */
export function warmSqlParser(): void {
  sqlParser().catch(() => {});
}

/**
 * What the parse tree can't decide alone (ADR 0035): names that attribute notation may turn into a
 * call (`(x).f` and `t.f` are `f(x)` / `f(t)` when no such field exists) and unqualified operator
 * symbols (an operator is a function). The runner resolves them in the database's catalog with
 * {@link hiddenCallsQuery} and {@link refuseHiddenCalls} before the SQL runs.
 */
export interface HiddenCalls {
  attributeNames: string[];
  operators: string[];
}

type SqlCheck = ({ ok: true } & HiddenCalls) | { ok: false; error: string };

export { MAX_SQL_BYTES };

/**
 * Built-in functions a query may call, matched on the exact (case-folded by the parser) name:
 * `"LOWER"` is another function than `lower`, so it is refused. Optionally qualified with
 * `pg_catalog`. Anything absent is refused — notably pg_sleep*, pg_read_file, lo_*, dblink*,
 * set_config/current_setting, sequences, txid_*, pg_advisory_*, query_to_xml and every other
 * function that executes SQL text (ts_stat, ts_rewrite, crosstab, pgr_*), and all `pg_*` admin
 * and statistics functions.
 */
const BUILTIN_FUNCTIONS: ReadonlySet<string> = new Set([
  // math
  ...['abs', 'cbrt', 'ceil', 'ceiling', 'degrees', 'div', 'exp', 'factorial', 'floor', 'gcd', 'lcm'],
  ...['ln', 'log', 'log10', 'mod', 'pi', 'power', 'pow', 'radians', 'round', 'scale', 'sign', 'sqrt'],
  ...['trunc', 'width_bucket', 'min_scale', 'trim_scale', 'random', 'random_normal', 'erf', 'erfc'],
  ...['sin', 'cos', 'tan', 'cot', 'asin', 'acos', 'atan', 'atan2', 'sind', 'cosd', 'tand', 'cotd'],
  ...['asind', 'acosd', 'atand', 'atan2d', 'sinh', 'cosh', 'tanh', 'asinh', 'acosh', 'atanh'],
  // strings and bytes (the COERCE_SQL_SYNTAX forms too: SUBSTRING … FROM, POSITION … IN, TRIM, OVERLAY)
  ...['ascii', 'bit_length', 'btrim', 'char_length', 'character_length', 'chr', 'concat', 'concat_ws'],
  ...['format', 'initcap', 'left', 'length', 'lower', 'lpad', 'ltrim', 'md5', 'octet_length'],
  ...['overlay', 'position', 'quote_ident', 'quote_literal', 'quote_nullable', 'repeat', 'replace'],
  ...['reverse', 'right', 'rpad', 'rtrim', 'split_part', 'starts_with', 'string_to_array'],
  ...['string_to_table', 'strpos', 'substr', 'substring', 'translate', 'upper', 'unistr', 'casefold'],
  ...['regexp_count', 'regexp_instr', 'regexp_like', 'regexp_match', 'regexp_matches'],
  ...['regexp_replace', 'regexp_split_to_array', 'regexp_split_to_table', 'regexp_substr'],
  ...['to_hex', 'to_bin', 'to_oct', 'encode', 'decode', 'convert_from', 'convert_to'],
  ...['sha224', 'sha256', 'sha384', 'sha512', 'crc32', 'crc32c', 'get_byte', 'set_byte'],
  ...['similar_to_escape', 'like_escape', 'normalize', 'is_normalized', 'pg_collation_for'],
  // date and time (CURRENT_DATE & co. are SQLValueFunction nodes, checked separately)
  ...['age', 'clock_timestamp', 'date_add', 'date_bin', 'date_part', 'date_subtract', 'date_trunc'],
  ...['extract', 'isfinite', 'justify_days', 'justify_hours', 'justify_interval', 'make_date'],
  ...['make_interval', 'make_time', 'make_timestamp', 'make_timestamptz', 'now', 'overlaps'],
  ...['statement_timestamp', 'timeofday', 'transaction_timestamp', 'timezone'],
  // formatting
  ...['to_char', 'to_date', 'to_number', 'to_timestamp'],
  // conditional (COALESCE, NULLIF, GREATEST, LEAST are grammar nodes; their call forms too)
  ...['coalesce', 'nullif', 'greatest', 'least', 'num_nulls', 'num_nonnulls'],
  // aggregates
  ...['count', 'sum', 'avg', 'min', 'max', 'array_agg', 'string_agg', 'bool_and', 'bool_or', 'every'],
  ...['bit_and', 'bit_or', 'bit_xor', 'any_value', 'stddev', 'stddev_pop', 'stddev_samp', 'variance'],
  ...['var_pop', 'var_samp', 'corr', 'covar_pop', 'covar_samp', 'regr_avgx', 'regr_avgy'],
  ...['regr_count', 'regr_intercept', 'regr_r2', 'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy'],
  ...['mode', 'percentile_cont', 'percentile_disc', 'range_agg', 'range_intersect_agg'],
  ...['json_agg', 'jsonb_agg', 'json_object_agg', 'jsonb_object_agg', 'json_agg_strict'],
  ...['jsonb_agg_strict', 'json_object_agg_strict', 'jsonb_object_agg_strict'],
  // window functions
  ...['row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead'],
  ...['first_value', 'last_value', 'nth_value'],
  // arrays and set-returning helpers
  ...['array_append', 'array_cat', 'array_dims', 'array_fill', 'array_length', 'array_lower'],
  ...['array_ndims', 'array_position', 'array_positions', 'array_prepend', 'array_remove'],
  ...['array_replace', 'array_reverse', 'array_sort', 'array_to_string', 'array_upper', 'cardinality'],
  ...['trim_array', 'unnest', 'generate_series', 'generate_subscripts'],
  // json / jsonb accessors and builders
  ...['to_json', 'to_jsonb', 'row_to_json', 'array_to_json', 'json_build_object', 'jsonb_build_object'],
  ...['json_build_array', 'jsonb_build_array', 'json_object', 'jsonb_object', 'json_typeof'],
  ...['jsonb_typeof', 'json_array_length', 'jsonb_array_length', 'json_extract_path'],
  ...['jsonb_extract_path', 'json_extract_path_text', 'jsonb_extract_path_text', 'json_each'],
  ...['jsonb_each', 'json_each_text', 'jsonb_each_text', 'json_object_keys', 'jsonb_object_keys'],
  ...['json_array_elements', 'jsonb_array_elements', 'json_array_elements_text'],
  ...['jsonb_array_elements_text', 'json_strip_nulls', 'jsonb_strip_nulls', 'jsonb_pretty'],
  ...['jsonb_set', 'jsonb_set_lax', 'jsonb_insert', 'json_populate_record', 'jsonb_populate_record'],
  ...['json_populate_recordset', 'jsonb_populate_recordset', 'json_to_record', 'jsonb_to_record'],
  ...['json_to_recordset', 'jsonb_to_recordset', 'jsonb_path_exists', 'jsonb_path_match'],
  ...['jsonb_path_query', 'jsonb_path_query_array', 'jsonb_path_query_first'],
  // ranges
  ...['isempty', 'lower_inc', 'upper_inc', 'lower_inf', 'upper_inf', 'range_merge', 'int4range'],
  ...['int8range', 'numrange', 'tsrange', 'tstzrange', 'daterange'],
  // full-text search (not ts_stat / ts_rewrite: they execute SQL text)
  ...['to_tsvector', 'to_tsquery', 'plainto_tsquery', 'phraseto_tsquery', 'websearch_to_tsquery'],
  ...['ts_rank', 'ts_rank_cd', 'ts_headline', 'setweight', 'strip', 'numnode', 'querytree'],
  // function-style casts
  ...['text', 'int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'bool', 'date', 'varchar'],
  ...['bpchar', 'interval', 'time', 'timestamp', 'timestamptz', 'bytea'],
  ...['name', 'money', 'char', 'inet', 'cidr'],
  // geometric and network types' pure helpers (also common column names: `t.area`, `t.host`)
  ...['area', 'center', 'diameter', 'height', 'width', 'radius', 'npoints', 'isclosed', 'isopen'],
  ...['point', 'box', 'path', 'polygon', 'circle', 'line', 'lseg', 'slope', 'popen', 'pclose'],
  ...['host', 'hostmask', 'network', 'netmask', 'broadcast', 'family', 'masklen', 'abbrev'],
  // uuids and misc pure helpers
  ...['gen_random_uuid', 'uuidv4', 'uuidv7', 'pg_typeof'],
]);

/**
 * Types a query may name in a cast, a typed literal or a column definition list (a cast runs the
 * type's input or cast function; a domain runs its CHECK expressions): built-in value types and
 * PostGIS's. Not the `reg*` types (their input functions look names up in the system catalogs),
 * not `xml`, not custom types or domains (they may run any code), compared as folded names.
 */
const ALLOWED_TYPES: ReadonlySet<string> = new Set([
  ...['bool', 'boolean', 'int2', 'int4', 'int8', 'int', 'integer', 'smallint', 'bigint', 'float4'],
  ...['float8', 'real', 'numeric', 'decimal', 'text', 'varchar', 'bpchar', 'char', 'name', 'bytea'],
  ...['date', 'time', 'timetz', 'timestamp', 'timestamptz', 'interval', 'json', 'jsonb', 'jsonpath'],
  ...['uuid', 'bit', 'varbit', 'money', 'inet', 'cidr', 'macaddr', 'macaddr8', 'tsvector', 'tsquery'],
  ...['point', 'line', 'lseg', 'box', 'path', 'polygon', 'circle', 'int4range', 'int8range'],
  ...['numrange', 'tsrange', 'tstzrange', 'daterange', 'int4multirange', 'int8multirange'],
  ...['nummultirange', 'tsmultirange', 'tstzmultirange', 'datemultirange', 'record'],
]);

/** PostGIS's types (qualified, if at all, with one of {@link POSTGIS_SCHEMAS}). */
const POSTGIS_TYPES: ReadonlySet<string> = new Set([
  ...['geometry', 'geography', 'box2d', 'box3d', 'geometry_dump', 'valid_detail'],
]);

/**
 * PostGIS functions outside the `st_` prefix: type constructors/casts and version reporting
 * (not postgis_full_version / postgis_proj_version: they print server paths).
 */
const POSTGIS_FUNCTIONS: ReadonlySet<string> = new Set([
  // geometry / geography helpers and function-style casts
  ...['geometrytype', 'geometry', 'geography', 'box2d', 'box3d'],
  // version reporting
  ...['postgis_version', 'postgis_lib_version', 'postgis_geos_version', 'postgis_lib_build_date'],
]);

/**
 * `st_*` is allowed in general (PostGIS's pure spatial functions, hundreds of them); these are
 * not, because they touch files or GDAL drivers, evaluate SQL text, read tables by name, or
 * change server state.
 */
const POSTGIS_ST_DENYLIST: ReadonlySet<string> = new Set([
  // raster: out-db files (paths, stat, reading through GDAL) and GDAL (de)serialisation
  ...['st_addband', 'st_setbandpath', 'st_bandpath', 'st_bandfilesize', 'st_bandfiletimestamp'],
  ...['st_bandmetadata', 'st_fromgdalraster', 'st_asgdalraster', 'st_astiff', 'st_aspng'],
  ...['st_asjpeg', 'st_gdaldrivers'],
  // raster map algebra evaluates an SQL expression (or calls a function by name) through SPI
  ...['st_mapalgebra', 'st_mapalgebraexpr', 'st_mapalgebrafct', 'st_mapalgebrafctngb'],
  // read or create tables named by a string argument
  ...['st_retile', 'st_createoverview', 'st_fromflatgeobuftotable', 'st_findextent', 'st_find_extent'],
  // PROJ pipeline strings may name grid/init files on the server
  ...['st_transformpipeline', 'st_inversetransformpipeline'],
  // topology editors (write topology tables, create schemas)
  ...['st_addisonode', 'st_addisoedge', 'st_addedgenewfaces', 'st_addedgemodface', 'st_remedgenewface'],
  ...['st_remedgemodface', 'st_modedgesplit', 'st_newedgessplit', 'st_modedgeheal', 'st_newedgeheal'],
  ...['st_moveisonode', 'st_remisonode', 'st_remisoedge', 'st_changeedgegeom', 'st_inittopogeo'],
  ...['st_createtopogeo'],
]);

/** Schemas PostGIS is commonly installed in; a PostGIS function may be qualified with one of them. */
const POSTGIS_SCHEMAS: ReadonlySet<string> = new Set(['public', 'postgis', 'extensions']);

/**
 * Relations in pg_catalog / information_schema (or any `pg_*` schema, or an unqualified `pg_*`
 * name, which resolves to pg_catalog first) are refused — pg_authid, pg_shadow,
 * pg_user_mappings, pg_stat_activity, pg_settings, pg_proc, pg_largeobject … — except these
 * reference tables that hold no secrets.
 */
const SAFE_CATALOG_RELATIONS: ReadonlySet<string> = new Set(['pg_timezone_names', 'pg_timezone_abbrevs']);

/** TABLESAMPLE methods (built-in, and the tsm_system_rows/tsm_system_time contrib ones). */
const TABLESAMPLE_METHODS: ReadonlySet<string> = new Set([
  'system',
  'bernoulli',
  'system_rows',
  'system_time',
]);

/** SQLValueFunction ops allowed: date/time only (CURRENT_USER, CURRENT_SCHEMA … reveal server state). */
const ALLOWED_SQL_VALUE_FUNCTIONS: ReadonlySet<string> = new Set([
  ...['SVFOP_CURRENT_DATE', 'SVFOP_CURRENT_TIME', 'SVFOP_CURRENT_TIME_N', 'SVFOP_CURRENT_TIMESTAMP'],
  ...['SVFOP_CURRENT_TIMESTAMP_N', 'SVFOP_LOCALTIME', 'SVFOP_LOCALTIME_N', 'SVFOP_LOCALTIMESTAMP'],
  'SVFOP_LOCALTIMESTAMP_N',
]);

const LOCKING_CLAUSES: Readonly<Record<string, string>> = {
  LCS_FORUPDATE: 'FOR UPDATE',
  LCS_FORNOKEYUPDATE: 'FOR NO KEY UPDATE',
  LCS_FORSHARE: 'FOR SHARE',
  LCS_FORKEYSHARE: 'FOR KEY SHARE',
};

type JsonObject = Record<string, unknown>;

class Refusal extends Error {}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Quotes an identifier for messages when it would need quotes in SQL. */
function ident(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** The strings of a name list (`[{String: {sval}}, …]`); undefined when it has another shape. */
function nameParts(list: unknown): string[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const parts: string[] = [];
  for (const item of list) {
    const sval = isObject(item) && isObject(item.String) ? item.String.sval : undefined;
    if (typeof sval !== 'string') return undefined;
    parts.push(sval);
  }
  return parts;
}

function isAllowedFunction(name: string): boolean {
  if (BUILTIN_FUNCTIONS.has(name) || POSTGIS_FUNCTIONS.has(name)) return true;
  return /^st_[a-z0-9_]+$/.test(name) && !POSTGIS_ST_DENYLIST.has(name);
}

function checkFunction(call: JsonObject): void {
  const parts = nameParts(call.funcname);
  if (parts === undefined || parts.length === 0) throw new Refusal('unrecognised function call');
  const shown = parts.map(ident).join('.');
  const name = parts[parts.length - 1] as string;
  if (parts.length > 2) throw new Refusal(`function ${shown} is not allowed (too many name parts)`);
  if (!isAllowedFunction(name)) {
    const lower = name.toLowerCase();
    const hint =
      lower !== name && isAllowedFunction(lower)
        ? ` (quoted names are case-sensitive: did you mean ${lower}?)`
        : '';
    throw new Refusal(`function ${shown} is not allowed${hint}`);
  }
  const schema = parts.length === 2 ? parts[0] : undefined;
  if (schema === undefined) return;
  const schemaOk = BUILTIN_FUNCTIONS.has(name) ? schema === 'pg_catalog' : POSTGIS_SCHEMAS.has(schema);
  if (!schemaOk) {
    throw new Refusal(`function ${shown} is not allowed: schema ${ident(schema)} is unexpected for ${name}`);
  }
}

/** A type named in a cast, typed literal or column definition list. */
function checkType(typeName: JsonObject): void {
  const parts = nameParts(typeName.names);
  if (parts === undefined || parts.length === 0) throw new Refusal('unrecognised type name');
  const shown = parts.map(ident).join('.');
  const name = parts[parts.length - 1] as string;
  const schema = parts.length === 2 ? parts[0] : undefined;
  const builtin = ALLOWED_TYPES.has(name) && (schema === undefined || schema === 'pg_catalog');
  const postgis = POSTGIS_TYPES.has(name) && (schema === undefined || POSTGIS_SCHEMAS.has(schema));
  if (parts.length > 2 || !(builtin || postgis)) {
    const why = /^reg/.test(name)
      ? 'reg* types look names up in the system catalogs'
      : 'only built-in and PostGIS types: a custom type or domain may run code';
    throw new Refusal(`type ${shown} is not allowed (${why})`);
  }
}

/** Where a call hides without a FuncCall node: gathered for the catalog check. */
interface Gathered {
  attributeNames: Set<string>;
  operators: Set<string>;
}

/**
 * `(x).f`, `t.f`, `s.t.f`: the last name may select a field or call the one-argument function
 * `f`. Names that can only be calls of functions we refuse are refused here; the rest are checked
 * against the database's catalog before the SQL runs.
 */
function gatherAttribute(name: string, gathered: Gathered): void {
  if (isAllowedFunction(name)) return;
  if (/^(pg_|lo_|txid_|dblink)/.test(name) || KNOWN_UNSAFE_CALLS.has(name)) {
    throw new Refusal(
      `${ident(name)} is not allowed: attribute notation (x).${ident(name)} calls the function ${ident(name)}(x)`,
    );
  }
  gathered.attributeNames.add(name);
}

/** Built-in functions outside the pg_ prefix that attribute notation could call with one argument. */
const KNOWN_UNSAFE_CALLS: ReadonlySet<string> = new Set([
  ...['current_setting', 'set_config', 'nextval', 'currval', 'setval', 'query_to_xml', 'ts_stat'],
  ...['table_to_xml', 'cursor_to_xml', 'schema_to_xml', 'database_to_xml', 'ts_rewrite'],
  ...['has_table_privilege', 'has_database_privilege', 'has_schema_privilege', 'row_security_active'],
  ...['to_regclass', 'to_regproc', 'to_regrole', 'to_regtype', 'to_regnamespace', 'obj_description'],
  ...['col_description', 'shobj_description', 'format_type'],
]);

/**
 * The catalog query that resolves {@link HiddenCalls}: functions callable with one argument named
 * like an attribute, and operators with those symbols defined outside `pg_catalog` and outside
 * every extension (a database user's own operator). Parameters: `$1` names, `$2` symbols.
 */
export const hiddenCallsQuery = `
SELECT ARRAY(SELECT DISTINCT p.proname::text FROM pg_catalog.pg_proc p
             WHERE p.proname = ANY($1::text[]) AND p.pronargs >= 1
               AND p.pronargs - p.pronargdefaults <= 1) AS functions,
       ARRAY(SELECT DISTINCT o.oprname || ' (schema ' || n.nspname || ')'
             FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
             WHERE o.oprname = ANY($2::text[]) AND n.nspname <> 'pg_catalog'
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                               WHERE d.classid = 'pg_catalog.pg_operator'::pg_catalog.regclass
                                 AND d.objid = o.oid AND d.deptype = 'e')) AS operators`;

/**
 * Decides on what {@link hiddenCallsQuery} found: a name that attribute notation would turn into
 * a call of a function outside the allowlist, or a user-defined operator, is refused.
 */
export function refuseHiddenCalls(found: { functions: string[]; operators: string[] }): string | undefined {
  const call = found.functions.find((name) => !isAllowedFunction(name));
  if (call !== undefined) {
    return `${ident(call)} is not allowed: attribute notation (x).${ident(call)} or t.${ident(call)} calls the function ${ident(call)}, which is not on the allowlist`;
  }
  const operator = found.operators[0];
  if (operator !== undefined) {
    return `operator ${operator} is not allowed: only built-in and extension operators`;
  }
  return undefined;
}

/** PostGIS's own reference relations, which a query may name in PostGIS's schema. */
const POSTGIS_RELATIONS: ReadonlySet<string> = new Set([
  'spatial_ref_sys',
  'geometry_columns',
  'geography_columns',
]);

function checkRelation(rangeVar: JsonObject, schemas: ReadonlySet<string>): void {
  const relname = typeof rangeVar.relname === 'string' ? rangeVar.relname : '';
  const schema = typeof rangeVar.schemaname === 'string' ? rangeVar.schemaname : undefined;
  if (typeof rangeVar.catalogname === 'string') {
    throw new Refusal(`cross-database reference ${ident(rangeVar.catalogname)}.… is not allowed`);
  }
  const inCatalog =
    schema === undefined
      ? relname.startsWith('pg_')
      : schema === 'information_schema' || schema.startsWith('pg_');
  const shown = schema === undefined ? ident(relname) : `${ident(schema)}.${ident(relname)}`;
  if (inCatalog) {
    if (SAFE_CATALOG_RELATIONS.has(relname)) return;
    throw new Refusal(`relation ${shown} is not allowed: system catalogs are off limits`);
  }
  // A qualified name must name one of the service's own schemas (ADR 0105): its search_path is
  // those schemas and PostGIS's, and a name is no barrier the database doesn't also enforce.
  if (schema === undefined || schemas.has(schema)) return;
  if (POSTGIS_SCHEMAS.has(schema) && POSTGIS_RELATIONS.has(relname)) return;
  throw new Refusal(
    `relation ${shown} is not allowed: schema ${ident(schema)} is not one of the service's schemas (${[...schemas].map(ident).join(', ')})`,
  );
}

/** The argument of a call, a named argument (`name => value`) unwrapped. */
function argumentValue(arg: unknown): unknown {
  return isObject(arg) && isObject(arg.NamedArgExpr) ? arg.NamedArgExpr.arg : arg;
}

/** Integer types a cast may force an SRID argument to. */
const INTEGER_TYPES: ReadonlySet<string> = new Set([
  'int',
  'int2',
  'int4',
  'int8',
  'integer',
  'smallint',
  'bigint',
]);

/**
 * PROJ parameters a `+proj=` string may carry: projection, datum and unit parameters. Not `init`,
 * `nadgrids`, `geoidgrids`, `grids`, `file` or any other that names a file PROJ reads on the
 * database server (a path can hang the backend or read its files).
 */
const PROJ_PARAMETERS: ReadonlySet<string> = new Set([
  ...['proj', 'ellps', 'datum', 'a', 'b', 'rf', 'f', 'es', 'e', 'R', 'R_A', 'R_V', 'R_a', 'R_g', 'R_h'],
  ...['lat_0', 'lon_0', 'lat_1', 'lat_2', 'lat_ts', 'lon_1', 'lon_2', 'lonc', 'lat_b', 'alpha', 'gamma'],
  ...['k', 'k_0', 'x_0', 'y_0', 'h', 'zone', 'south', 'units', 'to_meter', 'towgs84', 'pm', 'axis'],
  ...['no_defs', 'type', 'wktext', 'over', 'no_uoff', 'no_rot', 'lon_wrap', 'approx', 'guam', 'czech'],
  ...['sweep', 'M', 'n', 'm', 'q', 'W', 'azi', 'tilt', 'o_proj', 'o_lat_p', 'o_lon_p', 'o_alpha'],
  ...['o_lon_c', 'o_lat_c', 'o_lat_1', 'o_lat_2', 'o_lon_1', 'o_lon_2', 'ellps_b', 'PANGLE'],
]);
/** Operations that exist to read grid or model files, or to chain others. */
const PROJ_DENIED_OPERATIONS: ReadonlySet<string> = new Set([
  ...['pipeline', 'hgridshift', 'vgridshift', 'xyzgridshift', 'gridshift', 'tinshift', 'deformation'],
  ...['defmodel', 'push', 'pop'],
]);

/** Why a PROJ definition given as text is refused; undefined when it is an authority code or a plain +proj string. */
function projRefusal(text: string): string | undefined {
  if (/^(EPSG|ESRI):\d{1,6}$/i.test(text)) return undefined;
  const tokens = text.trim().split(/\s+/);
  if (!tokens[0]?.startsWith('+proj=')) {
    return 'only EPSG:<code>, ESRI:<code> or a +proj= string';
  }
  for (const token of tokens) {
    const m = /^\+([A-Za-z_][A-Za-z0-9_]*)(?:=([A-Za-z0-9_.,+-]*))?$/.exec(token);
    if (!m) return `PROJ parameter ${JSON.stringify(token.slice(0, 40))} is not allowed`;
    const [, key, value] = m as unknown as [string, string, string | undefined];
    if (!PROJ_PARAMETERS.has(key))
      return `PROJ parameter +${key} is not allowed (it may name a file on the server)`;
    if (key === 'proj' && (value === undefined || PROJ_DENIED_OPERATIONS.has(value))) {
      return `PROJ operation +proj=${value ?? ''} is not allowed`;
    }
  }
  return undefined;
}

/**
 * ST_Transform's target (and source) CRS: an integer SRID, anything cast to an integer type, or a
 * PROJ definition literal from the allowlist. Text computed at run time could name a file.
 */
function checkTransformArguments(call: JsonObject): void {
  const args = Array.isArray(call.args) ? call.args : [];
  for (const raw of args.slice(1)) {
    const arg = argumentValue(raw);
    const constant = isObject(arg) && isObject(arg.A_Const) ? arg.A_Const : undefined;
    if (constant && isObject(constant.ival)) continue;
    if (constant && isObject(constant.sval) && typeof constant.sval.sval === 'string') {
      const why = projRefusal(constant.sval.sval);
      if (why === undefined) continue;
      throw new Refusal(`st_transform's PROJ definition is not allowed: ${why}; give an SRID (an integer)`);
    }
    const cast = isObject(arg) && isObject(arg.TypeCast) ? arg.TypeCast : undefined;
    const type = cast && isObject(cast.typeName) ? nameParts(cast.typeName.names) : undefined;
    if (type && INTEGER_TYPES.has(type[type.length - 1] as string)) continue;
    // ST_SRID(geom) returns an integer.
    const call = isObject(arg) && isObject(arg.FuncCall) ? arg.FuncCall : undefined;
    if (call && nameParts(call.funcname)?.at(-1) === 'st_srid') continue;
    throw new Refusal(
      'st_transform takes an SRID (an integer literal, or an expression cast to integer such as srid::integer) or a literal EPSG:/+proj= definition',
    );
  }
}

function checkOperator(list: unknown, gathered: Gathered): void {
  const parts = nameParts(list);
  if (parts !== undefined && parts.length > 1 && !(parts.length === 2 && parts[0] === 'pg_catalog')) {
    throw new Refusal(`operator OPERATOR(${parts.join('.')}) is not allowed: only pg_catalog operators`);
  }
  if (parts?.length === 1) gathered.operators.add(parts[0] as string);
}

/** A statement node's SQL keyword(s) for messages, e.g. `DeleteStmt` → `DELETE`. */
function statementName(type: string, body: unknown): string {
  const node = isObject(body) ? body : {};
  switch (type) {
    case 'VariableSetStmt':
      return String(node.kind ?? '').startsWith('VAR_RESET') ? 'RESET' : 'SET';
    case 'VariableShowStmt':
      return 'SHOW';
    case 'TransactionStmt':
      return String(node.kind ?? 'TRANSACTION')
        .replace(/^TRANS_STMT_/, '')
        .replaceAll('_', ' ');
    case 'ExplainStmt': {
      const analyze = Array.isArray(node.options)
        ? node.options.some((o) => isObject(o) && isObject(o.DefElem) && o.DefElem.defname === 'analyze')
        : false;
      const query = isObject(node.query) ? node.query : {};
      const inner = Object.keys(query)[0];
      const of = inner === undefined ? '' : ` ${statementName(inner, query[inner])}`;
      return `EXPLAIN${analyze ? ' ANALYZE' : ''}${of}`;
    }
    case 'VacuumStmt':
      return node.is_vacuumcmd ? 'VACUUM' : 'ANALYZE';
    case 'GrantStmt':
      return node.is_grant ? 'GRANT' : 'REVOKE';
    case 'GrantRoleStmt':
      return node.is_grant ? 'GRANT (role)' : 'REVOKE (role)';
    case 'CreateTableAsStmt':
      return 'CREATE TABLE AS';
    case 'DeclareCursorStmt':
      return 'DECLARE CURSOR';
    case 'ClosePortalStmt':
      return 'CLOSE';
    case 'IndexStmt':
      return 'CREATE INDEX';
    case 'CreateStmt':
      return 'CREATE TABLE';
    case 'ViewStmt':
      return 'CREATE VIEW';
    case 'RuleStmt':
      return 'CREATE RULE';
    case 'DoStmt':
      return 'DO';
    case 'SecLabelStmt':
      return 'SECURITY LABEL';
    default:
      return type
        .replace(/Stmt$/, '')
        .replace(/([a-z])([A-Z])/g, '$1 $2')
        .toUpperCase();
  }
}

/** Checks one node (`{Type: body}` entry); throws a Refusal. */
function checkNode(type: string, body: unknown, gathered: Gathered, schemas: ReadonlySet<string>): void {
  if (!isObject(body)) return;
  switch (type) {
    case 'A_Indirection':
      for (const step of Array.isArray(body.indirection) ? body.indirection : []) {
        const name = isObject(step) && isObject(step.String) ? step.String.sval : undefined;
        if (typeof name === 'string') gatherAttribute(name, gathered);
      }
      return;
    case 'ColumnRef': {
      const fields = Array.isArray(body.fields) ? body.fields : [];
      const last = fields[fields.length - 1];
      const name = isObject(last) && isObject(last.String) ? last.String.sval : undefined;
      if (fields.length >= 2 && typeof name === 'string') gatherAttribute(name, gathered);
      return;
    }
    case 'XmlExpr':
    case 'XmlSerialize':
    case 'RangeTableFunc':
      throw new Refusal('XML functions are not allowed (XMLPARSE, XMLTABLE, XMLSERIALIZE …)');
    case 'SelectStmt':
      if (body.intoClause !== undefined) throw new Refusal('SELECT INTO is not allowed (it creates a table)');
      return;
    case 'LockingClause':
      throw new Refusal(
        `locking clause ${LOCKING_CLAUSES[String(body.strength)] ?? 'FOR …'} is not allowed (queries are read-only)`,
      );
    case 'FuncCall':
      checkFunction(body);
      if (nameParts(body.funcname)?.at(-1) === 'st_transform') checkTransformArguments(body);
      return;
    case 'RangeVar':
      checkRelation(body, schemas);
      return;
    case 'A_Expr':
      checkOperator(body.name, gathered);
      return;
    case 'SubLink':
      checkOperator(body.operName, gathered);
      return;
    case 'SortBy':
      checkOperator(body.useOp, gathered);
      return;
    case 'RangeTableSample': {
      const method = nameParts(body.method) ?? [];
      const name = method.length === 1 ? (method[0] as string) : '';
      if (!TABLESAMPLE_METHODS.has(name)) {
        throw new Refusal(`TABLESAMPLE method ${method.map(ident).join('.')} is not allowed`);
      }
      return;
    }
    case 'SQLValueFunction':
      if (!ALLOWED_SQL_VALUE_FUNCTIONS.has(String(body.op))) {
        const shown = String(body.op).replace(/^SVFOP_/, '');
        throw new Refusal(`${shown} is not allowed (it reveals server state)`);
      }
      return;
    default:
      if (type.endsWith('Stmt')) {
        throw new Refusal(
          `data-modifying ${statementName(type, body)} inside WITH is not allowed (only read-only SELECT CTEs)`,
        );
      }
  }
}

/** Walks the whole tree iteratively (deeply nested SQL must not overflow the stack). */
function walk(root: unknown, schemas: ReadonlySet<string>): Gathered {
  const gathered: Gathered = { attributeNames: new Set(), operators: new Set() };
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        // Node types are UpperCamel (`SelectStmt`, `A_Expr`); fields are lowerCamel/snake. A
        // TypeName is not wrapped: it is the value of a `typeName` field (casts, column lists).
        if (/^[A-Z]/.test(key)) checkNode(key, child, gathered, schemas);
        else if (key === 'typeName' && isObject(child)) checkType(child);
        if (typeof child === 'object' && child !== null) stack.push(child);
      }
    }
  }
  return gathered;
}

/**
 * A parse failure caused by the SQL becomes a refusal; a failure of the parser itself (the WASM
 * module could not be loaded, aborted) is rethrown so the caller answers 5xx instead of blaming
 * the query.
 */
function parseError(error: unknown): string {
  if (error instanceof RangeError) return 'syntax error: the SQL is too deeply nested to check';
  if (!(error instanceof Error)) throw error;
  if (error.name !== 'SqlError') {
    // libpg-query's own input errors (e.g. allocation failure on huge input) are still the SQL's.
    if (error.message.startsWith('Failed to parse query')) return `syntax error: ${error.message}`;
    throw new Error(`the SQL parser failed: ${error.message}`, { cause: error });
  }
  const message = error.message;
  if (message.startsWith('memory exhausted')) {
    return `syntax error: the SQL is too deeply nested (${message})`;
  }
  const details = (error as { sqlDetails?: { cursorPosition?: unknown } }).sqlDetails;
  const cursor = typeof details?.cursorPosition === 'number' ? details.cursorPosition : 0;
  const at = cursor > 0 ? ` (at character ${cursor + 1})` : '';
  return message.startsWith('syntax error') ? `${message}${at}` : `syntax error: ${message}${at}`;
}

/**
 * Decides whether `sql` may be run against a data source whose service reads `schemas` (its
 * connection's list; `public` when it names none): a schema-qualified relation must be in it.
 * Refusals carry a message fit for the API's `{valid: false, error}`. Never throws because of the
 * input; it throws only when the parser itself is broken (e.g. its `.wasm` file is missing from
 * the bundle).
 */
export async function checkSql(sql: string, schemas?: readonly string[]): Promise<SqlCheck> {
  if (typeof sql !== 'string') return { ok: false, error: 'SQL must be a string' };
  const bytes = Buffer.byteLength(sql, 'utf8');
  if (bytes > MAX_SQL_BYTES) {
    return {
      ok: false,
      error: `SQL is too large: ${bytes} bytes (the limit is ${MAX_SQL_BYTES} bytes, 64 KiB)`,
    };
  }
  // The parser reads a C string: text after a NUL would be invisible to it but not to a driver.
  if (sql.includes('\0')) return { ok: false, error: 'SQL must not contain NUL characters' };
  if (sql.trim() === '') return { ok: false, error: 'no SQL statement found: the input is empty' };

  const { parse } = await sqlParser();
  let tree: Awaited<ReturnType<typeof ParseSql>>;
  try {
    tree = await parse(sql);
  } catch (error) {
    return { ok: false, error: parseError(error) };
  }

  const stmts = Array.isArray(tree?.stmts) ? tree.stmts : [];
  if (stmts.length === 0) {
    return { ok: false, error: 'no SQL statement found: the input is empty or only comments' };
  }
  if (stmts.length > 1) {
    return { ok: false, error: `exactly one statement is allowed, found ${stmts.length}` };
  }
  const stmt: unknown = stmts[0]?.stmt;
  const type = isObject(stmt) ? Object.keys(stmt)[0] : undefined;
  if (!isObject(stmt) || type === undefined) return { ok: false, error: 'no SQL statement found' };
  if (type !== 'SelectStmt') {
    return { ok: false, error: `only SELECT statements are allowed, got ${statementName(type, stmt[type])}` };
  }

  let gathered: Gathered;
  try {
    gathered = walk(stmt, new Set(schemas?.length ? schemas : ['public']));
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, error: error.message };
    return {
      ok: false,
      error: `the SQL could not be checked: ${error instanceof Error ? error.message : error}`,
    };
  }
  return { ok: true, attributeNames: [...gathered.attributeNames], operators: [...gathered.operators] };
}
