/**
 * The demo database of the embedded PostGIS (ADR 0030), also seeded into a real PostgreSQL +
 * PostGIS by the tests that run the PostGIS suite against one. Statements only: the caller wraps
 * them in its transaction.
 */
import { READER_LOGIN_PREFIX, READER_ROLES_SCHEMA, scramVerifier } from '#datasources/imports/readers.ts';

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Sets a login's password to `password` (a SCRAM verifier computed here): the superuser's, on every
 * start of the embedded PostGIS, so a data dir copied from the template answers to its own (ADR 0155).
 */
export function loginPasswordSql(user: string, password: string): string {
  return `ALTER ROLE ${ident(user)} PASSWORD '${scramVerifier(password)}';\n`;
}

/** The demo data: three spatial tables, one plain table, one table the demo role can't read. */
export function demoSeedSql(demoUser: string, demoPassword: string): string {
  const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;
  return `
CREATE EXTENSION IF NOT EXISTS postgis;
CREATE ROLE ${ident(demoUser)} LOGIN PASSWORD ${literal(demoPassword)};
GRANT USAGE ON SCHEMA public TO ${ident(demoUser)};

CREATE TABLE public.places (
  id integer PRIMARY KEY,
  name text NOT NULL,
  kind text NOT NULL,
  population integer,
  founded date,
  geom geometry(Point, 4326) NOT NULL
);
INSERT INTO public.places
SELECT i, 'Place ' || i, (ARRAY['city', 'town', 'village', 'hamlet'])[1 + i % 4],
       CASE WHEN i % 10 = 0 THEN NULL ELSE 500 + (i * 7919) % 250000 END,
       date '1200-01-01' + (i * 3571) % 250000,
       ST_SetSRID(ST_MakePoint(-10 + ((i * 7919) % 2000) / 100.0, 40 + ((i * 104729) % 1500) / 100.0), 4326)
FROM generate_series(1, 300) AS i;

CREATE TABLE public.roads (
  id integer PRIMARY KEY,
  name text NOT NULL,
  class text NOT NULL,
  lanes smallint NOT NULL,
  geom geometry(LineString, 4326) NOT NULL
);
INSERT INTO public.roads
SELECT i, 'Road ' || i, (ARRAY['motorway', 'primary', 'secondary', 'residential'])[1 + i % 4], 1 + i % 4,
       ST_SetSRID(ST_MakeLine(ARRAY[ST_MakePoint(x, y), ST_MakePoint(x + 0.05, y + 0.02),
                                    ST_MakePoint(x + 0.1, y - 0.01), ST_MakePoint(x + 0.15, y + 0.03)]), 4326)
FROM (SELECT i, -10 + ((i * 6007) % 1900) / 100.0 AS x, 40 + ((i * 49999) % 1450) / 100.0 AS y
      FROM generate_series(1, 200) AS i) AS s;

CREATE TABLE public.parcels (
  id integer PRIMARY KEY,
  parcel_code text NOT NULL UNIQUE,
  land_use text NOT NULL,
  area_m2 double precision NOT NULL,
  assessed boolean NOT NULL,
  geom geometry(Polygon, 4326) NOT NULL
);
INSERT INTO public.parcels
SELECT i, 'P-' || lpad(i::text, 5, '0'), (ARRAY['residential', 'commercial', 'agricultural', 'forest'])[1 + i % 4],
       round(ST_Area(env::geography)::numeric, 1), i % 3 = 0, env
FROM (SELECT i, ST_MakeEnvelope(x, y, x + 0.02 + (i % 5) * 0.01, y + 0.015 + (i % 3) * 0.01, 4326) AS env
      FROM (SELECT i, -10 + ((i * 3001) % 1950) / 100.0 AS x, 40 + ((i * 7727) % 1480) / 100.0 AS y
            FROM generate_series(1, 250) AS i) AS p) AS s;

CREATE TABLE public.notes (
  id serial PRIMARY KEY,
  title text NOT NULL,
  body text,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO public.notes (title, body) SELECT 'Note ' || i, 'A note without a place, number ' || i
FROM generate_series(1, 20) AS i;

CREATE TABLE public.secrets (
  id integer PRIMARY KEY,
  label text NOT NULL,
  secret text NOT NULL,
  geom geometry(Point, 4326) NOT NULL
);
INSERT INTO public.secrets VALUES
  (1, 'vault', 'not for the demo role', ST_SetSRID(ST_MakePoint(2.35, 48.85), 4326)),
  (2, 'bunker', 'not for the demo role either', ST_SetSRID(ST_MakePoint(13.4, 52.52), 4326));

CREATE INDEX places_geom_idx ON public.places USING gist (geom);
CREATE INDEX roads_geom_idx ON public.roads USING gist (geom);
CREATE INDEX parcels_geom_idx ON public.parcels USING gist (geom);
GRANT SELECT ON public.places, public.roads, public.parcels, public.notes TO ${ident(demoUser)};
REVOKE ALL ON public.secrets FROM PUBLIC;
`;
}

