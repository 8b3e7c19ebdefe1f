import { describe, expect, it } from 'vitest';
import { checkSql, MAX_SQL_BYTES, refuseHiddenCalls } from '#datasources/sql-guard.ts';

/** [case, SQL, what the error must say] */
const hostile: [string, string, RegExp][] = [
  // shape: empty, several statements
  ['empty input', '', /empty/],
  ['whitespace only', ' \n\t ', /empty/],
  ['only a line comment', '-- nothing here', /empty or only comments/],
  ['only a block comment', '/* SELECT 1 */', /empty or only comments/],
  ['a lone semicolon', ';', /empty or only comments/],
  ['two selects', 'SELECT 1; SELECT 2', /exactly one statement.*found 2/],
  ['a select followed by a drop', 'SELECT 1; DROP TABLE x', /exactly one statement.*found 2/],
  ['a drop after a nested comment closes', 'SELECT 1 /* a /* b */ */; DROP TABLE x', /found 2/],
  ['a drop after a dollar-quoted string', 'SELECT $a$ x; $a$; DROP TABLE x', /found 2/],
  ['a drop after a string with a doubled quote', "SELECT 'it''s'; DROP TABLE x", /found 2/],
  ['a drop after a line comment ends', 'SELECT 1 -- harmless\n; DROP TABLE x', /found 2/],
  // DML and DDL
  ['INSERT', 'INSERT INTO t VALUES (1)', /only SELECT.*got INSERT/],
  ['UPDATE', 'UPDATE t SET a = 1', /only SELECT.*got UPDATE/],
  ['DELETE', 'DELETE FROM t', /only SELECT.*got DELETE/],
  ['MERGE', 'MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE', /only SELECT.*got MERGE/],
  ['DROP TABLE', 'DROP TABLE roads', /only SELECT.*got DROP/],
  ['CREATE TABLE', 'CREATE TABLE t (a int)', /only SELECT.*got CREATE TABLE/],
  ['CREATE TABLE AS', 'CREATE TABLE t AS SELECT 1', /only SELECT.*got CREATE TABLE AS/],
  ['ALTER TABLE', 'ALTER TABLE t ADD COLUMN b int', /only SELECT.*got ALTER TABLE/],
  ['TRUNCATE', 'TRUNCATE roads', /only SELECT.*got TRUNCATE/],
  ['GRANT', 'GRANT SELECT ON roads TO public', /only SELECT.*got GRANT/],
  ['REVOKE', 'REVOKE SELECT ON roads FROM public', /only SELECT.*got REVOKE/],
  ['CREATE FUNCTION', "CREATE FUNCTION f() RETURNS int AS 'SELECT 1' LANGUAGE sql", /got CREATE FUNCTION/],
  ['CREATE EXTENSION', 'CREATE EXTENSION dblink', /only SELECT.*got CREATE EXTENSION/],
  // utility statements
  ['COPY TO PROGRAM', "COPY (SELECT 1) TO PROGRAM 'id'", /only SELECT.*got COPY/],
  ['COPY FROM a file', "COPY roads FROM '/etc/passwd'", /only SELECT.*got COPY/],
  ['SET', 'SET statement_timeout = 0', /only SELECT.*got SET/],
  ['SET LOCAL', "SET LOCAL search_path = 'evil'", /only SELECT.*got SET/],
  ['RESET', 'RESET ALL', /only SELECT.*got RESET/],
  ['SHOW', 'SHOW search_path', /only SELECT.*got SHOW/],
  ['CALL', 'CALL do_things()', /only SELECT.*got CALL/],
  ['DO block', 'DO $$ BEGIN PERFORM pg_sleep(10); END $$', /only SELECT.*got DO/],
  ['EXPLAIN ANALYZE DELETE', 'EXPLAIN ANALYZE DELETE FROM roads', /got EXPLAIN ANALYZE DELETE/],
  ['EXPLAIN (ANALYZE) of a select', 'EXPLAIN (ANALYZE) SELECT 1', /got EXPLAIN ANALYZE SELECT/],
  ['LISTEN', 'LISTEN events', /only SELECT.*got LISTEN/],
  ['NOTIFY', "NOTIFY events, 'x'", /only SELECT.*got NOTIFY/],
  ['PREPARE', 'PREPARE p AS DELETE FROM t', /only SELECT.*got PREPARE/],
  ['EXECUTE', 'EXECUTE p', /only SELECT.*got EXECUTE/],
  ['VACUUM', 'VACUUM FULL roads', /only SELECT.*got VACUUM/],
  ['ANALYZE', 'ANALYZE roads', /only SELECT.*got ANALYZE/],
  ['LOCK', 'LOCK TABLE roads IN ACCESS EXCLUSIVE MODE', /only SELECT.*got LOCK/],
  ['BEGIN', 'BEGIN', /only SELECT.*got BEGIN/],
  ['COMMIT', 'COMMIT', /only SELECT.*got COMMIT/],
  ['DECLARE CURSOR', 'DECLARE c CURSOR FOR SELECT 1', /only SELECT.*got DECLARE CURSOR/],
  ['ALTER SYSTEM', "ALTER SYSTEM SET log_statement = 'none'", /only SELECT.*got ALTER SYSTEM/],
  ['LOAD', "LOAD '/tmp/evil.so'", /only SELECT.*got LOAD/],
  // SELECT INTO and locking clauses
  ['SELECT INTO', 'SELECT * INTO stolen FROM roads', /SELECT INTO is not allowed/],
  ['SELECT INTO TEMP', 'SELECT 1 AS a INTO TEMP t', /SELECT INTO is not allowed/],
  ['FOR UPDATE', 'SELECT * FROM roads FOR UPDATE', /locking clause FOR UPDATE/],
  ['FOR NO KEY UPDATE', 'SELECT * FROM roads FOR NO KEY UPDATE', /locking clause FOR NO KEY UPDATE/],
  ['FOR SHARE', 'SELECT * FROM roads FOR SHARE', /locking clause FOR SHARE/],
  ['FOR KEY SHARE', 'SELECT * FROM roads FOR KEY SHARE', /locking clause FOR KEY SHARE/],
  ['FOR UPDATE in a subquery', 'SELECT * FROM (SELECT * FROM roads FOR UPDATE SKIP LOCKED) s', /FOR UPDATE/],
  ['FOR SHARE in a CTE', 'WITH r AS (SELECT * FROM roads FOR SHARE NOWAIT) SELECT * FROM r', /FOR SHARE/],
  [
    'FOR UPDATE OF a table in a union branch',
    'SELECT 1 UNION (SELECT a FROM t FOR UPDATE OF t)',
    /FOR UPDATE/,
  ],
  // data-modifying CTEs
  [
    'DELETE in WITH',
    'WITH d AS (DELETE FROM roads RETURNING *) SELECT * FROM d',
    /data-modifying DELETE inside WITH/,
  ],
  ['INSERT in WITH', 'WITH i AS (INSERT INTO t VALUES (1) RETURNING *) SELECT 1', /data-modifying INSERT/],
  ['UPDATE in WITH', 'WITH u AS (UPDATE t SET a = 1 RETURNING a) SELECT * FROM u', /data-modifying UPDATE/],
  [
    'MERGE in WITH',
    'WITH m AS (MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE RETURNING t.*) SELECT * FROM m',
    /data-modifying MERGE/,
  ],
  [
    'a DELETE CTE nested in a subquery',
    'SELECT * FROM (WITH d AS (DELETE FROM roads RETURNING id) SELECT id FROM d) s',
    /data-modifying DELETE/,
  ],
  [
    'a DELETE CTE nested in a scalar subquery of a read-only CTE',
    'WITH a AS (SELECT (WITH d AS (DELETE FROM t RETURNING 1) SELECT 1 FROM d) AS x) SELECT * FROM a',
    /data-modifying DELETE/,
  ],
  // functions outside the allowlist, wherever they hide
  ['pg_sleep', 'SELECT pg_sleep(10)', /function pg_sleep is not allowed/],
  ['pg_sleep in a subquery', 'SELECT * FROM roads WHERE id = (SELECT pg_sleep(10))', /function pg_sleep/],
  ['pg_sleep in a CTE', 'WITH s AS (SELECT pg_sleep(10)) SELECT * FROM s', /function pg_sleep/],
  ['pg_sleep in ORDER BY', 'SELECT id FROM roads ORDER BY pg_sleep(1)', /function pg_sleep/],
  ['pg_sleep as a function argument', "SELECT coalesce(pg_sleep(1)::text, 'x')", /function pg_sleep/],
  ['pg_sleep in CASE', 'SELECT CASE WHEN id > 0 THEN pg_sleep(1) END FROM roads', /function pg_sleep/],
  ['pg_sleep in a window clause', 'SELECT row_number() OVER (ORDER BY pg_sleep(1)) FROM roads', /pg_sleep/],
  [
    'pg_sleep in a named window',
    'SELECT rank() OVER w FROM t WINDOW w AS (PARTITION BY pg_sleep(1))',
    /pg_sleep/,
  ],
  ['pg_sleep in a lateral join', 'SELECT * FROM roads r, LATERAL (SELECT pg_sleep(1)) s', /pg_sleep/],
  ['pg_sleep in FROM', 'SELECT * FROM pg_sleep(1)', /function pg_sleep/],
  ['pg_sleep in ROWS FROM', 'SELECT * FROM ROWS FROM (generate_series(1, 2), pg_sleep(1))', /pg_sleep/],
  ['pg_sleep in GROUP BY/HAVING', 'SELECT 1 FROM t GROUP BY a HAVING pg_sleep(1) IS NULL', /pg_sleep/],
  [
    'pg_sleep in an aggregate FILTER',
    'SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM t',
    /pg_sleep/,
  ],
  ['pg_sleep in a union branch', 'SELECT 1 UNION ALL SELECT pg_sleep(1)::int', /pg_sleep/],
  ['pg_sleep in VALUES', 'VALUES (1), (pg_sleep(1)::int)', /pg_sleep/],
  [
    'pg_sleep in a recursive CTE',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT pg_sleep(1)::int) TABLE r',
    /pg_sleep/,
  ],
  ['pg_catalog.pg_sleep', 'SELECT pg_catalog.pg_sleep(10)', /function pg_catalog\.pg_sleep is not allowed/],
  ['quoted "pg_sleep"', 'SELECT "pg_sleep"(10)', /function pg_sleep is not allowed/],
  ['quoted upper-case "PG_SLEEP"', 'SELECT "PG_SLEEP"(10)', /function "PG_SLEEP" is not allowed/],
  ['mixed-case Pg_Sleep', 'SELECT Pg_Sleep(10)', /function pg_sleep is not allowed/],
  ['a Unicode-escaped pg_sleep', 'SELECT U&"pg\\005fsleep"(10)', /function pg_sleep is not allowed/],
  ['pg_sleep_for', "SELECT pg_sleep_for('10 seconds')", /function pg_sleep_for/],
  ['dblink', "SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(a int)", /function dblink is not allowed/],
  ['dblink_exec', "SELECT dblink_exec('host=evil', 'DROP TABLE x')", /function dblink_exec/],
  ['set_config', "SELECT set_config('statement_timeout', '0', false)", /function set_config/],
  ['current_setting', "SELECT current_setting('data_directory')", /function current_setting/],
  ['lo_import', "SELECT lo_import('/etc/passwd')", /function lo_import is not allowed/],
  ['lo_export', "SELECT lo_export(1, '/tmp/x')", /function lo_export/],
  ['pg_read_file', "SELECT pg_read_file('/etc/passwd')", /function pg_read_file is not allowed/],
  ['pg_read_binary_file', "SELECT pg_read_binary_file('/etc/passwd')", /function pg_read_binary_file/],
  ['pg_ls_dir', "SELECT pg_ls_dir('.')", /function pg_ls_dir/],
  ['pg_stat_file', "SELECT pg_stat_file('postgresql.conf')", /function pg_stat_file/],
  ['nextval', "SELECT nextval('roads_id_seq')", /function nextval is not allowed/],
  ['setval in a WHERE subquery', "SELECT * FROM t WHERE id IN (SELECT setval('s', 1))", /function setval/],
  ['currval', "SELECT currval('s')", /function currval/],
  ['txid_current', 'SELECT txid_current()', /function txid_current is not allowed/],
  ['pg_advisory_lock', 'SELECT pg_advisory_lock(42)', /function pg_advisory_lock is not allowed/],
  ['pg_terminate_backend', 'SELECT pg_terminate_backend(1234)', /function pg_terminate_backend/],
  ['pg_cancel_backend', 'SELECT pg_cancel_backend(1234)', /function pg_cancel_backend/],
  ['pg_reload_conf', 'SELECT pg_reload_conf()', /function pg_reload_conf/],
  ['pg_rotate_logfile', 'SELECT pg_rotate_logfile()', /function pg_rotate_logfile/],
  ['pg_notify', "SELECT pg_notify('ch', 'x')", /function pg_notify/],
  ['query_to_xml', "SELECT query_to_xml('SELECT pg_sleep(10)', true, true, '')", /function query_to_xml/],
  ['ts_stat, which runs SQL text', "SELECT * FROM ts_stat('SELECT pg_sleep(10)')", /function ts_stat/],
  ['version()', 'SELECT version()', /function version is not allowed/],
  ['CURRENT_USER', 'SELECT current_user', /CURRENT_USER is not allowed/],
  [
    'an unexpected schema on an allowed name',
    "SELECT evil.lower('a')",
    /schema evil is unexpected for lower/,
  ],
  ['an unexpected schema on a PostGIS name', 'SELECT evil.st_buffer(geom, 1) FROM t', /schema evil/],
  ['a three-part function name', 'SELECT a.b.c(1)', /too many name parts/],
  [
    'quoted upper-case "ST_Buffer"',
    'SELECT "ST_Buffer"(geom, 1) FROM t',
    /case-sensitive: did you mean st_buffer/,
  ],
  [
    'ST_MapAlgebra (evaluates SQL text)',
    "SELECT ST_MapAlgebra(rast, 1, '32BF', 'pg_sleep(1)') FROM r",
    /st_mapalgebra/,
  ],
  ['ST_FromGDALRaster', 'SELECT ST_FromGDALRaster(data) FROM blobs', /function st_fromgdalraster/],
  ['ST_InitTopoGeo (creates a schema)', "SELECT ST_InitTopoGeo('t')", /function st_inittopogeo/],
  ['a qualified operator', 'SELECT 1 OPERATOR(evil.+) 2', /operator OPERATOR\(evil\.\+\) is not allowed/],
  ['an unknown TABLESAMPLE method', 'SELECT * FROM roads TABLESAMPLE evil(1)', /TABLESAMPLE method evil/],
  // system catalogs
  ['pg_shadow', 'SELECT usename, passwd FROM pg_shadow', /relation pg_shadow is not allowed/],
  ['pg_catalog.pg_authid', 'SELECT * FROM pg_catalog.pg_authid', /relation pg_catalog\.pg_authid/],
  [
    'pg_user_mappings in a subquery',
    'SELECT (SELECT umoptions FROM pg_user_mappings LIMIT 1)',
    /pg_user_mappings/,
  ],
  ['pg_stat_activity joined', 'SELECT r.* FROM roads r JOIN pg_stat_activity a ON true', /pg_stat_activity/],
  ['TABLE pg_settings', 'TABLE pg_settings', /relation pg_settings/],
  ['information_schema', 'SELECT * FROM information_schema.tables', /information_schema\.tables/],
  [
    'pg_largeobject in a CTE',
    'WITH l AS (SELECT data FROM pg_largeobject) SELECT * FROM l',
    /pg_largeobject/,
  ],
  ['a cross-database reference', 'SELECT * FROM otherdb.public.roads', /cross-database reference/],
  // parser-level refusals
  ['a syntax error', 'SELEC 1', /^syntax error at or near "SELEC"/],
  ['an unterminated string', "SELECT 'abc", /^syntax error: unterminated quoted string.*at character 8/],
  ['an unterminated comment', 'SELECT 1 /* never closed', /^syntax error: unterminated \/\* comment/],
  ['a dangling parenthesis', 'SELECT (1', /^syntax error/],
  ['a NUL byte hiding a second statement', 'SELECT 1\0; DROP TABLE x', /NUL characters/],
  ['SQL over 64 KiB', `SELECT 1 -- ${'x'.repeat(64 * 1024)}`, /too large.*64 KiB/],
  ['SQL of 1 MiB', `SELECT 1 -- ${'x'.repeat(1024 * 1024)}`, /too large.*64 KiB/],
  [
    'deeply nested parentheses',
    `SELECT ${'('.repeat(20_000)}1${')'.repeat(20_000)}`,
    /^syntax error.*nested/,
  ],
  ['a deeply nested expression', `SELECT ${'1+'.repeat(200_000)}1`, /too large/],
  // attribute notation: (x).f and t.f call f(x) / f(t) without a FuncCall node
  [
    '(x).pg_sleep',
    'SELECT id, geom, (3::float8).pg_sleep AS s FROM t',
    /pg_sleep is not allowed: attribute notation/,
  ],
  [
    '(x).current_setting',
    "SELECT ('server_version'::text).current_setting",
    /current_setting is not allowed/,
  ],
  ['(x).pg_get_userbyid', 'SELECT (10::oid).pg_get_userbyid', /pg_get_userbyid is not allowed/],
  ['(x).pg_advisory_lock', 'SELECT (4242::bigint).pg_advisory_lock', /pg_advisory_lock is not allowed/],
  ['(x).pg_terminate_backend', 'SELECT (1::int).pg_terminate_backend', /pg_terminate_backend is not allowed/],
  ['(x).pg_read_file, spaced', "SELECT ( '/etc/passwd' ) . pg_read_file", /pg_read_file is not allowed/],
  ['(x)."pg_sleep", quoted', 'SELECT (3::float8)."pg_sleep"', /pg_sleep is not allowed/],
  ['((x)).nextval', "SELECT (('s'::text)).nextval", /nextval is not allowed/],
  ['(x).set_config chain', 'SELECT ((1)).f.set_config FROM t', /set_config is not allowed/],
  ['t.pg_sleep on a table alias', 'SELECT t.pg_sleep FROM t', /pg_sleep is not allowed/],
  [
    's.t.pg_sleep on a column',
    'SELECT s.x.pg_sleep FROM (SELECT 3::float8 AS x) s',
    /pg_sleep is not allowed/,
  ],
  ['(x).lo_export', 'SELECT (1::oid).lo_unlink', /lo_unlink is not allowed/],
  ['(x).dblink', "SELECT ('host=evil'::text).dblink_connect", /dblink_connect is not allowed/],
  ['(x).txid_current_if_assigned', 'SELECT (1).txid_status', /txid_status is not allowed/],
  ['in a subquery', 'SELECT * FROM (SELECT (3::float8).pg_sleep) q', /pg_sleep is not allowed/],
  ['in ORDER BY', 'SELECT id FROM t ORDER BY (id::float8).pg_sleep', /pg_sleep is not allowed/],
  ['in a CTE', 'WITH a AS (SELECT (1::float8).pg_sleep) SELECT * FROM a', /pg_sleep is not allowed/],
  [
    'in a lateral join',
    'SELECT * FROM t, LATERAL (SELECT (t.id::float8).pg_sleep) s',
    /pg_sleep is not allowed/,
  ],
  // casts run input/cast functions: only built-in value types and PostGIS's
  ['::regclass', "SELECT 'secrets'::regclass", /type regclass is not allowed \(reg\* types/],
  ['::regproc', "SELECT 'pg_sleep'::regproc", /type regproc is not allowed/],
  ['::regrole', "SELECT 'postgres'::regrole", /type regrole is not allowed/],
  [
    'pg_catalog.regnamespace',
    "SELECT 'public'::pg_catalog.regnamespace",
    /type pg_catalog.regnamespace is not allowed/,
  ],
  ['a domain cast', 'SELECT 1::mydomain', /type mydomain is not allowed \(only built-in and PostGIS types/],
  ['CAST AS a custom type', 'SELECT CAST(x AS evil_type) FROM t', /type evil_type is not allowed/],
  ['a typed literal of a custom type', "SELECT evil_type 'x'", /type evil_type is not allowed/],
  ['a schema-qualified custom type', 'SELECT x::public.mytype FROM t', /type public.mytype is not allowed/],
  ['an array of a custom type', "SELECT '{}'::evil[]", /type evil is not allowed/],
  ['::xml', "SELECT '<a/>'::xml", /type xml is not allowed/],
  [
    'a column definition list',
    "SELECT * FROM json_to_record('{}') AS x(a int, b evil)",
    /type evil is not allowed/,
  ],
  [
    'PostGIS types in a foreign schema',
    'SELECT x::evil.geometry FROM t',
    /type evil.geometry is not allowed/,
  ],
  ['a built-in type from another schema', 'SELECT x::evil.int4 FROM t', /type evil.int4 is not allowed/],
  [
    'JSON_VALUE RETURNING a domain',
    "SELECT JSON_VALUE(j, '$.a' RETURNING mydom) FROM t",
    /type mydom is not allowed/,
  ],
  // XML: parsing documents and XPath are out
  ['XMLPARSE', "SELECT xmlparse(document '<a/>')", /XML functions are not allowed/],
  ['XMLELEMENT', "SELECT xmlelement(name a, 'x')", /XML functions are not allowed/],
  ['XMLSERIALIZE', 'SELECT xmlserialize(content x AS text) FROM t', /XML functions are not allowed/],
  ['XMLTABLE', "SELECT * FROM XMLTABLE('/a' PASSING x COLUMNS b int) AS q", /XML functions are not allowed/],
  ['IS DOCUMENT', 'SELECT x IS DOCUMENT FROM t', /XML functions are not allowed/],
];

const benign: [string, string][] = [
  ['a plain select', 'SELECT id, name, geom FROM roads'],
  ['a bare SELECT with a star and WHERE', "SELECT * FROM public.roads WHERE kind = 'primary' LIMIT 10"],
  [
    'joins',
    'SELECT r.id, c.name FROM roads r JOIN cities c ON ST_Intersects(r.geom, c.geom) LEFT JOIN regions g USING (region_id)',
  ],
  ['a CTE', 'WITH big AS (SELECT * FROM cities WHERE pop > 1e6) SELECT name, geom FROM big'],
  [
    'a recursive CTE',
    'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT i FROM n',
  ],
  [
    'UNION / INTERSECT / EXCEPT',
    '(SELECT id FROM a UNION SELECT id FROM b) INTERSECT SELECT id FROM c EXCEPT SELECT 1',
  ],
  ['VALUES', "VALUES (1, 'a'), (2, 'b')"],
  [
    'window functions',
    'SELECT id, row_number() OVER (PARTITION BY kind ORDER BY id), rank() OVER w, lag(id) OVER w FROM roads WINDOW w AS (ORDER BY id)',
  ],
  [
    'aggregates',
    "SELECT kind, count(*), sum(len), avg(len), string_agg(name, ', ' ORDER BY name), array_agg(id) FILTER (WHERE id > 0) FROM roads GROUP BY kind HAVING count(*) > 1",
  ],
  [
    'a vector-tile query',
    `SELECT ST_AsMVT(q, 'roads') FROM (
       SELECT id, ST_AsMVTGeom(ST_Transform(geom, 3857), ST_TileEnvelope(12, 2048, 1361)) AS geom
       FROM roads
       WHERE geom && ST_Transform(ST_MakeEnvelope(-1, 50, 1, 52, 4326), ST_SRID(geom))
     ) q`,
  ],
  [
    'ST_Buffer / ST_Intersects / ST_Area',
    'SELECT ST_Area(ST_Buffer(geom::geography, 100)) FROM p WHERE ST_Intersects(geom, geom)',
  ],
  [
    'PostGIS qualified with public',
    'SELECT public.ST_AsGeoJSON(geom), geometrytype(geom), postgis_version() FROM t',
  ],
  [
    'casts',
    "SELECT id::text, CAST(pop AS bigint), '2024-01-01'::date, geom::geography, int4('3'), '{1,2}'::int[] FROM t",
  ],
  ['CASE', "SELECT CASE WHEN pop > 1000 THEN 'big' WHEN pop IS NULL THEN NULL ELSE 'small' END FROM cities"],
  [
    'jsonb operators and builders',
    `SELECT props->>'name', props #> '{a,b}', jsonb_build_object('id', id), jsonb_path_query_first(props, '$.a')
     FROM t WHERE props @> '{"kind": "x"}' AND props ? 'name'`,
  ],
  [
    'string functions',
    "SELECT upper(name), concat_ws(' ', a, b), regexp_replace(name, '\\s+', ' ', 'g'), split_part(name, ',', 1), trim(both ' ' from name), substring(name from 1 for 3), position('a' in name), name || '!' FROM t",
  ],
  [
    'date/time functions',
    "SELECT now(), current_date, date_trunc('day', ts), extract(year from ts), ts AT TIME ZONE 'UTC', age(ts), ts + interval '1 day' FROM t",
  ],
  ['conditionals', 'SELECT coalesce(a, b, 0), nullif(a, 0), greatest(a, b), least(a, b) FROM t'],
  ['a SQL-injection-looking string literal', "SELECT * FROM roads WHERE name = 'DROP TABLE x; --'"],
  ['a trailing semicolon', 'SELECT 1;'],
  ['a trailing semicolon and comment', 'SELECT 1; -- done\n'],
  ['comments everywhere', '-- leading\nSELECT /* inline; DROP TABLE x */ 1 -- trailing; DROP TABLE y'],
  ['a semicolon inside nested comments', 'SELECT 1 /* a /* b */ ; DROP TABLE x; */'],
  ['a semicolon inside a dollar-quoted string', 'SELECT $tag$ ; DROP TABLE x; $tag$ AS s'],
  ['an escape string with an escaped quote', "SELECT E'\\';DROP TABLE x; --' AS s"],
  [
    'EXISTS and IN subqueries',
    'SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.id = a.id) AND a.k IN (SELECT k FROM c)',
  ],
  [
    'a lateral generate_series',
    'SELECT r.id, g.n FROM roads r CROSS JOIN LATERAL generate_series(1, 3) AS g(n)',
  ],
  ['pg_catalog-qualified built-in', 'SELECT pg_catalog.lower(name), pg_catalog.count(*) FROM t GROUP BY 1'],
  ['spatial_ref_sys', "SELECT srid, auth_name FROM spatial_ref_sys WHERE auth_name = 'EPSG'"],
  ['a safe catalog view', 'SELECT name, utc_offset FROM pg_timezone_names'],
  [
    'DISTINCT ON, OFFSET and FETCH',
    'SELECT DISTINCT ON (kind) kind, id FROM t ORDER BY kind, id OFFSET 1 FETCH FIRST 5 ROWS ONLY',
  ],
  ['TABLESAMPLE', 'SELECT * FROM roads TABLESAMPLE BERNOULLI (10) REPEATABLE (1)'],
  [
    'composite field selection',
    'SELECT (ST_Dump(geom)).geom AS g, (ST_Dump(geom)).path[1] AS n, (ST_IsValidDetail(geom)).reason FROM t',
  ],
  ['alias-qualified columns', 'SELECT p.id, p.name, p.area, p.host, p.geom FROM places p'],
  [
    'casts with type modifiers',
    "SELECT geom::geometry(Point, 4326), x::numeric(10, 2), y::double precision, z::timestamp with time zone, w::varchar(20), v::text[], '1 day'::interval FROM t",
  ],
];

/** PROJ definitions given as text may name files on the database server (issue #22): [case, SQL, error]. */
const projText: [string, string, RegExp][] = [
  [
    '+init= naming a file',
    "SELECT ST_Transform(geom, '+init=epsg:4326') FROM t",
    /PROJ definition is not allowed.*only EPSG/,
  ],
  [
    '+init= with a path',
    "SELECT ST_Transform(geom, '+init=/etc/passwd:x') FROM t",
    /PROJ definition is not allowed.*only EPSG/,
  ],
  ['init after +proj', "SELECT ST_Transform(geom, '+proj=longlat +init=x') FROM t", /\+init is not allowed/],
  ['a grid file', "SELECT ST_Transform(geom, '+proj=longlat +nadgrids=/etc/passwd') FROM t", /\+nadgrids/],
  ['a geoid grid', "SELECT ST_Transform(geom, '+proj=longlat +geoidgrids=@x.gtx') FROM t", /\+geoidgrids/],
  [
    'a pipeline',
    "SELECT ST_Transform(geom, '+proj=pipeline +step +proj=unitconvert') FROM t",
    /\+step|pipeline/,
  ],
  ['a TIN shift model', "SELECT ST_Transform(geom, '+proj=tinshift +file=x.json') FROM t", /\+file|tinshift/],
  ['a WKT definition', 'SELECT ST_Transform(geom, \'GEOGCS["x"]\') FROM t', /only EPSG/],
  [
    'a from_proj text',
    "SELECT ST_Transform(geom, '+init=x', 4326) FROM t",
    /PROJ definition is not allowed.*only EPSG/,
  ],
  [
    'a named argument',
    "SELECT ST_Transform(geom, from_proj => '+init=x', to_srid => 4326) FROM t",
    /PROJ definition is not allowed.*only EPSG/,
  ],
  ['text built at run time', "SELECT ST_Transform(geom, '+in' || 'it=x') FROM t", /takes an SRID/],
  [
    'text from a subquery',
    'SELECT ST_Transform(geom, (SELECT proj4text FROM spatial_ref_sys LIMIT 1)) FROM t',
    /takes an SRID/,
  ],
  ['a text column', 'SELECT ST_Transform(geom, crs) FROM t', /cast to integer/],
  ['a cast to text', "SELECT ST_Transform(geom, 'x'::text) FROM t", /takes an SRID/],
  ['a function returning text', "SELECT ST_Transform(geom, concat('+init=', 'x')) FROM t", /takes an SRID/],
  [
    'qualified',
    "SELECT public.st_transform(geom, '+init=x') FROM t",
    /PROJ definition is not allowed.*only EPSG/,
  ],
];

/** A service reading `import_aaa` may name no other schema (ADR 0105): [case, SQL, error]. */
const otherSchemas: [string, string, RegExp][] = [
  [
    'another import',
    'SELECT * FROM import_bbb.points',
    /schema import_bbb is not one of the service's schemas/,
  ],
  ['another staging schema', 'SELECT * FROM import_staging_aaa.points', /import_staging_aaa is not one/],
  ['public', 'SELECT * FROM public.places', /schema public is not one/],
  ['in a join', 'SELECT a.* FROM points a JOIN import_bbb.t b ON true', /import_bbb/],
  ['in a subquery', "SELECT (SELECT string_agg(name, ',') FROM import_bbb.t) FROM points", /import_bbb/],
  ['in a CTE', 'WITH x AS (SELECT * FROM import_bbb.t) SELECT * FROM x', /import_bbb/],
  ['in EXISTS', 'SELECT 1 FROM points WHERE EXISTS (SELECT 1 FROM import_bbb.t)', /import_bbb/],
  ['TABLE form', 'SELECT * FROM (TABLE import_bbb.t) q', /import_bbb/],
  ['quoted', 'SELECT * FROM "import_bbb"."t"', /import_bbb/],
  ['a case variant', 'SELECT * FROM "IMPORT_AAA".t', /IMPORT_AAA/],
  ['the fences table', 'SELECT * FROM geoplane_imports.fences', /geoplane_imports/],
  ['a lateral join', 'SELECT * FROM points p, LATERAL (SELECT * FROM import_bbb.t) q', /import_bbb/],
];

describe('checkSql refuses PROJ definitions that may read files, whatever the spelling', () => {
  it.each(projText)('%s', async (_case, sql, error) => {
    const result = await checkSql(sql);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toMatch(error);
  });

  it.each([
    ['an integer SRID', 'SELECT ST_Transform(geom, 3857) FROM t'],
    [
      'an integer cast',
      'SELECT ST_Transform(geom, srid::integer), ST_Transform(geom, CAST(s AS int)) FROM t',
    ],
    ['ST_SRID', 'SELECT ST_Transform(g, ST_SRID(geom)) FROM t'],
    ['an EPSG code', "SELECT ST_Transform(geom, 'EPSG:3857'), ST_Transform(geom, 'EPSG:4326', 3857) FROM t"],
    [
      'a plain +proj string',
      "SELECT ST_Transform(geom, '+proj=utm +zone=33 +ellps=WGS84 +units=m +no_defs') FROM t",
    ],
    [
      'a +towgs84 datum shift',
      "SELECT ST_Transform(geom, '+proj=longlat +ellps=intl +towgs84=-87,-98,-121 +no_defs') FROM t",
    ],
  ])('accepts %s', async (_case, sql) => {
    expect(await checkSql(sql)).toMatchObject({ ok: true });
  });
});

describe("checkSql confines schema-qualified relations to the service's schemas", () => {
  it.each(otherSchemas)('%s', async (_case, sql, error) => {
    const result = await checkSql(sql, ['import_aaa']);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toMatch(error);
  });

  it.each([
    ['its own schema', 'SELECT * FROM import_aaa.points'],
    ['unqualified (its search_path)', 'SELECT * FROM points'],
    ["PostGIS's reference table", 'SELECT srid FROM public.spatial_ref_sys'],
    ['a safe catalog view', 'SELECT name FROM pg_catalog.pg_timezone_names'],
  ])('accepts %s', async (_case, sql) => {
    expect(await checkSql(sql, ['import_aaa'])).toMatchObject({ ok: true });
  });

  it('reads a service without schemas as public', async () => {
    expect(await checkSql('SELECT * FROM public.places')).toMatchObject({ ok: true });
    expect(await checkSql('SELECT * FROM other.places')).toMatchObject({ ok: false });
  });
});

describe('checkSql refuses hostile SQL with a specific error', () => {
  it.each(hostile)('%s', async (_case, sql, error) => {
    const result = await checkSql(sql);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toMatch(error);
  });
});

describe('checkSql accepts read-only SELECTs', () => {
  it.each(benign)('%s', async (_case, sql) => {
    expect(await checkSql(sql)).toMatchObject({ ok: true });
  });
});

describe('checkSql hands over what only the database can decide', () => {
  it('lists attribute names that could be calls and unqualified operator symbols', async () => {
    const result = await checkSql(
      'SELECT t.kind, (x).myfunc, a @@@ b FROM t WHERE t.id = 1 ORDER BY a USING <',
    );
    expect(result).toMatchObject({ ok: true });
    if (!result.ok) return;
    expect(result.attributeNames.sort()).toEqual(['id', 'kind', 'myfunc']);
    expect(result.operators.sort()).toEqual(['<', '=', '@@@']);
  });

  it('leaves allowlisted names (column-like casts and spatial functions) out', async () => {
    const result = await checkSql('SELECT p.name, p.area, (geom).st_astext FROM places p');
    expect(result).toMatchObject({ ok: true, attributeNames: [] });
  });

  it('refuses a name the catalog resolves to a function outside the allowlist', () => {
    expect(refuseHiddenCalls({ functions: ['my_side_effect'], operators: [] })).toMatch(
      /my_side_effect is not allowed: attribute notation/,
    );
    expect(refuseHiddenCalls({ functions: ['st_astext', 'name'], operators: [] })).toBeUndefined();
  });

  it('refuses an operator a database user defined', () => {
    expect(refuseHiddenCalls({ functions: [], operators: ['@@@ (schema public)'] })).toMatch(
      /operator @@@ \(schema public\) is not allowed/,
    );
    expect(refuseHiddenCalls({ functions: [], operators: [] })).toBeUndefined();
  });
});

describe('checkSql robustness', () => {
  it('never throws for non-string input', async () => {
    for (const value of [undefined, null, 42, {}, ['SELECT 1']]) {
      expect(await checkSql(value as any)).toEqual({ ok: false, error: 'SQL must be a string' });
    }
  });

  it('accepts SQL just under the size limit', async () => {
    const sql = `SELECT 1 -- ${'x'.repeat(64 * 1024 - 20)}`;
    expect(Buffer.byteLength(sql)).toBeLessThanOrEqual(MAX_SQL_BYTES);
    expect(await checkSql(sql)).toMatchObject({ ok: true });
  });

  it('counts the size limit in UTF-8 bytes, not characters', async () => {
    const result = await checkSql(`SELECT '${'é'.repeat(40 * 1024)}'`);
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/too large/) });
  });

  it('keeps working after a refusal that exhausted the parser', async () => {
    await checkSql(`SELECT ${'('.repeat(20_000)}1${')'.repeat(20_000)}`);
    await checkSql(`SELECT ${'1+'.repeat(200_000)}1`);
    expect(await checkSql('SELECT 1')).toMatchObject({ ok: true });
  });

  it('checks concurrent calls independently', async () => {
    const results = await Promise.all([
      checkSql('SELECT 1'),
      checkSql('SELECT pg_sleep(1)'),
      checkSql('DELETE FROM t'),
      checkSql('SELECT ST_Buffer(geom, 1) FROM t'),
    ]);
    expect(results.map((r) => r.ok)).toEqual([true, false, false, true]);
  });
});
