/**
 * The demo database of the embedded PostGIS (ADR 0030), also seeded into a real PostgreSQL +
 * PostGIS by the tests that run the PostGIS suite against one. Statements only: the caller wraps
 * them in its transaction.
 */
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

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

/**
 * The import roles (ADR 0085), created or updated idempotently: `importer` loads imports (CREATE
 * on the current database, so it owns the import schemas; no superuser, no CREATEROLE) and
 * `reader` is the login published import services connect as (only what PUBLIC has, which
 * serviceRoleHardeningSql trims, plus USAGE on public for PostGIS). Passwords are set on every
 * run. Works on the embedded PostGIS and a real PostgreSQL (as a role with CREATEROLE).
 */
export function importRolesSql(
  importer: { user: string; password: string },
  reader: { user: string; password: string },
): string {
  const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;
  const role = (r: { user: string; password: string }) => `
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${literal(r.user)}) THEN
    CREATE ROLE ${ident(r.user)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${literal(r.password)};
  ELSIF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = ${literal(r.user)}
                AND (rolsuper OR rolcreatedb OR rolcreaterole OR NOT rolcanlogin)) THEN
    -- Only a role that drifted is altered (hashing a password on every start slows restarts).
    ALTER ROLE ${ident(r.user)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${literal(r.password)};
  END IF;`;
  const body = `
BEGIN${role(importer)}${role(reader)}
  EXECUTE pg_catalog.format('GRANT CREATE ON DATABASE %I TO %I', pg_catalog.current_database(), ${literal(importer.user)});
  GRANT USAGE ON SCHEMA public TO ${ident(importer.user)}, ${ident(reader.user)};
END
`;
  if (body.includes('$import_roles$')) throw new Error('a role name or password contains $import_roles$');
  return `DO $import_roles$${body}$import_roles$;\n`;
}
