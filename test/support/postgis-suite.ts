import { createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { checkout, type PostgisConnection, testConnection } from '#datasources/postgis.ts';
import { discoverLayers, probeLayer } from '#datasources/postgis-discovery.ts';
import { readOnly } from '#datasources/postgis-sessions.ts';
import { checkIdColumn, describeSql } from '#datasources/postgis-sql-views.ts';
import { RuleViolationError, UnavailableError } from '#domain/errors.ts';
import { freePort } from './ports.ts';
import { sentQueries } from './sent-queries.ts';

/**
 * A server the PostGIS adapter suite runs against: the embedded PostGIS (PGlite, ADR 0030) or a
 * real PostgreSQL 15 + PostGIS 3 (ADR 0076), both seeded with the demo data.
 */
export interface PostgisTarget {
  kind: 'embedded' | 'postgresql';
  /** The demo login role: reads places/roads/parcels/notes, not secrets. */
  demo: PostgisConnection;
  /** A superuser in the same database. */
  superuser: PostgisConnection;
  /** A pool of the superuser in the same database. */
  admin: pg.Pool;
}

/** What a test expects of each target, when the two differ (ADR 0076 lists why). */
export function byTarget<T>(target: PostgisTarget, expected: Record<PostgisTarget['kind'], T>): T {
  return expected[target.kind];
}

/**
 * A schema `slow` with a view whose first row takes 1.5 s (pg_sleep), readable by the demo role.
 * pg_sleep is granted to it explicitly: the service-role hardening revokes it from PUBLIC.
 */
export async function addSlowSchema(admin: pg.Pool, demoUser: string): Promise<void> {
  const role = pg.escapeIdentifier(demoUser);
  await admin.query(`
    CREATE SCHEMA slow;
    CREATE VIEW slow.places AS SELECT p.* FROM public.places p CROSS JOIN LATERAL (SELECT pg_sleep(1.5)) s;
    GRANT USAGE ON SCHEMA slow TO ${role};
    GRANT SELECT ON slow.places TO ${role};
    GRANT EXECUTE ON FUNCTION pg_catalog.pg_sleep(double precision) TO ${role};`);
}

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function elapsed<T>(work: () => Promise<T>): Promise<{ ms: number; result?: T; error?: unknown }> {
  const started = performance.now();
  try {
    const result = await work();
    return { ms: performance.now() - started, result };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

/**
 * The PostGIS adapter's integration tests (shared/datasources/postgis.ts and the postgis-*.ts
 * beside it), run once per target. `target` is read when the tests run (the caller's beforeAll
 * fills it in).
 */
export function postgisAdapterSuite(target: () => PostgisTarget): void {
  describe('testConnection', () => {
    it('connects and reports the PostgreSQL and PostGIS versions', async () => {
      const t = target();
      const result = await testConnection(t.demo);
      expect(result).toMatchObject({
        ok: true,
        message: expect.stringMatching(
          byTarget(t, {
            // PGlite 0.5.8 is PostgreSQL 18 compiled to WASM.
            embedded: /^Connected to PostgreSQL 18\.\d+ with PostGIS 3\.\d+\.\d+\.$/,
            // Debian's build appends its package version to server_version.
            postgresql: /^Connected to PostgreSQL 15\.\d+ \(Debian [^)]+\) with PostGIS 3\.\d+\.\d+\.$/,
          }),
        ),
      });
      expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    });

    it.each([
      ['a wrong password', { password: 'wrong' }, /password authentication failed/],
      ['an unknown database', { database: 'elsewhere' }, /database "elsewhere" does not exist/],
      // One message for every way of not reaching PostgreSQL, naming no cause (ADR 0074).
      [
        'a closed port',
        { port: 1 },
        /^Could not connect to .*: it could not be reached, or did not answer as PostgreSQL\.$/,
      ],
    ])('answers ok:false with the reason for %s', async (_, overrides, message) => {
      const result = await testConnection({ ...target().demo, ...overrides });
      expect(result).toMatchObject({ ok: false, message: expect.stringMatching(message) });
    });

    it('checks the password before the database name on PostgreSQL, the other way round on the embedded one', async () => {
      const t = target();
      const result = await testConnection({ ...t.demo, database: 'elsewhere', password: 'wrong' });
      expect(result).toMatchObject({
        ok: false,
        message: expect.stringMatching(
          byTarget(t, {
            // The front door (ADR 0031) refuses the startup packet's database before asking for a password.
            embedded: /database "elsewhere" does not exist/,
            // PostgreSQL authenticates (pg_hba: all databases), then finds no database.
            postgresql: /password authentication failed for user/,
          }),
        ),
      });
    });

    describe.each([
      ['disable', { ok: true, tls: false }, { ok: true, tls: false }],
      ['prefer', { ok: true, tls: false }, { ok: true, tls: true }],
      ['require', /does not support SSL/, { ok: true, tls: true }],
      ['verify-full', /does not support SSL/, /self-signed certificate/],
    ] as const)('with sslmode=%s', (sslmode, embedded, postgresql) => {
      // The embedded PostGIS has no TLS (ADR 0031); .ci/postgres.sh starts PostgreSQL with ssl=on
      // and a self-signed certificate, as RDS offers TLS with a CA Node doesn't know.
      it('connects with TLS where the server offers it, and refuses what the mode forbids', async () => {
        const t = target();
        const expected = byTarget(t, { embedded, postgresql });
        const conn = { ...t.demo, sslmode };
        const result = await testConnection(conn);
        if (expected instanceof RegExp) {
          expect(result).toMatchObject({ ok: false, message: expect.stringMatching(expected) });
          await expect(discoverLayers(conn)).rejects.toSatisfy(
            (e: unknown) => e instanceof RuleViolationError && e.reason === 'source_unreadable',
          );
          return;
        }
        expect(result).toMatchObject({ ok: true });
        const tls = await readOnly(conn, 2000, async (query) => {
          const { rows } = await query<{ ssl: boolean | null }>(
            'SELECT (SELECT ssl FROM pg_catalog.pg_stat_ssl WHERE pid = pg_backend_pid()) AS ssl',
          );
          return rows[0]?.ssl === true;
        });
        expect(tls).toBe(expected.tls);
      });
    });
  });

  describe('discoverLayers', () => {
    it('finds the three spatial tables with type, SRID and extent, and neither notes nor secrets', async () => {
      const t = target();
      const layers = await discoverLayers(t.demo);
      expect(layers.map((l) => [l.name, l.geometry_column, l.geometry_type, l.srid])).toEqual([
        ['parcels', 'geom', 'POLYGON', 4326],
        ['places', 'geom', 'POINT', 4326],
        ['roads', 'geom', 'LINESTRING', 4326],
      ]);
      for (const layer of layers) {
        const { rows } = await t.admin.query(
          `SELECT ST_XMin(e) AS min_x, ST_YMin(e) AS min_y, ST_XMax(e) AS max_x, ST_YMax(e) AS max_y
           FROM (SELECT ST_Extent(geom) AS e FROM ${pg.escapeIdentifier(layer.table)}) s`,
        );
        const exact = rows[0];
        // ST_EstimatedExtent: planner statistics in float4, so close to the exact extent, not equal.
        for (const k of ['min_x', 'min_y', 'max_x', 'max_y'] as const) {
          expect(layer.extent?.[k]).toBeCloseTo(exact[k], 1);
        }
      }
    });

    it('lists what the role may read in the given schemas only', async () => {
      const layers = await discoverLayers({ ...target().demo, schemas: ['slow'] });
      expect(layers).toEqual([
        {
          schema: 'slow',
          table: 'places',
          name: 'slow.places',
          geometry_column: 'geom',
          geometry_type: 'POINT',
          srid: 4326,
          extent: null,
        },
      ]);
    });

    it('throws UnavailableError quickly when the port is closed', async () => {
      const closed = await freePort();
      const { ms, error } = await elapsed(() => discoverLayers({ ...target().demo, port: closed }));
      expect(error).toBeInstanceOf(UnavailableError);
      expect(error).toMatchObject({ reason: 'datasource_unavailable' });
      expect(ms).toBeLessThan(5000);
    });

    it('throws UnavailableError after the 2 s connect timeout when the server never answers', async () => {
      const silent = await silentServer();
      try {
        const { ms, error } = await elapsed(() => discoverLayers({ ...target().demo, port: silent.port }));
        expect(error).toBeInstanceOf(UnavailableError);
        expect(ms).toBeGreaterThanOrEqual(1900);
        expect(ms).toBeLessThan(5000);
      } finally {
        await silent.close();
      }
    });

    it.each([
      ['a wrong password', { password: 'wrong' }],
      ['an unknown database', { database: 'elsewhere' }],
    ])('throws RuleViolationError source_unreadable for %s', async (_, overrides) => {
      await expect(discoverLayers({ ...target().demo, ...overrides })).rejects.toSatisfy(
        (e: unknown) => e instanceof RuleViolationError && e.reason === 'source_unreadable',
      );
    });
  });

  describe('probeLayer', () => {
    it.each(['places', 'public.places'])('reads a feature of %s', async (sourceLayer) => {
      const result = await probeLayer(target().demo, sourceLayer);
      expect(result).toMatchObject({
        ok: true,
        layer: { schema: 'public', table: 'places', name: 'places', geometry_type: 'POINT', srid: 4326 },
      });
    });

    it.each([
      ['a missing table', 'nowhere', /does not exist/],
      [
        'a table of a schema the service does not list',
        'slow.places',
        /does not exist in the schema\(s\) public/,
      ],
      ['a table without geometry', 'notes', /has no geometry column/],
    ])('refuses %s with the reason', async (_, sourceLayer, reason) => {
      expect(await probeLayer(target().demo, sourceLayer)).toEqual({
        ok: false,
        reason: expect.stringMatching(reason),
      });
    });

    it('refuses a table the role may not read, naming the role', async () => {
      const { demo } = target();
      expect(await probeLayer(demo, 'secrets')).toEqual({
        ok: false,
        reason: `Permission denied: the role "${demo.user}" can't read "public.secrets".`,
      });
    });

    it('gives up when no feature is read within the budget', async () => {
      const { ms, result } = await elapsed(() =>
        probeLayer({ ...target().demo, schemas: ['slow'] }, 'places', 300),
      );
      expect(result).toEqual({ ok: false, reason: expect.stringMatching(/within 300 ms/) });
      expect(ms).toBeLessThan(1400);
    });

    it('throws UnavailableError for a closed port', async () => {
      await expect(probeLayer({ ...target().demo, port: await freePort() }, 'places')).rejects.toBeInstanceOf(
        UnavailableError,
      );
    });
  });

  describe('describeSql', () => {
    it('discovers columns, geometry, SRID and a suggested id column', async () => {
      const result = await describeSql(
        target().demo,
        'SELECT id, name, population, founded, geom FROM places;',
      );
      expect(result).toEqual({
        valid: true,
        discovered: {
          columns: [
            { name: 'id', type: 'integer' },
            { name: 'name', type: 'string' },
            { name: 'population', type: 'integer' },
            { name: 'founded', type: 'string' },
          ],
          geometry_column: 'geom',
          geometry_type: 'POINT',
          srid: 4326,
          suggested_id_column: 'id',
        },
      });
    });

    it('suggests a column taken from a unique constraint when no id-like name exists', async () => {
      const result = await describeSql(
        target().demo,
        'SELECT parcel_code, area_m2, assessed, geom AS shape FROM parcels',
      );
      expect(result).toMatchObject({
        valid: true,
        discovered: {
          columns: [
            { name: 'parcel_code', type: 'string' },
            { name: 'area_m2', type: 'number' },
            { name: 'assessed', type: 'boolean' },
          ],
          geometry_column: 'shape',
          geometry_type: 'POLYGON',
          suggested_id_column: 'parcel_code',
        },
      });
    });

    it('reprojects with an integer SRID or an allowed PROJ definition', async () => {
      for (const crs of ['3857', "'EPSG:3857'", "'+proj=merc +ellps=WGS84 +units=m +no_defs'"]) {
        const sql = `SELECT id, ST_Transform(geom, ${crs}) AS geom FROM places`;
        expect(await describeSql(target().demo, sql), sql).toMatchObject({ valid: true });
      }
    });

    it('takes type and SRID from the column type when the view has no rows, and 4326 when unknown', async () => {
      const { demo } = target();
      expect(await describeSql(demo, 'SELECT id, geom FROM roads WHERE false')).toMatchObject({
        valid: true,
        discovered: { geometry_type: 'LINESTRING', srid: 4326 },
      });
      expect(await describeSql(demo, 'SELECT 1 AS gid, ST_MakePoint(1, 2) AS g WHERE false')).toMatchObject({
        valid: true,
        discovered: { geometry_type: 'GEOMETRY', srid: 4326, suggested_id_column: 'gid' },
      });
    });

    it.each([
      ['an unknown column', 'SELECT nope, geom FROM places', /^column "nope" does not exist$/],
      ['no geometry column', 'SELECT id, title FROM notes', /at least one geometry column/],
      ['a table the role may not read', 'SELECT * FROM secrets', /^permission denied for table secrets$/],
      ['a statement the SQL gate refuses', 'DELETE FROM places', /.+/],
      ['a column name returned twice', 'SELECT id, id, geom FROM places', /"id" more than once/],
      // Issue #22: PROJ text naming a file wedged the embedded PostGIS; a real one would read it.
      [
        'a PROJ +init file',
        "SELECT id, ST_Transform(geom, '+init=epsg:3857') AS geom FROM places",
        /PROJ definition is not allowed/,
      ],
      [
        'PROJ text built at run time',
        "SELECT id, ST_Transform(geom, '+init=' || name) AS geom FROM places",
        /takes an SRID/,
      ],
      [
        'a schema outside the service',
        'SELECT * FROM slow.places',
        /schema slow is not one of the service's schemas/,
      ],
    ])('answers valid:false for %s', async (_, sql, error) => {
      expect(await describeSql(target().demo, sql)).toEqual({
        valid: false,
        error: expect.stringMatching(error),
      });
    });

    it('throws UnavailableError for a closed port', async () => {
      await expect(
        describeSql({ ...target().demo, port: await freePort() }, 'SELECT * FROM places'),
      ).rejects.toBeInstanceOf(UnavailableError);
    });
  });

  describe('read-only transactions', () => {
    it('runs in READ ONLY with transaction-local timeouts that do not outlive it', async () => {
      const t = target();
      const inside = await readOnly(t.demo, 1234, async (query) => ({
        readOnly: (await query<{ transaction_read_only: string }>('SHOW transaction_read_only')).rows[0]
          ?.transaction_read_only,
        statement: (await query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]
          ?.statement_timeout,
        lock: (await query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0]?.lock_timeout,
        jit: (await query<{ jit: string }>('SHOW jit')).rows[0]?.jit,
        timeZone: (await query<{ TimeZone: string }>('SHOW TimeZone')).rows[0]?.TimeZone,
      }));
      expect(inside).toEqual({
        readOnly: 'on',
        statement: '1234ms',
        lock: '1234ms',
        jit: 'off',
        timeZone: 'UTC',
      });
      // The embedded backend is shared by every connection: a session-level SET would leak to all.
      // (On PostgreSQL the admin's session is another backend; this holds trivially.)
      const { rows } = await t.admin.query('SHOW statement_timeout');
      expect(rows[0].statement_timeout).toBe('0');
    });

    it('opens in one round trip, the settings with BEGIN, and quotes the schemas it is given', async () => {
      const t = target();
      // A schema name with a quote, a backslash and a comma: the opening's literal must keep it whole.
      const odd = `it's a\\path, "really"`;
      await t.admin.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(odd)}`);
      await t.admin.query(`GRANT USAGE ON SCHEMA ${pg.escapeIdentifier(odd)} TO PUBLIC`);
      try {
        const conn = { ...t.demo, schemas: [odd, 'public'] };
        const checkedOut = await checkout(conn, Date.now() + 5_000);
        const { sent, restore } = sentQueries(checkedOut.client);
        const path = await readOnly(
          conn,
          2_000,
          async (query) => (await query<{ search_path: string }>('SHOW search_path')).rows[0]?.search_path,
          Promise.resolve(checkedOut),
        );
        restore();
        // BEGIN with the settings, the work's statement, ROLLBACK: three round trips for one statement.
        expect(sent).toHaveLength(3);
        expect(sent[0]).toMatch(/^BEGIN READ ONLY;/);
        expect(sent.slice(1)).toEqual(['SHOW search_path', 'ROLLBACK']);
        expect(path).toMatch(/^"it's a\\path, ""really""", "?public"?/);
      } finally {
        await t.admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(odd)}`);
      }
    });

    it('takes a new connection when the one opened ahead of its work broke while it waited, and throws nothing uncaught', async () => {
      // Prepare: a connection opened ahead (as describeSql opens one beside its parse), whose
      // socket then fails: pg reports it as the client's error event, with no work listening yet.
      const t = target();
      const ahead = await checkout(t.demo, Date.now() + 5_000);
      const socket = (ahead.client as unknown as { connection: { stream: Socket } }).connection.stream;
      const ended = new Promise((resolve) => socket.once('close', resolve));
      socket.destroy(new Error('the backend went away'));
      await ended;
      // Act
      const answer = await readOnly(
        t.demo,
        2_000,
        async (query) => (await query<{ one: number }>('SELECT 1 AS one')).rows[0],
        Promise.resolve(ahead),
      );
      // Assess: the work ran on a new connection (an uncaught error fails the run).
      expect(answer).toEqual({ one: 1 });
    });

    it('gives back a connection without leaving its error listener on the pooled connection', async () => {
      // Prepare: a checkout given back by its end, with no work run on it.
      const t = target();
      const first = await checkout(t.demo, Date.now() + 5_000);
      const listening = first.client.listenerCount('error');
      first.end();
      // Act: the pool hands the same connection out again (the last given back comes first).
      const second = await checkout(t.demo, Date.now() + 5_000);
      try {
        // Assess: one listener of ours per checkout, not one more per checkout it has had.
        expect(second.client).toBe(first.client);
        expect(second.client.listenerCount('error')).toBe(listening);
      } finally {
        second.end();
      }
    });

    it('cannot write, even as a role that may', async () => {
      const t = target();
      await expect(
        readOnly(t.superuser, 2000, (query) => query(`INSERT INTO public.notes (title) VALUES ('written')`)),
      ).rejects.toMatchObject({ code: '25006' });
      const { rows } = await t.admin.query(
        `SELECT count(*)::int AS n FROM public.notes WHERE title = 'written'`,
      );
      expect(rows[0].n).toBe(0);
    });

    it('ends a statement that outlives the budget: the server cancels it on PostgreSQL, the client gives up on the embedded one', async () => {
      const t = target();
      // A warm pool: the budget is spent on the statement, not on connecting.
      await readOnly(t.demo, 2000, (query) => query('SELECT 1'));
      const { ms, error } = await elapsed(() =>
        readOnly(t.demo, 500, (query) => query('SELECT pg_sleep(1.5)')),
      );
      expect(error).toBeInstanceOf(Error);
      // Both cancel it server-side (SQLSTATE 57014) before the client's deadline: PostgreSQL with
      // its timer, the embedded PostGIS with the alarm delivered from the worker's clock reads
      // (ADR 0031).
      expect((error as Error).message).toMatch(/^canceling statement due to statement timeout$/);
      const [min, max] = [450, 900];
      expect(ms).toBeGreaterThanOrEqual(min);
      expect(ms).toBeLessThan(max);
    });

    it('runs statements of different connections at the same time on PostgreSQL, one after the other on the embedded one', async () => {
      const t = target();
      const clients = await Promise.all(
        [0, 1, 2].map(async () => {
          const client = new pg.Client(t.demo);
          await client.connect();
          return client;
        }),
      );
      try {
        const { ms } = await elapsed(() => Promise.all(clients.map((c) => c.query('SELECT pg_sleep(0.4)'))));
        // PGlite is a single backend (ADR 0031): three 0.4 s sleeps take 1.2 s.
        if (t.kind === 'embedded') expect(ms).toBeGreaterThanOrEqual(1150);
        else expect(ms).toBeLessThan(1000);
      } finally {
        await Promise.all(clients.map((c) => c.end()));
      }
    });

    it('waits at most lock_timeout for a lock on PostgreSQL; on the embedded one the backend itself is taken', async () => {
      const t = target();
      // A warm pool: on the embedded PostGIS a new login would itself wait for the taken backend.
      await readOnly(t.demo, 2000, (query) => query('SELECT 1'));
      const holder = new pg.Client(t.superuser);
      await holder.connect();
      holder.on('error', () => {});
      try {
        await holder.query('BEGIN; LOCK TABLE public.notes IN ACCESS EXCLUSIVE MODE');
        // Budget 3 s: lock_timeout is min(2 s, budget), so the lock wait ends first where it exists.
        const { ms, error } = await elapsed(() =>
          readOnly(t.demo, 3000, (query) => query('SELECT count(*) FROM public.notes')),
        );
        if (t.kind === 'postgresql') {
          expect(error).toMatchObject({ code: '55P03', message: 'canceling statement due to lock timeout' });
          expect(ms).toBeGreaterThanOrEqual(1900);
          expect(ms).toBeLessThan(2900);
        } else {
          // An open transaction owns PGlite's one backend (ADR 0031): the demo connection's first
          // statement queues in the front door until the client's deadline, no lock wait at all.
          expect((error as Error).message).toMatch(/^no answer within 3000 ms$/);
          expect(ms).toBeGreaterThanOrEqual(3000);
        }
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        await holder.end();
      }
    });

    it('keeps a session-level SET to its connection on PostgreSQL; on the embedded one every connection sees it', async () => {
      const t = target();
      const [a, b] = [new pg.Client(t.demo), new pg.Client(t.demo)];
      await a.connect();
      await b.connect();
      try {
        await a.query(`SET geoplane.test_marker = 'set by a'`);
        const { rows } = await b.query(`SELECT current_setting('geoplane.test_marker', true) AS v`);
        // PGlite's one backend has one session (ADR 0031): why the adapter only uses set_config(…, true).
        expect(rows[0].v).toBe(byTarget(t, { embedded: 'set by a', postgresql: null }));
      } finally {
        await a.query('RESET geoplane.test_marker').catch(() => {});
        await Promise.all([a.end(), b.end()]);
      }
    });

    it('cancels a running statement with pg_cancel_backend on PostgreSQL; the embedded one refuses and runs it to the end', async () => {
      const t = target();
      // The demo role may not signal backends (revoked, ADR 0035): an operator's superuser cancels.
      const [sleeper, canceller] = [
        new pg.Client(t.demo),
        new pg.Client(t.kind === 'postgresql' ? t.superuser : t.demo),
      ];
      await sleeper.connect();
      await canceller.connect();
      try {
        const pid = (await sleeper.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
        const sleep = elapsed(() => sleeper.query('SELECT pg_sleep(1)'));
        await new Promise((resolve) => setTimeout(resolve, 200));
        const cancel = canceller.query('SELECT pg_cancel_backend($1) AS cancelled', [pid]);
        const { ms, error } = await sleep;
        if (t.kind === 'postgresql') {
          expect(await cancel).toMatchObject({ rows: [{ cancelled: true }] });
          expect(error).toMatchObject({ code: '57014', message: 'canceling statement due to user request' });
          expect(ms).toBeLessThan(900);
        } else {
          // Every connection is PGlite's one backend (the same pid), owned by the bootstrap
          // superuser: the demo role may not signal it, and the sleep holds the backend until it ends.
          // (pg_cancel_backend is also revoked from PUBLIC by the hardening, ADR 0035.)
          await expect(cancel).rejects.toMatchObject({
            code: '42501',
            message: expect.stringMatching(
              /^permission denied (to cancel query|for function pg_cancel_backend)$/,
            ),
          });
          expect(error).toBeUndefined();
          expect(ms).toBeGreaterThanOrEqual(950);
        }
      } finally {
        await Promise.all([sleeper.end(), canceller.end()]);
      }
    });

    it('keeps a login role from becoming the superuser on PostgreSQL only', async () => {
      const t = target();
      const client = new pg.Client(t.demo);
      await client.connect();
      try {
        const become = client.query(`SET SESSION AUTHORIZATION ${pg.escapeIdentifier(t.superuser.user)}`);
        if (t.kind === 'postgresql') {
          await expect(become).rejects.toMatchObject({ code: '42501' });
        } else {
          // PGlite's session user is the bootstrap superuser (ADR 0031: not a security boundary);
          // through the API the SQL guard (ADR 0035) refuses SET.
          await become;
          const { rows } = await client.query('SELECT current_user AS u');
          expect(rows[0].u).toBe(t.superuser.user);
          await client.query('RESET SESSION AUTHORIZATION');
        }
      } finally {
        await client.end();
      }
    });
  });

  describe('checkIdColumn', () => {
    it.each([
      ['a unique non-null column', 'id', true],
      ['a column with duplicates', 'kind', false],
      ['a column with nulls', 'population', false],
      ['a column the view does not return', 'nope', false],
    ])('answers for %s', async (_, column, expected) => {
      expect(await checkIdColumn(target().demo, 'SELECT * FROM places', column)).toBe(expected);
    });

    it('throws UnavailableError for a closed port', async () => {
      await expect(
        checkIdColumn({ ...target().demo, port: await freePort() }, 'SELECT * FROM places', 'id'),
      ).rejects.toBeInstanceOf(UnavailableError);
    });
  });
}