/**
 * Takes from PUBLIC the built-in functions a service role must never run (ADR 0035: sleeping,
 * advisory locks, signalling backends, server files, large objects, sequences, transaction ids,
 * functions that run SQL text), so a call the SQL guard could not see fails with 42501. Applied on
 * every start of the embedded PostGIS and after seeding a real PostgreSQL in the tests; operators
 * should run the same on their databases. Superusers keep everything. Idempotent.
 */
export function serviceRoleHardeningSql(): string {
  return `
DO $hardening$
DECLARE f pg_catalog.regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid::pg_catalog.regprocedure FROM pg_catalog.pg_proc p
    WHERE p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace
      AND (p.proname ~ '^(pg_sleep|pg_advisory|pg_try_advisory|pg_terminate_backend|pg_cancel_backend|pg_read_|pg_ls_|pg_stat_file|pg_notify|pg_reload_conf|pg_rotate_logfile|pg_get_userbyid|pg_current_logfile|pg_export_snapshot|pg_log_backend_memory_contexts|pg_stat_reset|pg_promote|pg_switch_wal|pg_create_restore_point|lo_|txid_|pg_current_xact_id)'
        OR p.proname IN ('nextval', 'setval', 'currval', 'lastval', 'ts_stat', 'ts_rewrite',
                         'query_to_xml', 'query_to_xmlschema', 'query_to_xml_and_xmlschema',
                         'cursor_to_xml', 'cursor_to_xmlschema', 'table_to_xml', 'table_to_xmlschema',
                         'table_to_xml_and_xmlschema', 'schema_to_xml', 'schema_to_xmlschema',
                         'schema_to_xml_and_xmlschema', 'database_to_xml', 'database_to_xmlschema',
                         'database_to_xml_and_xmlschema'))
  LOOP
    EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
  END LOOP;
END
$hardening$;
`;
}

/** The roles of the import database beside the loader (ADR 0105); tests on a shared cluster suffix them. */
export interface ImportRoleNames {
  /** NOLOGIN: every import reader login is a member; holds USAGE on public (PostGIS). */
  readers: string;
  /** NOLOGIN CREATEROLE: owns the functions that create and drop reader logins, nothing else. */
  roleAdmin: string;
}

export const IMPORT_ROLE_NAMES: ImportRoleNames = {
  readers: 'geoplane_import_readers',
  roleAdmin: 'geoplane_import_role_admin',
};

/**
 * The import roles (ADR 0085, 0105), created or updated idempotently; run as a superuser. The
 * loader `importer` (CREATE on the current database, so it owns the import schemas; no
 * superuser, no CREATEROLE) creates and drops the login of each published import only through
 * two SECURITY DEFINER functions in `geoplane_import_roles`, owned by the NOLOGIN `roleAdmin`
 * (CREATEROLE): `ensure_reader(hex, scram_verifier)` makes `geoplane_imp_<hex>` (a member of
 * `readers`, which has USAGE on public for PostGIS and nothing else) and `drop_reader(hex)` drops
 * it. The loader then grants the login its own schema, nothing more. The loader's password is
 * set on every run (a verifier computed here, so PGlite needn't hash it). Works on the embedded
 * PostGIS and a real PostgreSQL.
 */
