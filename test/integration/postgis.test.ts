import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgis, startEmbeddedPostgis } from '../../infra/local/postgis.ts';
import {
  checkIdColumn,
  describeSql,
  discoverLayers,
  type PostgisConnection,
  probeLayer,
  readOnly,
  testConnection,
} from '../../shared/datasources/postgis.ts';
import { RuleViolationError, UnavailableError } from '../../shared/domain/errors.ts';
import { freePort } from '../support/ports.ts';

// The adapter against the embedded PostGIS (its own temp data dir: first init, then a re-open).
let dataDir: string;
let pgis: EmbeddedPostgis;
let demo: PostgisConnection;
let admin: pg.Pool;
const progress: string[] = [];
const timings = { firstInitMs: 0, reopenMs: 0 };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'geoplane-postgis-'));
  const first = await startEmbeddedPostgis({ dataDir, port: 0, onProgress: (m) => progress.push(m) });
  timings.firstInitMs = first.startupMs;
  expect(first.firstInit).toBe(true);
  const firstAdmin = adminPool(first);
  // Marks the data: a reseed on the next start would lose this row (or fail on CREATE TABLE).
  await firstAdmin.query(`INSERT INTO public.notes (title) VALUES ('survives a restart')`);
  await firstAdmin.end();
  await first.stop();

  pgis = await startEmbeddedPostgis({ dataDir, port: await freePort(), onProgress: (m) => progress.push(m) });
  timings.reopenMs = pgis.startupMs;
  console.log(`embedded PostGIS: first init ${timings.firstInitMs} ms, re-open ${timings.reopenMs} ms`);
  demo = {
    host: pgis.host,
    port: pgis.port,
    database: pgis.database,
    user: pgis.user,
    password: pgis.password,
  };
  admin = adminPool(pgis);
  // A view whose first row takes 1.5 s, in a schema of its own so discovery of `public` is unchanged.
  await admin.query(`
    CREATE SCHEMA slow;
    CREATE VIEW slow.places AS SELECT p.* FROM public.places p CROSS JOIN LATERAL (SELECT pg_sleep(1.5)) s;
    GRANT USAGE ON SCHEMA slow TO ${pg.escapeIdentifier(pgis.user)};
    GRANT SELECT ON slow.places TO ${pg.escapeIdentifier(pgis.user)};`);
}, 180_000);

