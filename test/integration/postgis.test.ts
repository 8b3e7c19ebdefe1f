import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgisConnection } from '#datasources/postgis.ts';
import { type EmbeddedPostgis, startEmbeddedPostgis } from '#infra/local/postgis.ts';
import { freePort } from '../support/ports.ts';
import { addSlowSchema, type PostgisTarget, postgisAdapterSuite } from '../support/postgis-suite.ts';

// The embedded PostGIS in its own temp data dir (first init, then a re-open): its own behaviour,
// then the adapter suite that postgis-real.test.ts runs against a real PostgreSQL (ADR 0076).
let dataDir: string;
let pgis: EmbeddedPostgis;
let demo: PostgisConnection;
let admin: pg.Pool;
let target: PostgisTarget;
const progress: string[] = [];
/** The progress lines of the first start (a new data dir), then of the re-open. */
const starts = { first: [] as string[], reopen: [] as string[] };
const timings = { firstInitMs: 0, reopenMs: 0 };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'geoplane-postgis-'));
  const first = await startEmbeddedPostgis({ dataDir, port: 0, onProgress: (m) => starts.first.push(m) });
  timings.firstInitMs = first.startupMs;
  expect(first.firstInit).toBe(true);
  const firstAdmin = adminPool(first);
  // Marks the data: a reseed on the next start would lose this row (or fail on CREATE TABLE).
  await firstAdmin.query(`INSERT INTO public.notes (title) VALUES ('survives a restart')`);
  await firstAdmin.end();
  await first.stop();

  pgis = await startEmbeddedPostgis({
    dataDir,
    port: await freePort(),
    onProgress: (m) => {
      starts.reopen.push(m);
      progress.push(m);
    },
  });
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
  await addSlowSchema(admin, pgis.user);
  target = {
    kind: 'embedded',
    demo,
    superuser: { ...demo, user: pgis.admin.user, password: pgis.admin.password },
    admin,
  };
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

describe('embedded PostGIS', () => {
  it('reports progress on the first start and keeps its data across a restart', async () => {
    // A new data dir is a copy of the template (ADR 0155); the re-open neither copies nor seeds.
    expect(starts.first.join('\n')).toMatch(
      /creating the embedded PostGIS database \(first start only\) from its template/,
    );
    expect(starts.reopen.join('\n')).not.toMatch(/first start|template/);
    expect(pgis.firstInit).toBe(false);
    const { rows } = await admin.query(
      `SELECT count(*)::int AS n FROM public.notes WHERE title = 'survives a restart'`,
    );
    expect(rows[0].n).toBe(1);
  });

  it("makes each new data dir a copy of the template with passwords of its own, and none of another copy's data", async () => {
    const otherDir = mkdtempSync(join(tmpdir(), 'geoplane-postgis-'));
    const other = await startEmbeddedPostgis({ dataDir: otherDir, port: 0, onProgress: () => {} });
    try {
      expect(other.firstInit).toBe(true);
      expect(other.admin.password).not.toBe(pgis.admin.password);
      expect(other.importer.password).not.toBe(pgis.importer.password);
      const login = async (password: string) => {
        const client = new pg.Client({
          host: other.host,
          port: other.port,
          database: other.database,
          user: other.admin.user,
          password,
        });
        client.on('error', () => {});
        try {
          await client.connect();
          return (
            await client.query(
              `SELECT count(*)::int AS n FROM public.notes WHERE title = 'survives a restart'`,
            )
          ).rows[0].n as number;
        } finally {
          await client.end().catch(() => {});
        }
      };
      // Its own superuser password works, the other data dir's is refused: nothing of the
      // template's login (or of this file's first data dir) carries over.
      expect(await login(other.admin.password)).toBe(0);
      await expect(login(pgis.admin.password)).rejects.toMatchObject({ code: '28P01' });
      // The seed is there: the demo login reads the demo tables.
      const demoClient = new pg.Client({
        host: other.host,
        port: other.port,
        database: other.database,
        user: other.user,
        password: other.password,
      });
      await demoClient.connect();
      try {
        expect((await demoClient.query('SELECT count(*)::int AS n FROM public.places')).rows[0].n).toBe(300);
      } finally {
        await demoClient.end();
      }
    } finally {
      await other.stop();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('checkpoints while idle, so a restart after a runaway replays a bounded WAL (ADR 0142)', async () => {
    const behind = async () =>
      Number(
        (
          await admin.query<{ behind: string }>(
            'SELECT (pg_current_wal_insert_lsn() - (pg_control_checkpoint()).redo_lsn)::text AS behind',
          )
        ).rows[0]?.behind,
      );
    await admin.query('CREATE TABLE public.wal_fill (id int, pad text)');
    // Measured inside the writing transaction: the worker's checkpoint waits for it (a checkpoint
    // that ran between the insert and a later read would make the WAL look short already).
    const writer = await admin.connect();
    let written: number;
    try {
      await writer.query('BEGIN');
      await writer.query(
        `INSERT INTO public.wal_fill SELECT g, repeat('x', 200) FROM generate_series(1, 100000) g`,
      );
      written = Number(
        (
          await writer.query<{ behind: string }>(
            'SELECT (pg_current_wal_insert_lsn() - (pg_control_checkpoint()).redo_lsn)::text AS behind',
          )
        ).rows[0]?.behind,
      );
      await writer.query('COMMIT');
    } finally {
      writer.release();
    }
    // PGlite has no checkpointer: without the worker's own checkpoints this stays above 16 MB.
    expect(written).toBeGreaterThan(16 * 1024 * 1024);
    const deadline = Date.now() + 20_000;
    let last = await behind();
    while (last > 16 * 1024 * 1024 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      last = await behind();
    }
    await admin.query('DROP TABLE public.wal_fill');
    expect(last).toBeLessThanOrEqual(16 * 1024 * 1024);
  }, 60_000);

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

postgisAdapterSuite(() => target);