export function importRolesSql(
  importer: { user: string; password: string },
  names: ImportRoleNames = IMPORT_ROLE_NAMES,
): string {
  const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;
  const verifier = scramVerifier(importer.password);
  const schema = ident(READER_ROLES_SCHEMA);
  const prefix = literal(READER_LOGIN_PREFIX);
  const group = (name: string, extra: string) => `
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${literal(name)}) THEN
    CREATE ROLE ${ident(name)} NOLOGIN NOSUPERUSER NOCREATEDB ${extra};
  END IF;
  ALTER ROLE ${ident(name)} NOLOGIN NOSUPERUSER NOCREATEDB ${extra};`;
  const body = `
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${literal(importer.user)}) THEN
    CREATE ROLE ${ident(importer.user)} LOGIN;
  END IF;
  ALTER ROLE ${ident(importer.user)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS
    PASSWORD ${literal(verifier)};${group(names.readers, 'NOCREATEROLE')}${group(names.roleAdmin, 'CREATEROLE')}
  EXECUTE pg_catalog.format('GRANT CREATE ON DATABASE %I TO %I', pg_catalog.current_database(), ${literal(importer.user)});
  GRANT USAGE ON SCHEMA public TO ${ident(importer.user)}, ${ident(names.readers)};
  GRANT ${ident(names.readers)} TO ${ident(names.roleAdmin)} WITH ADMIN OPTION;
  IF NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
    EXECUTE pg_catalog.format('GRANT %I TO %I', ${literal(names.roleAdmin)}, current_user);
  END IF;
  CREATE SCHEMA IF NOT EXISTS ${schema};
  REVOKE ALL ON SCHEMA ${schema} FROM PUBLIC;
  GRANT USAGE ON SCHEMA ${schema} TO ${ident(importer.user)};
  GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${ident(names.roleAdmin)};
  CREATE OR REPLACE FUNCTION ${schema}.ensure_reader(hex text, verifier text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $ensure$
  DECLARE login text := ${prefix} || hex;
  BEGIN
    IF hex !~ '^[0-9a-f]{32}$' OR verifier !~ '^SCRAM-SHA-256[$]' THEN
      RAISE EXCEPTION 'ensure_reader: bad arguments' USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = login) THEN
      EXECUTE pg_catalog.format('ALTER ROLE %I PASSWORD %L', login, verifier);
    ELSE
      EXECUTE pg_catalog.format(
        'CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT PASSWORD %L IN ROLE %I',
        login, verifier, ${literal(names.readers)});
    END IF;
  END
  $ensure$;
  CREATE OR REPLACE FUNCTION ${schema}.drop_reader(hex text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $drop$
  BEGIN
    IF hex !~ '^[0-9a-f]{32}$' THEN
      RAISE EXCEPTION 'drop_reader: bad arguments' USING ERRCODE = '22023';
    END IF;
    EXECUTE pg_catalog.format('DROP ROLE IF EXISTS %I', ${prefix} || hex);
  END
  $drop$;
  ALTER FUNCTION ${schema}.ensure_reader(text, text) OWNER TO ${ident(names.roleAdmin)};
  ALTER FUNCTION ${schema}.drop_reader(text) OWNER TO ${ident(names.roleAdmin)};
  REVOKE ALL ON FUNCTION ${schema}.ensure_reader(text, text), ${schema}.drop_reader(text) FROM PUBLIC;
  GRANT EXECUTE ON FUNCTION ${schema}.ensure_reader(text, text), ${schema}.drop_reader(text)
    TO ${ident(importer.user)};
END
`;
  if (body.includes('$import_roles$')) throw new Error('a role name or password contains $import_roles$');
  return `DO $import_roles$${body}$import_roles$;\n`;
}

/**
 * The login every published import shared before ADR 0105 (`geoplane_import_reader`): it could
 * read every published import. On start it loses its login, its password and its grants.
 */
export function retireSharedReaderSql(user: string): string {
  const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;
  return `
DO $retire$
DECLARE s text;
BEGIN
  IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${literal(user)}) THEN
    FOR s IN SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname LIKE 'import\\_%' LOOP
      EXECUTE pg_catalog.format('REVOKE ALL ON ALL TABLES IN SCHEMA %I FROM %I', s, ${literal(user)});
      EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA %I FROM %I', s, ${literal(user)});
    END LOOP;
    EXECUTE pg_catalog.format('ALTER ROLE %I NOLOGIN PASSWORD NULL', ${literal(user)});
  END IF;
END
$retire$;
`;
}