afterAll(async () => {
  await admin?.end();
  await pgis?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function adminPool(p: EmbeddedPostgis): pg.Pool {
  return new pg.Pool({
    host: p.host,
    port: p.port,
    database: p.database,
    user: p.admin.user,
    password: p.admin.password,
    max: 2,
  });
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

describe('embedded PostGIS', () => {
  it('reports progress on the first start and keeps its data across a restart', async () => {
    expect(progress.join('\n')).toMatch(/first start/);
    expect(pgis.firstInit).toBe(false);
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM public.notes WHERE title = 'survives a restart'`,
    );
    expect(rows[0].n).toBe(1);
    expect(timings.reopenMs).toBeLessThan(timings.firstInitMs);
  });

  it('refuses a wrong password, an unknown role and an unknown database like PostgreSQL does', async () => {
    const login = async (overrides: Partial<pg.ClientConfig>) => {
      const client = new pg.Client({ ...demo, connectionTimeoutMillis: 2000, ...overrides });
      try {
        await client.connect();
        return 'connected';
      } catch (error) {
        return (error as { code?: string }).code;
      } finally {
        await client.end().catch(() => {});
      }
    };
    expect(await login({})).toBe('connected');
    expect(await login({ password: 'wrong' })).toBe('28P01');
    expect(await login({ user: 'nobody' })).toBe('28P01');
    expect(await login({ database: 'elsewhere' })).toBe('3D000');
  });

  it('keeps each connection in its own role on the single shared backend', async () => {
    const demoPool = new pg.Pool({ ...demo, max: 3 });
    try {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          (i % 2 ? demoPool : admin).query<{ v: number; u: string }>(
            'SELECT $1::int AS v, current_user AS u',
            [i],
          ),
        ),
      );
      results.forEach((r, i) => {
        expect(r.rows[0]).toEqual({ v: i, u: i % 2 ? pgis.user : pgis.admin.user });
      });
      await expect(demoPool.query('SELECT * FROM public.secrets')).rejects.toMatchObject({ code: '42501' });
      await expect(admin.query('SELECT count(*) FROM public.secrets')).resolves.toBeTruthy();
    } finally {
      await demoPool.end();
    }
  });

  it('keeps a client in step after an error in a parameterised query (PGlite answers ReadyForQuery twice)', async () => {
    const client = new pg.Client(demo);
    await client.connect();
    try {
      for (let i = 1; i <= 3; i++) {
        await expect(client.query('SELECT $1::int / 0', [i])).rejects.toMatchObject({ code: '22012' });
        expect((await client.query('SELECT $1::int AS v', [i])).rows).toEqual([{ v: i }]);
      }
    } finally {
      await client.end();
    }
  });
});

describe('testConnection', () => {
  it('connects and reports the PostgreSQL and PostGIS versions', async () => {
    const result = await testConnection(demo);
    expect(result).toMatchObject({
      ok: true,
      message: expect.stringMatching(/PostgreSQL 18\.\d+ with PostGIS 3\./),
    });
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it.each([
    ['a wrong password', { password: 'wrong' }, /password authentication failed/],
    ['an unknown database', { database: 'elsewhere' }, /database "elsewhere" does not exist/],
    ['sslmode=require against a server without TLS', { sslmode: 'require' as const }, /does not support SSL/],
    ['a closed port', { port: 1 }, /unavailable: connect ECONNREFUSED/],
  ])('answers ok:false with the reason for %s', async (_, overrides, message) => {
    const result = await testConnection({ ...demo, ...overrides });
    expect(result).toMatchObject({ ok: false, message: expect.stringMatching(message) });
  });
});

describe('discoverLayers', () => {
  it('finds the three spatial tables with type, SRID and extent, and neither notes nor secrets', async () => {
    const layers = await discoverLayers(demo);
    expect(layers.map((l) => [l.name, l.geometry_column, l.geometry_type, l.srid])).toEqual([
      ['parcels', 'geom', 'POLYGON', 4326],
      ['places', 'geom', 'POINT', 4326],
      ['roads', 'geom', 'LINESTRING', 4326],
    ]);
    for (const layer of layers) {
      const { rows } = await admin.query(
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
    const layers = await discoverLayers({ ...demo, schemas: ['slow'] });
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
    const { ms, error } = await elapsed(() => discoverLayers({ ...demo, port: closed }));
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ reason: 'datasource_unavailable' });
    expect(ms).toBeLessThan(5000);
  });

  it('throws UnavailableError after the 2 s connect timeout when the server never answers', async () => {
    const silent = await silentServer();
    try {
      const { ms, error } = await elapsed(() => discoverLayers({ ...demo, port: silent.port }));
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
    await expect(discoverLayers({ ...demo, ...overrides })).rejects.toSatisfy(
      (e: unknown) => e instanceof RuleViolationError && e.reason === 'source_unreadable',
    );
  });
});

describe('probeLayer', () => {
  it.each(['places', 'public.places'])('reads a feature of %s', async (sourceLayer) => {
    const result = await probeLayer(demo, sourceLayer);
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
    [
      'a table the role may not read',
      'secrets',
      /Permission denied: the role "geoplane_demo" can't read "public.secrets"/,
    ],
  ])('refuses %s with the reason', async (_, sourceLayer, reason) => {
    expect(await probeLayer(demo, sourceLayer)).toEqual({ ok: false, reason: expect.stringMatching(reason) });
  });

  it('gives up when no feature is read within the budget (client-side deadline; PGlite ignores statement_timeout)', async () => {
    const { ms, result } = await elapsed(() => probeLayer({ ...demo, schemas: ['slow'] }, 'places', 300));
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/within 300 ms/) });
    expect(ms).toBeLessThan(1400);
  });

  it('throws UnavailableError for a closed port', async () => {
    await expect(probeLayer({ ...demo, port: await freePort() }, 'places')).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });
});

describe('describeSql', () => {
  it('discovers columns, geometry, SRID and a suggested id column', async () => {
    const result = await describeSql(demo, 'SELECT id, name, population, founded, geom FROM places;');
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
      demo,
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

  it('takes type and SRID from the column type when the view has no rows, and 4326 when unknown', async () => {
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
    ['an unknown column', 'SELECT nope, geom FROM places', /column "nope" does not exist/],
    ['no geometry column', 'SELECT id, title FROM notes', /at least one geometry column/],
    ['a table the role may not read', 'SELECT * FROM secrets', /permission denied for table secrets/],
    ['a statement the SQL gate refuses', 'DELETE FROM places', /.+/],
    ['a column name returned twice', 'SELECT id, id, geom FROM places', /"id" more than once/],
  ])('answers valid:false for %s', async (_, sql, error) => {
    expect(await describeSql(demo, sql)).toEqual({ valid: false, error: expect.stringMatching(error) });
  });

  it('throws UnavailableError for a closed port', async () => {
    await expect(
      describeSql({ ...demo, port: await freePort() }, 'SELECT * FROM places'),
    ).rejects.toBeInstanceOf(UnavailableError);
  });
});

describe('read-only transactions', () => {
  it('runs in READ ONLY with transaction-local timeouts that do not outlive it', async () => {
    const inside = await readOnly(demo, 1234, async (query) => ({
      readOnly: (await query<{ transaction_read_only: string }>('SHOW transaction_read_only')).rows[0]
        ?.transaction_read_only,
      statement: (await query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]
        ?.statement_timeout,
      lock: (await query<{ lock_timeout: string }>('SHOW lock_timeout')).rows[0]?.lock_timeout,
    }));
    expect(inside).toEqual({ readOnly: 'on', statement: '1234ms', lock: '1234ms' });
    // The embedded backend is shared by every connection: a session-level SET would leak to all.
    const { rows } = await admin.query('SHOW statement_timeout');
    expect(rows[0].statement_timeout).toBe('0');
  });

  it('cannot write, even as a role that may', async () => {
    const superuser = { ...demo, user: pgis.admin.user, password: pgis.admin.password };
    await expect(
      readOnly(superuser, 2000, (query) => query(`INSERT INTO public.notes (title) VALUES ('written')`)),
    ).rejects.toMatchObject({ code: '25006' });
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM public.notes WHERE title = 'written'`);
    expect(rows[0].n).toBe(0);
  });
});

describe('checkIdColumn', () => {
  it.each([
    ['a unique non-null column', 'id', true],
    ['a column with duplicates', 'kind', false],
    ['a column with nulls', 'population', false],
    ['a column the view does not return', 'nope', false],
  ])('answers for %s', async (_, column, expected) => {
    expect(await checkIdColumn(demo, 'SELECT * FROM places', column)).toBe(expected);
  });

  it('throws UnavailableError for a closed port', async () => {
    await expect(
      checkIdColumn({ ...demo, port: await freePort() }, 'SELECT * FROM places', 'id'),
    ).rejects.toBeInstanceOf(UnavailableError);
  });
});
