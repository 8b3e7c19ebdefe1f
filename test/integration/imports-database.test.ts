import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportDatabase } from '#datasources/imports/database.ts';
import {
  connect,
  ImportConnection,
  type ImportDatabaseConfig,
  onConnection,
} from '#datasources/imports/database-connection.ts';
import { ImportSession } from '#datasources/imports/database-session.ts';
import { layerTable } from '#datasources/imports/database-staging.ts';
import { discover, readRows } from '#datasources/imports/formats/index.ts';
import { certainlyValidParsed } from '#datasources/imports/formats/validity.ts';
import {
  type FeatureSource,
  FIRST_CHUNK_FEATURES,
  featureRows,
  loadImport,
  type RowSource,
} from '#datasources/imports/pipeline.ts';
import type { BatchBounds } from '#datasources/imports/staged-rows.ts';
import { defaultPlan } from '#domain/import-plans.ts';
import {
  type Discovery,
  type FieldType,
  type GeometryType,
  ImportInputError,
  type ImportPlan,
  type LayerPlan,
  type SourceFeature,
  type SourceLayer,
} from '#domain/import-sources.ts';
import { type EmbeddedPostgis, startEmbeddedPostgis } from '#infra/local/postgis.ts';
import { IMPORT_ROLE_NAMES, type ImportRoleNames, importRolesSql } from '#infra/local/postgis-seed.ts';
import { BOWTIE_RING } from '../fixtures/imports/support.ts';
import {
  dropImportRoles,
  REAL_POSTGRES_SKIP_REASON,
  REAL_POSTGRES_URL,
  type RealPostgis,
  startRealPostgis,
} from '../support/real-postgres.ts';
import { sentQueries } from '../support/sent-queries.ts';

// The import database (ADR 0085) against the embedded PostGIS and, when GEOPLANE_TEST_POSTGRES_URL
// is set, a real PostgreSQL + PostGIS: the same suite, the loader and serving logins of each.

interface ImportTarget {
  kind: 'embedded' | 'postgresql';
  importer: ImportDatabaseConfig;
  /** The role names beside the loader (ADR 0105). */
  roles: ImportRoleNames;
  /** A superuser pool in the same database. */
  admin: pg.Pool;
}

/** One source layer: its discovery entry and its features. */
interface Fixture {
  layer: SourceLayer;
  features: SourceFeature[];
}

function fixture(
  name: string,
  geometryType: GeometryType | null,
  srid: number | null,
  fields: Record<string, FieldType>,
  features: SourceFeature[],
): Fixture {
  return {
    layer: {
      name,
      fields: Object.entries(fields).map(([field, type]) => ({ name: field, type })),
      geometry_type: geometryType,
      srid,
      feature_count: features.length,
      bbox: null,
    },
    features,
  };
}

function layerPlan(f: Fixture, overrides: Partial<LayerPlan> = {}): LayerPlan {
  return {
    source_layer: f.layer.name,
    public_id: f.layer.name,
    enabled: true,
    public: true,
    fields: f.layer.fields.map((field) => ({ source: field.name, target: field.name, include: true })),
    ...overrides,
  };
}

function discoveryOf(fixtures: Fixture[]): Discovery {
  return { format: 'geojson', size_bytes: 0, layers: fixtures.map((f) => f.layer), warnings: [] };
}

/** Features from memory; `failAt` throws when the reader reaches that (1-based) feature. */
function memorySource(
  fixtures: Fixture[],
  options: { failAt?: number; ends?: boolean; bounds?: BatchBounds } = {},
): RowSource & {
  opened: number[];
  offsets: (number | undefined)[];
  lines: (number | undefined)[];
  yielded: number[];
} {
  const opened: number[] = [];
  const offsets: (number | undefined)[] = [];
  const lines: (number | undefined)[] = [];
  /** Features yielded, per open. */
  const yielded: number[] = [];
  const features: FeatureSource = {
    features(layer, { skip, offset, lines: linesBefore, onBytes }) {
      const features = fixtures.find((f) => f.layer.name === layer)?.features ?? [];
      opened.push(skip);
      offsets.push(offset);
      lines.push(linesBefore);
      const open = yielded.push(0) - 1;
      return (async function* () {
        // A reader resuming by position: feature i's bytes are [100 i, 100 (i + 1)), 3 lines each.
        const from = offset !== undefined ? offset / 100 : skip;
        for (let i = from; i < features.length; i++) {
          if (options.failAt === i + 1) throw new Error('the reader failed mid-chunk');
          onBytes((i + 1) * 100);
          const feature = features[i] as SourceFeature;
          yielded[open] = (yielded[open] ?? 0) + 1;
          yield options.ends ? { ...feature, end: (i + 1) * 100, lines: (i + 1) * 3 } : feature;
        }
      })();
    },
  };
  return { opened, offsets, lines, yielded, ...featureRows(features, options.bounds) };
}

const point = (x: number, y: number) => ({ type: 'Point', coordinates: [x, y] });
const polygonOf = (ring: number[][]) => ({ type: 'Polygon', coordinates: [ring] });
const points = (n: number, name = 'points') =>
  fixture(
    name,
    'Point',
    4326,
    { name: 'text', rank: 'integer' },
    Array.from({ length: n }, (_, i) => ({
      properties: { name: `p${i + 1}`, rank: i + 1 },
      geometry: point(-10 + (i % 200) / 10, 40 + Math.floor(i / 200) / 10),
    })),
  );

function importSuite(target: () => ImportTarget): void {
  let db: ImportDatabase;
  const admin = () => target().admin;
  const load = (
    importId: string,
    fixtures: Fixture[],
    plan: ImportPlan,
    extra: Partial<Parameters<typeof loadImport>[0]> = {},
  ) =>
    loadImport({
      db,
      importId,
      plan,
      discovery: discoveryOf(fixtures),
      source: memorySource(fixtures),
      budgetMs: 120_000,
      ...extra,
    });
  /** Loads `a` in runs with no time budget (each writes its first chunk, then stops) until done. */
  const loadInRuns = async (importId: string, a: Fixture, source: RowSource, chunkFeatures: number) => {
    const plan = { layers: [layerPlan(a)] };
    const run = () =>
      loadImport({ db, importId, plan, discovery: discoveryOf([a]), source, budgetMs: 0, chunkFeatures });
    const runs = [await run()];
    for (let i = 0; i < 10 && !runs.at(-1)?.done; i++) runs.push(await run());
    return runs;
  };
  const relationsOf = async (importId: string) => {
    const { staging, published } = db.schemas(importId);
    return (await db.importRelations()).filter((r) => r.schema === staging || r.schema === published);
  };
  /** Runs `sql` as the login of import `importId` (ADR 0105). */
  const readerQuery = async (importId: string, sql: string) => {
    const { host, port, database } = target().importer;
    const client = new pg.Client({
      host,
      port,
      database,
      ...db.reader(importId),
      connectionTimeoutMillis: 5_000,
    });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(() => {
    db = new ImportDatabase(target().importer);
  });

  it("leaves a session's connection open for the next session of its login, unless the session failed or left a transaction open", async () => {
    // Prepare: each session answers the connection it ran on
    const config = target().importer;
    const session = (work: (client: pg.Client) => Promise<unknown> = async () => {}) =>
      onConnection(config, async (client) => {
        await client.query('SELECT 1');
        await work(client);
        return client;
      });

    // Act + Assess: the next session takes the connection the last one left
    const first = await session();
    expect(await session()).toBe(first);
    // A session that failed closes its connection: the next one connects anew
    await expect(
      session(async () => {
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    const afterFailure = await session();
    expect(afterFailure).not.toBe(first);
    // A session that left a transaction open passes nothing of it on
    expect(await session((client) => client.query('BEGIN'))).toBe(afterFailure);
    const next = await session();
    expect(next).not.toBe(afterFailure);
    expect(next.getTransactionStatus()).toBe('I');
    // The readiness probe's kind: a connection of its own, closed after
    const fresh = await onConnection(config, async (client) => client, { fresh: true });
    expect(fresh).not.toBe(next);
    expect(await session()).toBe(next);
  });
  it('opens each transaction in one round trip, its timeouts, UTC and no JIT set with BEGIN', async () => {
    const client = await connect(target().importer);
    try {
      const { sent } = sentQueries(client);
      const c = new ImportConnection(client);
      const inside = await c.tx(4_321, async () => {
        const { rows } = await c.query<Record<string, string>>(
          `SELECT current_setting('statement_timeout') AS statement, current_setting('TimeZone') AS tz,
                  current_setting('jit') AS jit`,
        );
        return rows[0];
      });
      expect(inside).toEqual({ statement: '4321ms', tz: 'UTC', jit: 'off' });
      // BEGIN with the settings, the statement, COMMIT.
      expect(sent).toHaveLength(3);
      expect(sent[0]).toMatch(/^BEGIN; SET LOCAL statement_timeout = 4321;/);
      expect(sent[2]).toBe('COMMIT');
    } finally {
      await client.end();
    }
  });

  it("readies a new connection for a layer's rows in one statement: whether COPY is taken, and PostGIS loaded for geometries (ADR 0143)", async () => {
    // Prepare: a layer with geometries and one without, each on a connection of its own
    const withGeometry = layerTable(layerPlan(points(1, 'ready')), points(1, 'ready').layer);
    const table = fixture('ready_rows', null, null, { name: 'text' }, [
      { properties: { name: 'a' }, geometry: null },
    ]);
    const withoutGeometry = layerTable(layerPlan(table), table.layer);
    const ready = async (layer: typeof withGeometry) => {
      const client = await connect(target().importer);
      try {
        const { sent } = sentQueries(client);
        const host = new ImportDatabase(target().importer);
        const session = new ImportSession(client, host);
        await session.readyForRows(layer);
        // Asked: the same database answers what the first chunk's write asks, without a statement,
        // and a later layer of the same connection finds it ready.
        const { sent: after } = sentQueries(client);
        const copy = await host.takesCopy(new ImportSession(client, host));
        await session.readyForRows(layer);
        return { sent, copy, after };
      } finally {
        await client.end();
      }
    };

    // Act
    const geometries = await ready(withGeometry);
    const plain = await ready(withoutGeometry);

    // Assess
    expect(geometries.sent).toHaveLength(1);
    expect(geometries.sent[0]).toMatch(/version\(\).*postgis_lib_version\(\)/);
    expect(plain.sent).toHaveLength(1);
    expect(plain.sent[0]).not.toMatch(/postgis/);
    expect(geometries.copy).toBe(target().kind === 'postgresql');
    expect(geometries.after).toEqual([]);
    expect(plain.after).toEqual([]);
  });

  it('creates the import roles: the loader is no superuser and creates no roles; only a NOLOGIN role may', async () => {
    const { roles } = target();
    const { rows } = await admin().query(
      `SELECT rolname, rolsuper, rolcreaterole, rolcanlogin, has_database_privilege(rolname, current_database(), 'CREATE') AS can_create
       FROM pg_roles WHERE rolname IN ($1, $2, $3) ORDER BY rolname = $1 DESC, rolname = $2 DESC`,
      [target().importer.user, roles.readers, roles.roleAdmin],
    );
    expect(rows).toEqual([
      {
        rolname: target().importer.user,
        rolsuper: false,
        rolcreaterole: false,
        rolcanlogin: true,
        can_create: true,
      },
      {
        rolname: roles.readers,
        rolsuper: false,
        rolcreaterole: false,
        rolcanlogin: false,
        can_create: false,
      },
      {
        rolname: roles.roleAdmin,
        rolsuper: false,
        rolcreaterole: true,
        rolcanlogin: false,
        can_create: false,
      },
    ]);
    // The loader can't make a login by itself, nor call the role functions with other names.
    const loader = new pg.Client({ ...target().importer, ssl: false, connectionTimeoutMillis: 5_000 });
    await loader.connect();
    try {
      await expect(
        loader.query(`CREATE ROLE geoplane_probe_${randomBytes(3).toString('hex')} LOGIN`),
      ).rejects.toMatchObject({
        code: '42501',
      });
      await expect(
        loader.query(`SELECT geoplane_import_roles.ensure_reader('postgres', 'x')`),
      ).rejects.toMatchObject({ code: '22023' });
      await expect(
        loader.query(`SELECT geoplane_import_roles.drop_reader('x; DROP ROLE postgres')`),
      ).rejects.toMatchObject({
        code: '22023',
      });
    } finally {
      await loader.end();
    }
  });

  it("gives each published import a login of its own: it reads its tables, not its staging, not another import's", async () => {
    // Prepare: two imports (two workspaces' files), one published, one still staged.
    const mine = randomUUID();
    const theirs = randomUUID();
    const a = points(12, 'alpha');
    const b = points(7, 'beta');
    await load(mine, [a], { layers: [layerPlan(a)] });
    await load(theirs, [b], { layers: [layerPlan(b)] });
    const other = randomUUID();
    await load(other, [a], { layers: [layerPlan(a)] });
    await db.publish(mine, ['alpha']);
    await db.publish(other, ['alpha']);

    // Act + Assess: its own published table only.
    const own = await readerQuery(mine, `SELECT count(*)::int AS n FROM ${db.schemas(mine).published}.alpha`);
    expect(own.rows[0]).toEqual({ n: 12 });
    for (const sql of [
      `SELECT count(*) FROM ${db.schemas(theirs).staging}.beta`,
      `SELECT count(*) FROM ${db.schemas(other).published}.alpha`,
      `SELECT count(*) FROM ${db.schemas(mine).staging}."geoplane$checkpoint"`,
      'SELECT count(*) FROM geoplane_imports.fences',
      `SELECT geoplane_import_roles.drop_reader('${db.schemas(other).published.slice('import_'.length)}')`,
    ]) {
      await expect(readerQuery(mine, sql), sql).rejects.toMatchObject({
        code: expect.stringMatching(/^42501|3F000|42P01$/),
      });
    }
    // The login is no older import's shared one: another import's password does not open it.
    const { host, port, database } = target().importer;
    const wrong = new pg.Client({
      host,
      port,
      database,
      user: db.reader(mine).user,
      password: db.reader(other).password,
    });
    await expect(wrong.connect()).rejects.toMatchObject({ code: '28P01' });
    await wrong.end().catch(() => {});

    // dropAll takes the login with the tables.
    await db.dropAll(other);
    const { rows } = await admin().query('SELECT count(*)::int AS n FROM pg_roles WHERE rolname = $1', [
      db.reader(other).user,
    ]);
    expect(rows[0]).toEqual({ n: 0 });
    await expect(readerQuery(other, 'SELECT 1')).rejects.toMatchObject({ code: '28P01' });
    await db.dropAll(mine);
    await db.dropAll(theirs);
  });

  it('loads, finalizes and publishes points, lines and polygons with their types, keys and indexes', async () => {
    // Prepare
    const importId = randomUUID();
    const lines = fixture(
      'roads',
      'MultiLineString',
      4326,
      { ref: 'text' },
      Array.from({ length: 300 }, (_, i) => ({
        properties: { ref: `r${i}` },
        geometry:
          i % 2
            ? {
                type: 'LineString',
                coordinates: [
                  [i / 100, 45],
                  [i / 100 + 0.01, 45.01],
                ],
              }
            : {
                type: 'MultiLineString',
                coordinates: [
                  [
                    [i / 100, 46],
                    [i / 100 + 0.01, 46.01],
                  ],
                ],
              },
      })),
    );
    const polygons = fixture(
      'parcels',
      'Polygon',
      4326,
      { area: 'double precision' },
      Array.from({ length: 250 }, (_, i) => ({
        properties: { area: i * 1.5 },
        geometry: { wkt: `POLYGON((${i} 0, ${i + 1} 0, ${i + 1} 1, ${i} 1, ${i} 0))` },
      })),
    );
    const pts = points(1200);
    const fixtures = [pts, lines, polygons];
    const plan = { layers: fixtures.map((f) => layerPlan(f)) };

    // Act
    const result = await load(importId, fixtures, plan, { chunkFeatures: 500 });

    // Assess
    expect(result).toMatchObject({ done: true, processed_features: 1750, processed_layers: 3, warnings: [] });
    const { staging, published } = db.schemas(importId);
    const columns = await admin().query(
      `SELECT f_table_name AS t, type, srid FROM geometry_columns WHERE f_table_schema = $1 ORDER BY 1`,
      [staging],
    );
    expect(columns.rows).toEqual([
      { t: 'parcels', type: 'POLYGON', srid: 4326 },
      { t: 'points', type: 'POINT', srid: 4326 },
      { t: 'roads', type: 'MULTILINESTRING', srid: 4326 },
    ]);
    const indexes = await admin().query(
      `SELECT tablename AS t, string_agg(CASE WHEN indexdef LIKE '%USING gist%' THEN 'gist' ELSE 'btree' END, ',' ORDER BY indexdef LIKE '%USING gist%') AS kinds
       FROM pg_indexes WHERE schemaname = $1 AND tablename NOT LIKE 'geoplane$%' GROUP BY 1 ORDER BY 1`,
      [staging],
    );
    expect(indexes.rows).toEqual([
      { t: 'parcels', kinds: 'btree,gist' },
      { t: 'points', kinds: 'btree,gist' },
      { t: 'roads', kinds: 'btree,gist' },
    ]);
    expect(await db.finalizeLayer(importId, plan.layers[0] as LayerPlan, pts.layer)).toEqual({
      rows: 1200,
      invalid: 0,
      repaired: 0,
      extent: [-10, 40, -10 + 199 / 10, 40.5],
      srid: 4326,
      geometry_type: 'Point',
    });

    await db.publish(importId, ['points', 'roads', 'parcels']);

    expect(await relationsOf(importId)).toEqual([
      { schema: published, table: 'parcels' },
      { schema: published, table: 'points' },
      { schema: published, table: 'roads' },
    ]);
    const counts = await admin().query(
      `SELECT (SELECT count(*) FROM ${published}.points)::int AS points, (SELECT count(DISTINCT fid) FROM ${published}.points)::int AS fids,
              (SELECT count(*) FROM ${published}.roads)::int AS roads, (SELECT count(*) FROM ${published}.parcels)::int AS parcels,
              (SELECT name FROM ${published}.points WHERE fid = 7) AS seventh`,
    );
    expect(counts.rows[0]).toEqual({ points: 1200, fids: 1200, roads: 300, parcels: 250, seventh: 'p7' });
    expect(await db.checkpoint(importId, 'points')).toEqual({ features: 1200, bytes: 0, finalized: true });
  });

  it("lets the import's login read its published tables only, and publishing again after a crash halfway is fine", async () => {
    // Prepare
    const importId = randomUUID();
    const a = points(30, 'alpha');
    const b = points(20, 'beta');
    await load(importId, [a, b], { layers: [layerPlan(a), layerPlan(b)] });
    const { staging, published } = db.schemas(importId);

    // Act + Assess: before publish the import has no login at all, so nothing reads its staging.
    await expect(readerQuery(importId, `SELECT count(*) FROM ${staging}.alpha`)).rejects.toMatchObject({
      code: '28P01',
    });
    // A publish that crashed after moving one table (what a non-atomic mover could leave).
    await admin().query(`CREATE SCHEMA ${published} AUTHORIZATION ${pg.escapeIdentifier(target().importer.user)};
      ALTER TABLE ${staging}.alpha SET SCHEMA ${published}`);
    await db.publish(importId, ['alpha', 'beta']);
    await db.publish(importId, ['alpha', 'beta']);

    const { rows } = await readerQuery(
      importId,
      `SELECT (SELECT count(*) FROM ${published}.alpha)::int AS a, (SELECT count(*) FROM ${published}.beta)::int AS b`,
    );
    expect(rows[0]).toEqual({ a: 30, b: 20 });
    expect(await relationsOf(importId)).toEqual([
      { schema: published, table: 'alpha' },
      { schema: published, table: 'beta' },
    ]);
    await expect(db.publish(importId, ['gamma'])).rejects.toMatchObject({ reason: 'import_table_missing' });
    // A load run again after publishing finds the layers done and stages nothing.
    const rerun = await load(importId, [a, b], { layers: [layerPlan(a), layerPlan(b)] });
    expect(rerun).toMatchObject({ done: true, processed_features: 50, processed_layers: 2 });
    expect(await relationsOf(importId)).toHaveLength(2);
  });

  it('resumes from its checkpoint when the budget or shouldStop ends a run: exact count, no duplicates', async () => {
    // Prepare
    const importId = randomUUID();
    const a = points(1000, 'first');
    const b = points(450, 'second');
    const plan = { layers: [layerPlan(a), layerPlan(b)] };
    const source = memorySource([a, b]);
    const run = (budgetMs: number, shouldStop?: () => Promise<boolean>) =>
      loadImport({
        db,
        importId,
        plan,
        discovery: discoveryOf([a, b]),
        source,
        budgetMs,
        shouldStop,
        chunkFeatures: 100,
      });

    // Act
    const first = await run(0);
    const stopped = await run(60_000, async () => true);
    const runs = [first, stopped];
    for (let i = 0; i < 40 && !runs.at(-1)?.done; i++) runs.push(await run(0));

    // Assess
    expect(first).toMatchObject({ done: false, processed_features: 100, processed_layers: 0 });
    expect(stopped).toMatchObject({ done: false, processed_features: 200 });
    expect(runs.at(-1)).toMatchObject({ done: true, processed_features: 1450, processed_layers: 2 });
    expect(source.opened.slice(0, 3)).toEqual([0, 100, 200]);
    const { staging } = db.schemas(importId);
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(DISTINCT fid)::int AS fids, min(fid)::int AS lo, max(fid)::int AS hi,
              count(*) FILTER (WHERE name = 'p' || fid)::int AS aligned FROM ${staging}.first`,
    );
    expect(rows[0]).toEqual({ n: 1000, fids: 1000, lo: 1, hi: 1000, aligned: 1000 });
    expect(await db.checkpoint(importId, 'second')).toEqual({
      features: 450,
      bytes: 45_000,
      finalized: true,
    });
  });

  it('resumes by position when the reader says where each feature ends: the next run reads on from there (ADR 0143)', async () => {
    // Prepare
    const importId = randomUUID();
    const a = points(1000, 'positioned');
    const source = memorySource([a], { ends: true });

    // Act
    const runs = await loadInRuns(importId, a, source, 250);

    // Assess
    expect(runs.at(-1)).toMatchObject({ done: true, processed_features: 1000 });
    expect(source.opened.slice(0, 4)).toEqual([0, 250, 500, 750]);
    expect(source.offsets.slice(0, 4)).toEqual([undefined, 25_000, 50_000, 75_000]);
    // The lines before each offset come back with it (a line-based reader counts none again).
    expect(source.lines.slice(0, 4)).toEqual([undefined, 750, 1500, 2250]);
    const { staging } = db.schemas(importId);
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(DISTINCT fid)::int AS fids,
              count(*) FILTER (WHERE name = 'p' || fid)::int AS aligned FROM ${staging}.positioned`,
    );
    expect(rows[0]).toEqual({ n: 1000, fids: 1000, aligned: 1000 });
  });

  it("loads a CSV through the reader thread in runs that stop at marks, its reader held at each run's last chunk (ADR 0150): rows exact", async () => {
    // Prepare: 6,000 CSV rows; each run is to stop once the import's features read reach its mark
    const importId = randomUUID();
    const dir = mkdtempSync(join(tmpdir(), 'geoplane-read-limit-'));
    const path = join(dir, 'marks.csv');
    const lines = Array.from(
      { length: 6000 },
      (_, i) => `${i + 1},p${i + 1},${(i % 300) / 10},${Math.floor(i / 300) / 10}`,
    );
    writeFileSync(path, `rank,name,lon,lat\n${lines.join('\n')}\n`);
    const discovery = await discover(path, 'marks.csv');
    const plan = defaultPlan(discovery);
    const received: number[] = [];
    const source: RowSource = {
      async *rows(layer, { shape, ...options }) {
        let taken = 0;
        try {
          for await (const batch of readRows(path, 'marks.csv', layer, shape, options)) {
            taken += batch.count;
            yield batch;
          }
        } finally {
          received.push(taken);
        }
      },
    };
    const run = (mark: number) =>
      loadImport({
        db,
        importId,
        plan,
        discovery,
        source,
        budgetMs: 120_000,
        shouldStop: async (read) => read.features >= mark,
        chunkFeatures: 500,
      });

    // Act
    const runs = [];
    try {
      for (const mark of [1500, 3000, 4500, Number.POSITIVE_INFINITY]) runs.push(await run(mark));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Assess: each run ends at its mark, having taken from the reader what it writes (at most the
    // batch that crossed its last chunk's end more); every row is in the table once, in its place
    expect(runs.map((r) => r.processed_features)).toEqual([1500, 3000, 4500, 6000]);
    expect(runs.at(-1)).toMatchObject({ done: true });
    expect(received).toHaveLength(4);
    for (const n of received.slice(0, 3)) expect(n).toBeLessThan(1500 + 500);
    const table = plan.layers[0]?.public_id as string;
    const { staging } = db.schemas(importId);
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(DISTINCT fid)::int AS fids,
              count(*) FILTER (WHERE rank = fid AND name = 'p' || fid)::int AS aligned FROM ${staging}.${table}`,
    );
    expect(rows[0]).toEqual({ n: 6000, fids: 6000, aligned: 6000 });
  });

  it('takes rows from batches that end anywhere in its chunks: resumes by position, counts each misfit once', async () => {
    // Prepare: batches of 7 rows against chunks of 250; every 7th rank is not an integer
    const importId = randomUUID();
    const base = points(1000, 'unaligned');
    const a = {
      ...base,
      features: base.features.map((f, i) => ({
        ...f,
        properties: { ...f.properties, rank: i % 7 === 0 ? 'x' : i + 1 },
      })),
    };
    const source = memorySource([a], { ends: true, bounds: { features: 7, bytes: 1e9, ms: 1e9 } });

    // Act
    const runs = await loadInRuns(importId, a, source, 250);

    // Assess
    expect(runs.map((r) => r.processed_features).slice(0, 4)).toEqual([250, 500, 750, 1000]);
    expect(runs.at(-1)).toMatchObject({ done: true, processed_features: 1000 });
    expect(source.offsets.slice(0, 4)).toEqual([undefined, 25_000, 50_000, 75_000]);
    expect(runs.at(-1)?.warnings).toEqual([
      "layer unaligned: 143 values of field 'rank' didn't fit integer and were left empty",
    ]);
    const { staging } = db.schemas(importId);
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(DISTINCT fid)::int AS fids,
              count(*) FILTER (WHERE name = 'p' || fid)::int AS aligned,
              count(*) FILTER (WHERE rank IS NULL)::int AS misfits,
              count(*) FILTER (WHERE rank = fid)::int AS ranked FROM ${staging}.unaligned`,
    );
    expect(rows[0]).toEqual({ n: 1000, fids: 1000, aligned: 1000, misfits: 143, ranked: 857 });
  });

  it('stops before reading a chunk when told to then: the chunk in flight is written, nothing read is dropped', async () => {
    // Prepare: a run told to stop once it has read 300 features (as a budget spent by then would)
    const importId = randomUUID();
    const a = points(1000, 'stops_clean');
    const plan = { layers: [layerPlan(a)] };
    const source = memorySource([a], { ends: true });
    const run = () => {
      const open = source.yielded.length;
      return loadImport({
        db,
        importId,
        plan,
        discovery: discoveryOf([a]),
        source,
        budgetMs: 60_000,
        shouldStop: async () => (source.yielded[open] ?? 0) >= 300,
        chunkFeatures: 100,
      });
    };

    // Act
    const runs = [await run()];
    for (let i = 0; i < 10 && !runs.at(-1)?.done; i++) runs.push(await run());

    // Assess: each run reads exactly what it writes (300 each, the last the remaining 100)
    expect(runs.map((r) => r.processed_features)).toEqual([300, 600, 900, 1000]);
    expect(source.yielded).toEqual([300, 300, 300, 100]);
    expect(source.opened).toEqual([0, 300, 600, 900]);
    const { staging } = db.schemas(importId);
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(DISTINCT fid)::int AS fids,
              count(*) FILTER (WHERE name = 'p' || fid)::int AS aligned FROM ${staging}.stops_clean`,
    );
    expect(rows[0]).toEqual({ n: 1000, fids: 1000, aligned: 1000 });
  });

  it('starts each run with a short chunk (nothing is written while it is read), then full ones', async () => {
    // Prepare: chunks of 2,000 features; a run's first holds FIRST_CHUNK_FEATURES
    const importId = randomUUID();
    const a = points(3000, 'short_first');
    const plan = { layers: [layerPlan(a)] };
    const source = memorySource([a], { ends: true });
    const run = (budgetMs: number) =>
      loadImport({ db, importId, plan, discovery: discoveryOf([a]), source, budgetMs, chunkFeatures: 2000 });

    // Act: a run out of time at once writes its first chunk only; the next one has all the time
    const first = await run(0);
    const second = await run(60_000);

    // Assess
    expect(FIRST_CHUNK_FEATURES).toBeLessThan(2000);
    expect(first).toMatchObject({ done: false, processed_features: FIRST_CHUNK_FEATURES });
    expect(second).toMatchObject({ done: true, processed_features: 3000 });
    expect(source.yielded).toEqual([FIRST_CHUNK_FEATURES, 3000 - FIRST_CHUNK_FEATURES]);
    const { staging } = db.schemas(importId);
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(DISTINCT fid)::int AS fids FROM ${staging}.short_first`,
    );
    expect(rows[0]).toEqual({ n: 3000, fids: 3000 });
  });

  it('keeps the last committed chunk when the reader fails mid-chunk, and the rerun completes exactly', async () => {
    // Prepare
    const importId = randomUUID();
    const a = points(1000, 'crashy');
    const plan = { layers: [layerPlan(a)] };
    const args = { db, importId, plan, discovery: discoveryOf([a]), budgetMs: 60_000, chunkFeatures: 100 };

    // Act
    const crash = loadImport({ ...args, source: memorySource([a], { failAt: 250 }) });

    // Assess
    await expect(crash).rejects.toThrow('the reader failed mid-chunk');
    expect(await db.checkpoint(importId, 'crashy')).toEqual({
      features: 200,
      bytes: 20_000,
      finalized: false,
    });
    const { staging } = db.schemas(importId);
    const staged = await admin().query(`SELECT count(*)::int AS n FROM ${staging}.crashy`);
    expect(staged.rows[0].n).toBe(200);

    const rerun = await loadImport({ ...args, source: memorySource([a]) });
    expect(rerun).toMatchObject({ done: true, processed_features: 1000 });
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(DISTINCT fid)::int AS fids, count(*) FILTER (WHERE rank = fid)::int AS aligned FROM ${staging}.crashy`,
    );
    expect(rows[0]).toEqual({ n: 1000, fids: 1000, aligned: 1000 });
  });

  it('reprojects 3857 → 4326 and promotes singles to Multi*', async () => {
    // Prepare
    const importId = randomUUID();
    const mercator = fixture('mercator', 'MultiPoint', 3857, { label: 'text' }, [
      { properties: { label: 'ten east' }, geometry: point(1113194.9079327357, 0) },
      {
        properties: { label: 'multi' },
        geometry: {
          type: 'MultiPoint',
          coordinates: [
            [0, 0],
            [-1113194.9079327357, 0],
          ],
        },
      },
    ]);

    // Act
    const result = await load(importId, [mercator], { layers: [layerPlan(mercator, { target_srid: 4326 })] });

    // Assess
    expect(result.done).toBe(true);
    const { staging } = db.schemas(importId);
    const { rows } = await admin().query(
      `SELECT fid::int, GeometryType(geom) AS type, ST_SRID(geom) AS srid, round(ST_X(ST_GeometryN(geom, 1))::numeric, 6)::float AS x
       FROM ${staging}.mercator ORDER BY fid`,
    );
    expect(rows).toEqual([
      { fid: 1, type: 'MULTIPOINT', srid: 4326, x: 10 },
      { fid: 2, type: 'MULTIPOINT', srid: 4326, x: 0 },
    ]);
    const finalized = await db.finalizeLayer(
      importId,
      layerPlan(mercator, { target_srid: 4326 }),
      mercator.layer,
    );
    expect(finalized).toMatchObject({ rows: 2, srid: 4326, geometry_type: 'MultiPoint' });
    expect(finalized.extent?.map((v) => Math.round(v * 1e6) / 1e6)).toEqual([-10, 0, 10, 0]);
  });

  it('reports a bow-tie polygon as invalid, and repairs it with make_valid', async () => {
    // Prepare
    const bowtie = { type: 'Polygon', coordinates: [BOWTIE_RING] };
    const square = {
      type: 'Polygon',
      coordinates: [
        [
          [5, 5],
          [6, 5],
          [6, 6],
          [5, 6],
          [5, 5],
        ],
      ],
    };
    const parcels = fixture('parcels', 'Polygon', 4326, {}, [
      { properties: {}, geometry: square },
      { properties: {}, geometry: bowtie },
    ]);
    const reported = randomUUID();
    const repaired = randomUUID();

    // Act
    const asIs = await load(reported, [parcels], { layers: [layerPlan(parcels)] });
    const fixed = await load(repaired, [parcels], { layers: [layerPlan(parcels, { make_valid: true })] });

    // Assess
    expect(asIs.warnings).toEqual([
      'layer parcels: 1 invalid geometry (e.g. fid 2: Self-intersection); set make_valid in the plan to repair them',
    ]);
    expect(fixed.warnings).toEqual(['layer parcels: 1 invalid geometry was repaired (make_valid)']);
    const again = await db.finalizeLayer(repaired, layerPlan(parcels, { make_valid: true }), parcels.layer);
    expect(again).toMatchObject({ rows: 2, invalid: 0, repaired: 1, geometry_type: 'MultiPolygon' });
    const { rows } = await admin().query(
      `SELECT fid::int, ST_IsValid(geom) AS valid, ST_NumGeometries(geom) AS parts, ST_Area(geom) AS area
       FROM ${db.schemas(repaired).staging}.parcels ORDER BY fid`,
    );
    expect(rows).toEqual([
      { fid: 1, valid: true, parts: 1, area: 1 },
      { fid: 2, valid: true, parts: 2, area: 2 },
    ]);
  });

  it('asks PostGIS about validity only when discovery could not tell every geometry certainly valid', async () => {
    // Prepare: a square and a bow-tie, once as discovery leaves an unknown layer, once marked
    // certainly valid (which discovery never does with a bow-tie: the next test holds it to that).
    const geometries = [
      polygonOf([
        [5, 5],
        [6, 5],
        [6, 6],
        [5, 6],
        [5, 5],
      ]),
      polygonOf(BOWTIE_RING),
    ];
    const asked = fixture(
      'asked',
      'Polygon',
      4326,
      {},
      geometries.map((geometry) => ({ properties: {}, geometry })),
    );
    const trusted = { ...asked, layer: { ...asked.layer, name: 'trusted', geometry_valid: true as const } };

    // Act
    const askedLoad = await load(randomUUID(), [asked], { layers: [layerPlan(asked)] });
    const trustedLoad = await load(randomUUID(), [trusted], { layers: [layerPlan(trusted)] });

    // Assess: the scan found the bow-tie; the marked layer was not scanned
    expect(askedLoad.warnings).toEqual([
      'layer asked: 1 invalid geometry (e.g. fid 2: Self-intersection); set make_valid in the plan to repair them',
    ]);
    expect(trustedLoad.warnings).toEqual([]);
  });

  it('never calls a geometry certainly valid that PostGIS finds invalid (formats/validity.ts)', async () => {
    // Prepare: seeded rings on a 5 × 5 grid (touching, collinear and crossing segments galore),
    // multi-polygons of two of them, lines, and star-shaped rings of random floats.
    let seed = 20261130;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const grid = () => Math.floor(random() * 5);
    const gridRing = (): number[][] => {
      const ring = Array.from({ length: 3 + Math.floor(random() * 6) }, () => [grid(), grid()]);
      return [...ring, ring[0] as number[]];
    };
    const star = (): number[][] => {
      const n = 3 + Math.floor(random() * 10);
      const angles = Array.from({ length: n }, () => random() * 2 * Math.PI).sort((a, b) => a - b);
      const ring = angles.map((a) => {
        const r = 0.0001 + random() * 0.01;
        return [Number((10 + r * Math.cos(a)).toFixed(6)), Number((45 + r * Math.sin(a)).toFixed(6))];
      });
      return [...ring, ring[0] as number[]];
    };
    const geometries: { type: GeometryType; coordinates: unknown }[] = [];
    for (let i = 0; i < 1500; i++) geometries.push({ type: 'Polygon', coordinates: [gridRing()] });
    for (let i = 0; i < 500; i++) geometries.push({ type: 'Polygon', coordinates: [star()] });
    for (let i = 0; i < 500; i++)
      geometries.push({
        type: 'MultiPolygon',
        coordinates: [[gridRing()], [gridRing().map(([x, y]) => [(x as number) + 3, y])]],
      });
    for (let i = 0; i < 300; i++)
      geometries.push({
        type: 'LineString',
        coordinates: Array.from({ length: 2 + Math.floor(random() * 2) }, () => [grid() % 2, 0]),
      });
    const wkt = ({ type, coordinates }: { type: GeometryType; coordinates: unknown }) => {
      const ring = (positions: number[][]) => `(${positions.map(([x, y]) => `${x} ${y}`).join(', ')})`;
      if (type === 'LineString') return `LINESTRING${ring(coordinates as number[][])}`;
      if (type === 'Polygon') return `POLYGON(${(coordinates as number[][][]).map(ring).join(', ')})`;
      return `MULTIPOLYGON(${(coordinates as number[][][][]).map((p) => `(${p.map(ring).join(', ')})`).join(', ')})`;
    };

    // Act
    const told = geometries.map((g) => certainlyValidParsed(g.type, g.coordinates));
    const { rows } = await admin().query<{ valid: boolean }>(
      'SELECT ST_IsValid(ST_GeomFromText(w)) AS valid FROM unnest($1::text[]) WITH ORDINALITY AS u(w, i) ORDER BY i',
      [geometries.map(wkt)],
    );

    // Assess: no false "certainly valid"; and it tells most valid ones, invalid ones being there to catch
    expect(rows).toHaveLength(geometries.length);
    const wrong = geometries.filter((_, i) => told[i] && rows[i]?.valid !== true).map(wkt);
    expect(wrong).toEqual([]);
    const valid = rows.filter((r) => r.valid).length;
    expect(rows.length - valid).toBeGreaterThan(300);
    expect(told.filter(Boolean).length).toBeGreaterThan(valid / 2);
  });

  it('stages the geometry column with its final typmod when discovery knew it: the finalize rewrites no table (ADR 0143)', async () => {
    // Prepare: 2D and 3D points whose discovery knew their dimension, and points whose didn't.
    const flat = { ...points(300, 'flat') };
    flat.layer = { ...flat.layer, geometry_dims: 2 };
    const raised = fixture(
      'raised',
      'Point',
      4326,
      { name: 'text' },
      Array.from({ length: 300 }, (_, i) => ({
        properties: { name: `z${i + 1}` },
        geometry: { type: 'Point', coordinates: [i / 100, 45, i] },
      })),
    );
    raised.layer = { ...raised.layer, geometry_dims: 3 };
    const unknown = points(300, 'unknown');
    /** The geometry column's type and the table's file (a rewrite gives the table a new one). */
    const column = async (importId: string, table: string) => {
      const { rows } = await admin().query(
        `SELECT format_type(a.atttypid, a.atttypmod) AS type, c.relfilenode::text AS file
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
         WHERE a.attrelid = $1::regclass AND a.attname = 'geom'`,
        [`${db.schemas(importId).staging}.${table}`],
      );
      return rows[0] as { type: string; file: string };
    };
    /** A first run that stages a chunk and stops, the column then, the rest of the load, the column after. */
    const stagedThenFinalized = async (f: Fixture) => {
      const importId = randomUUID();
      const plan = { layers: [layerPlan(f)] };
      const run = () =>
        loadImport({
          db,
          importId,
          plan,
          discovery: discoveryOf([f]),
          source: memorySource([f]),
          budgetMs: 0,
          chunkFeatures: 100,
        });
      const runs = [await run()];
      const staged = await column(importId, f.layer.name);
      for (let i = 0; i < 10 && !runs.at(-1)?.done; i++) runs.push(await run());
      return {
        importId,
        first: runs[0],
        last: runs.at(-1),
        staged,
        finalized: await column(importId, f.layer.name),
      };
    };

    // Act
    const [a, b, c] = [
      await stagedThenFinalized(flat),
      await stagedThenFinalized(raised),
      await stagedThenFinalized(unknown),
    ];

    // Assess
    for (const r of [a, b, c]) {
      expect(r.first).toMatchObject({ done: false, processed_features: 100 });
      expect(r.last).toMatchObject({ done: true, processed_features: 300 });
    }
    expect(a.staged.type).toBe('geometry(Point,4326)');
    expect(a.finalized).toEqual(a.staged);
    expect(b.staged.type).toBe('geometry(PointZ,4326)');
    expect(b.finalized).toEqual(b.staged);
    // Without the dimension known, the finalize sets the typmod by rewriting the table.
    expect(c.staged.type).toBe('geometry');
    expect(c.finalized.type).toBe('geometry(Point,4326)');
    expect(c.finalized.file).not.toBe(c.staged.file);
    const { rows } = await admin().query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE ST_SRID(geom) = 4326 AND ST_Z(geom) = fid - 1 AND name = 'z' || fid)::int AS exact
       FROM ${db.schemas(b.importId).staging}.raised`,
    );
    expect(rows[0]).toEqual({ n: 300, exact: 300 });
    expect(await db.finalizeLayer(a.importId, layerPlan(flat), flat.layer)).toMatchObject({
      rows: 300,
      srid: 4326,
      geometry_type: 'Point',
    });
  });

  it("takes the count, extent and Z of points the loader wrote itself from discovery, without a scan; PostGIS's when the plan reads other CSV columns (ADR 0143)", async () => {
    // Prepare: points with many decimals as GeoJSON and as CSV (the same values), discovered as
    // the engine discovers them; a layer whose discovery box is not its points' (nothing scans
    // it, so its box stays); and the CSV read through other columns than discovery found.
    const dir = mkdtempSync(join(tmpdir(), 'geoplane-finalize-points-'));
    const n = 500;
    const xy = (i: number) => [((i * 7.123456789) % 360) - 180, ((i * 3.987654321) % 180) - 90];
    const geojson = join(dir, 'found.geojson');
    const csv = join(dir, 'found.csv');
    writeFileSync(
      geojson,
      JSON.stringify({
        type: 'FeatureCollection',
        features: Array.from({ length: n }, (_, i) => ({
          type: 'Feature',
          properties: { rank: i },
          geometry: { type: 'Point', coordinates: xy(i) },
        })),
      }),
    );
    writeFileSync(
      csv,
      `rank,lon,lat,x2,y2\n${Array.from({ length: n }, (_, i) => `${i},${xy(i).join(',')},${i / 10},${-i / 20}`).join('\n')}\n`,
    );
    const loadFile = async (path: string, name: string, csvColumns?: LayerPlan['csv']) => {
      const importId = randomUUID();
      const discovery = await discover(path, name);
      const plan = defaultPlan(discovery);
      const layer = { ...(plan.layers[0] as LayerPlan), ...(csvColumns ? { csv: csvColumns } : {}) };
      await loadImport({
        db,
        importId,
        plan: { layers: [layer] },
        discovery,
        source: { rows: (l, { shape, ...options }) => readRows(path, name, l, shape, options) },
        budgetMs: 120_000,
      });
      const source = discovery.layers[0] as SourceLayer;
      const result = await db.finalizeLayer(importId, layer, source);
      const { rows } = await admin().query(
        `SELECT n, ST_XMin(e) AS min_x, ST_YMin(e) AS min_y, ST_XMax(e) AS max_x, ST_YMax(e) AS max_y
         FROM (SELECT count(*)::int AS n, ST_Extent(geom) AS e FROM ${db.schemas(importId).staging}.${layer.public_id}) s`,
      );
      const found = rows[0] as { n: number; min_x: number; min_y: number; max_x: number; max_y: number };
      return {
        source,
        result,
        postgis: { rows: found.n, extent: [found.min_x, found.min_y, found.max_x, found.max_y] },
      };
    };
    const boxed = { ...points(300, 'boxed') };
    boxed.layer = { ...boxed.layer, geometry_dims: 2, bbox: [0, 0, 1, 1] };
    const scanned = { ...points(300, 'scanned') };
    scanned.layer = { ...scanned.layer, bbox: [0, 0, 1, 1] };

    // Act
    let fromGeojson: Awaited<ReturnType<typeof loadFile>>;
    let fromCsv: Awaited<ReturnType<typeof loadFile>>;
    let otherColumns: Awaited<ReturnType<typeof loadFile>>;
    try {
      fromGeojson = await loadFile(geojson, 'found.geojson');
      fromCsv = await loadFile(csv, 'found.csv');
      otherColumns = await loadFile(csv, 'found.csv', { lon: 'x2', lat: 'y2' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const boxedId = randomUUID();
    const scannedId = randomUUID();
    await load(boxedId, [boxed], { layers: [layerPlan(boxed)] });
    await load(scannedId, [scanned], { layers: [layerPlan(scanned)] });

    // Assess: discovery's count and extent are PostGIS's own, to the last bit
    for (const { source, result, postgis } of [fromGeojson, fromCsv]) {
      expect(source.geometry_dims).toBe(2);
      expect(result).toMatchObject({ ...postgis, geometry_type: 'Point', srid: 4326 });
    }
    // Other CSV columns: the extent of the points loaded, not of the ones discovery read
    expect(otherColumns.result).toMatchObject({ rows: n, extent: [0, -(n - 1) / 20, (n - 1) / 10, 0] });
    expect(otherColumns.result).toMatchObject(otherColumns.postgis);
    // Not scanned: the box discovery gave stays; scanned (dimension unknown): the points' box
    expect(await db.finalizeLayer(boxedId, layerPlan(boxed), boxed.layer)).toMatchObject({
      rows: 300,
      extent: [0, 0, 1, 1],
    });
    expect(await db.finalizeLayer(scannedId, layerPlan(scanned), scanned.layer)).toMatchObject({
      rows: 300,
      extent: [-10, 40, -10 + 199 / 10, 40 + 1 / 10],
    });
  });

  it('loads the WKT column a CSV plan names instead of the points discovery found, typed by its geometries', async () => {
    // Prepare: lon/lat columns (what discovery finds) beside WKT columns of polygons, of polygons
    // and multi-polygons, of points and polygons, and of curves
    const dir = mkdtempSync(join(tmpdir(), 'geoplane-csv-wkt-'));
    const path = join(dir, 'shapes.csv');
    const square = (i: number) => `${i} 0, ${i + 1} 0, ${i + 1} 1, ${i} 1, ${i} 0`;
    const rows = Array.from({ length: 40 }, (_, i) =>
      [
        i,
        i / 10,
        i / 20,
        `"POLYGON((${square(i)}))"`,
        i % 2 ? `"POLYGON((${square(i)}))"` : `"MULTIPOLYGON(((${square(i)})))"`,
        i % 2 ? `"POINT(${i} ${i})"` : `"POLYGON((${square(i)}))"`,
        `"CIRCULARSTRING(0 0, ${i + 1} ${i + 1}, ${2 * i + 2} 0)"`,
      ].join(','),
    );
    writeFileSync(path, `rank,lon,lat,shape,parts,anything,curve\n${rows.join('\n')}\n`);
    const discovery = await discover(path, 'shapes.csv');
    const loadColumn = async (wkt: string) => {
      const importId = randomUUID();
      const layer = { ...(defaultPlan(discovery).layers[0] as LayerPlan), csv: { wkt } };
      const source = discovery.layers[0] as SourceLayer;
      await loadImport({
        db,
        importId,
        plan: { layers: [layer] },
        discovery,
        source: { rows: (l, { shape, ...options }) => readRows(path, 'shapes.csv', l, shape, options) },
        budgetMs: 120_000,
      });
      return db.finalizeLayer(importId, layer, source);
    };

    // Act
    let loaded: Awaited<ReturnType<typeof loadColumn>>[];
    let curves: unknown;
    try {
      loaded = [await loadColumn('shape'), await loadColumn('parts'), await loadColumn('anything')];
      curves = await loadColumn('curve').catch((error: unknown) => error);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Assess
    expect(discovery.layers[0]).toMatchObject({ geometry_type: 'Point', csv: { lon: 'lon', lat: 'lat' } });
    expect(loaded.map((r) => [r.rows, r.geometry_type, r.extent])).toEqual([
      [40, 'Polygon', [0, 0, 40, 1]],
      [40, 'MultiPolygon', [0, 0, 40, 1]],
      [40, 'GeometryCollection', [0, 0, 39, 39]],
    ]);
    expect(curves).toMatchObject({
      name: 'ImportInputError',
      code: 'invalid_geometry',
      message: expect.stringMatching(/CircularString geometries can't be imported/),
    });
  });

  it('repairs geometries staged with their final typmod when the next run’s plan asks for make_valid', async () => {
    // Prepare: a square and a bow-tie; the first run stages the square under geometry(Polygon, 4326).
    const ring = (xy: [number, number][]) => ({ type: 'Polygon', coordinates: [xy] });
    const parcels = fixture('parcels', 'Polygon', 4326, {}, [
      {
        properties: {},
        geometry: ring([
          [5, 5],
          [6, 5],
          [6, 6],
          [5, 6],
          [5, 5],
        ]),
      },
      {
        properties: {},
        geometry: ring([
          [0, 0],
          [2, 2],
          [2, 0],
          [0, 2],
          [0, 0],
        ]),
      },
    ]);
    parcels.layer = { ...parcels.layer, geometry_dims: 2 };
    const importId = randomUUID();
    const source = memorySource([parcels]);
    const run = (make_valid: boolean) =>
      loadImport({
        db,
        importId,
        plan: { layers: [layerPlan(parcels, { make_valid })] },
        discovery: discoveryOf([parcels]),
        source,
        budgetMs: 0,
        chunkFeatures: 1,
      });

    // Act
    const first = await run(false);
    const runs = [await run(true)];
    for (let i = 0; i < 5 && !runs.at(-1)?.done; i++) runs.push(await run(true));

    // Assess
    expect(first).toMatchObject({ done: false, processed_features: 1 });
    expect(runs.at(-1)).toMatchObject({ done: true, processed_features: 2 });
    expect(runs.at(-1)?.warnings).toEqual(['layer parcels: 1 invalid geometry was repaired (make_valid)']);
    const { rows } = await admin().query(
      `SELECT fid::int, ST_IsValid(geom) AS valid, ST_NumGeometries(geom) AS parts, GeometryType(geom) AS type
       FROM ${db.schemas(importId).staging}.parcels ORDER BY fid`,
    );
    expect(rows).toEqual([
      { fid: 1, valid: true, parts: 1, type: 'MULTIPOLYGON' },
      { fid: 2, valid: true, parts: 2, type: 'MULTIPOLYGON' },
    ]);
  });

  it('names the feature whose geometry PostGIS (or the reader shape check) cannot read', async () => {
    // Prepare
    const features = (bad: number, geometry: SourceFeature['geometry']) =>
      Array.from({ length: 20 }, (_, i) => ({
        properties: {},
        geometry: i + 1 === bad ? geometry : point(i, i),
      }));
    const wkt = fixture('broken', 'Point', 4326, {}, features(7, { wkt: 'POINT(1 2' }));
    const shape = fixture(
      'shapeless',
      'Point',
      4326,
      {},
      features(3, { type: 'Point', coordinates: ['a', 1] }),
    );
    const importId = randomUUID();

    // Act
    const parse = await load(importId, [wkt], { layers: [layerPlan(wkt)] }).catch((error: unknown) => error);
    const shaped = await load(randomUUID(), [shape], { layers: [layerPlan(shape)] }).catch(
      (error: unknown) => error,
    );

    // Assess
    expect(parse).toBeInstanceOf(ImportInputError);
    expect(parse).toMatchObject({
      code: 'invalid_geometry',
      message: expect.stringMatching(/^layer broken: feature 7 has a geometry PostGIS can't read/),
    });
    expect(shaped).toMatchObject({
      code: 'invalid_geometry',
      message: expect.stringMatching(/^layer shapeless: feature 3 has a geometry that can't be read/),
    });
    expect(await db.checkpoint(importId, 'broken')).toEqual({ features: 0, bytes: 0, finalized: false });
  });

  it('stages the extremes of every value type exactly, nulls among them (binary COPY, or binary arrays on the embedded PostGIS)', async () => {
    // Prepare
    const values = fixture(
      'extremes',
      'Point',
      4326,
      { t: 'text', i: 'integer', b: 'bigint', d: 'double precision', ok: 'boolean', j: 'jsonb' },
      [
        {
          t: 'é ß ✓ 😀 \t "q" \\ , {x}',
          i: 2147483647,
          b: '9223372036854775807',
          d: 1.7976931348623157e308,
          ok: true,
          j: { k: 'ü😀', n: [1, null] },
        },
        { t: '', i: -2147483648, b: '-9223372036854775808', d: 5e-324, ok: false, j: [] },
        { t: null, i: null, b: null, d: -0, ok: null, j: null },
        { t: 'NULL', i: 0, b: 0, d: -1.5e-300, ok: false, j: 'text' },
      ].map((properties, k) => ({ properties, geometry: k === 2 ? null : point(k, -k) })),
    );
    const importId = randomUUID();

    // Act
    const result = await load(importId, [values], { layers: [layerPlan(values)] });

    // Assess
    expect(result).toMatchObject({ done: true, processed_features: 4, warnings: [] });
    const { rows } = await admin().query(
      `SELECT fid::int, t, i, b::text, d::text, ok, j, ST_AsText(geom) AS g
       FROM ${db.schemas(importId).staging}.extremes ORDER BY fid`,
    );
    expect(rows).toEqual([
      {
        fid: 1,
        t: 'é ß ✓ 😀 \t "q" \\ , {x}',
        i: 2147483647,
        b: '9223372036854775807',
        d: '1.7976931348623157e+308',
        ok: true,
        j: { k: 'ü😀', n: [1, null] },
        g: 'POINT(0 0)',
      },
      {
        fid: 2,
        t: '',
        i: -2147483648,
        b: '-9223372036854775808',
        d: '5e-324',
        ok: false,
        j: [],
        g: 'POINT(1 -1)',
      },
      { fid: 3, t: null, i: null, b: null, d: '-0', ok: null, j: null, g: null },
      { fid: 4, t: 'NULL', i: 0, b: '0', d: '-1.5e-300', ok: false, j: 'text', g: 'POINT(3 -3)' },
    ]);
  });

  it('casts values per column type, leaves misfits empty and warns about them', async () => {
    // Prepare
    const roads = fixture(
      'roads',
      null,
      null,
      {
        lanes: 'integer',
        name: 'text',
        opened: 'date',
        lit: 'boolean',
        tags: 'jsonb',
        big: 'bigint',
        at: 'timestamptz',
      },
      [
        {
          lanes: 1,
          name: 'a\u0000b',
          opened: '2020-02-29',
          lit: 'yes',
          tags: { k: 'v\u0000' },
          big: '9007199254740993',
          at: '2024-05-01T10:00:00Z',
        },
        { lanes: '2', name: 7, opened: '2021-02-30', lit: 0, tags: [1, 2], big: 12, at: '2024-05-01 12:30' },
        { lanes: 'x', name: null, opened: 'yesterday', lit: 'maybe', tags: 'text', big: 'lots', at: 'noon' },
        { lanes: 3.5, name: true, opened: null, lit: true, tags: null, big: 1.5, at: null },
        { lanes: 99_999_999_999, name: 'z' },
      ].map((properties) => ({ properties, geometry: null })),
    );
    const importId = randomUUID();

    // Act
    const result = await load(importId, [roads], { layers: [layerPlan(roads)] });

    // Assess
    expect(result.warnings).toEqual([
      "layer roads: 3 values of field 'lanes' didn't fit integer and were left empty",
      "layer roads: 2 values of field 'opened' didn't fit date and were left empty",
      "layer roads: 1 value of field 'lit' didn't fit boolean and was left empty",
      "layer roads: 2 values of field 'big' didn't fit bigint and were left empty",
      "layer roads: 1 value of field 'at' didn't fit timestamptz and was left empty",
    ]);
    const { rows } = await admin().query(
      `SELECT fid::int, lanes, name, opened::text, lit, tags, big::text, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS at
       FROM ${db.schemas(importId).staging}.roads ORDER BY fid`,
    );
    expect(rows).toEqual([
      {
        fid: 1,
        lanes: 1,
        name: 'ab',
        opened: '2020-02-29',
        lit: true,
        tags: { k: 'v' },
        big: '9007199254740993',
        at: '2024-05-01 10:00',
      },
      {
        fid: 2,
        lanes: 2,
        name: '7',
        opened: null,
        lit: false,
        tags: [1, 2],
        big: '12',
        at: '2024-05-01 12:30',
      },
      { fid: 3, lanes: null, name: null, opened: null, lit: null, tags: 'text', big: null, at: null },
      { fid: 4, lanes: null, name: 'true', opened: null, lit: true, tags: null, big: null, at: null },
      { fid: 5, lanes: null, name: 'z', opened: null, lit: null, tags: null, big: null, at: null },
    ]);
  });

  it('previews staged and published tables as GeoJSON in EPSG:4326', async () => {
    // Prepare
    const importId = randomUUID();
    const mercator = fixture(
      'sites',
      'Point',
      3857,
      { label: 'text', since: 'date' },
      Array.from({ length: 5 }, (_, i) => ({
        properties: { label: `s${i + 1}`, since: '2001-01-01' },
        geometry: point(1113194.9079327357 * i, 0),
      })),
    );
    await load(importId, [mercator], { layers: [layerPlan(mercator)] });

    // Act
    const staged = await db.preview(importId, 'sites', 2);
    await db.publish(importId, ['sites']);
    const published = await db.preview(importId, 'sites', 100);

    // Assess
    expect(staged?.features).toHaveLength(2);
    const second = staged?.features[1] as {
      id: number;
      geometry: { coordinates: number[] };
      properties: unknown;
    };
    expect(second.id).toBe(2);
    expect(second.properties).toEqual({ label: 's2', since: '2001-01-01' });
    expect(second.geometry.coordinates.map((c) => Math.round(c * 1e6) / 1e6)).toEqual([10, 0]);
    expect(published?.features).toHaveLength(5);
    expect(await db.preview(importId, 'nothing', 10)).toBeUndefined();
  });

  it('leaves no import relations behind after dropStaging and dropAll (twice each)', async () => {
    // Prepare
    const staged = randomUUID();
    const done = randomUUID();
    const a = points(50, 'kept');
    await load(staged, [a], { layers: [layerPlan(a)] }, { chunkFeatures: 10, budgetMs: 0 });
    await load(done, [a], { layers: [layerPlan(a)] });
    await db.publish(done, ['kept']);
    expect(await relationsOf(staged)).toHaveLength(2);
    expect(await relationsOf(done)).toHaveLength(1);

    // Act
    await db.dropStaging(staged);
    await db.dropStaging(staged);
    await db.dropAll(done);
    await db.dropAll(done);

    // Assess
    expect(await relationsOf(staged)).toEqual([]);
    expect(await relationsOf(done)).toEqual([]);
    expect(await db.checkpoint(staged, 'kept')).toEqual({ features: 0, bytes: 0, finalized: false });
  });

  it('fences off a superseded run: after a drop at run 2 a loader of run 1 creates nothing, run 2 loads', async () => {
    // Prepare
    const importId = randomUUID();
    const a = points(30, 'fenced');
    await db.dropStaging(importId, 2);

    // Act + Assess: the stale run stops before re-creating the staging schema
    await expect(load(importId, [a], { layers: [layerPlan(a)] }, { run: 1 })).rejects.toMatchObject({
      reason: 'import_superseded',
    });
    expect(await relationsOf(importId)).toEqual([]);
    const fresh = await load(importId, [a], { layers: [layerPlan(a)] }, { run: 2 });
    expect(fresh).toMatchObject({ done: true, processed_features: 30 });
    await db.dropAll(importId, 3);
    await expect(load(importId, [a], { layers: [layerPlan(a)] }, { run: 2 })).rejects.toMatchObject({
      reason: 'import_superseded',
    });
    expect(await relationsOf(importId)).toEqual([]);
  });

  it('answers UnavailableError when the database cannot be reached', async () => {
    const closed = new ImportDatabase({ ...target().importer, host: '127.0.0.1', port: 1 });
    await expect(closed.importRelations()).rejects.toMatchObject({
      name: 'UnavailableError',
      reason: 'import_database_unavailable',
    });
  });

  it('measures the throughput of 50,000 points (reported, not asserted; npm run bench measures 1,000,000)', async () => {
    const importId = randomUUID();
    const many = points(50_000, 'many');
    const started = performance.now();
    const result = await load(importId, [many], { layers: [layerPlan(many)] });
    const ms = performance.now() - started;
    expect(result).toMatchObject({ done: true, processed_features: 50_000 });
    console.log(
      `import throughput (${target().kind}): 50,000 points loaded + finalized in ${Math.round(ms)} ms = ${Math.round(50_000 / (ms / 1000))} features/s`,
    );
    await db.dropAll(importId);
  }, 240_000);
}

describe('import database on the embedded PostGIS', () => {
  let dataDir: string;
  let pgis: EmbeddedPostgis;
  let target: ImportTarget;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'geoplane-imports-'));
    pgis = await startEmbeddedPostgis({ dataDir, port: 0, onProgress: () => {} });
    const base = { host: pgis.host, port: pgis.port, database: pgis.database };
    target = {
      kind: 'embedded',
      importer: { ...base, ...pgis.importer, sslmode: 'disable' },
      roles: IMPORT_ROLE_NAMES,
      admin: new pg.Pool({ ...base, user: pgis.admin.user, password: pgis.admin.password, max: 1 }),
    };
  }, 180_000);

  afterAll(async () => {
    await target?.admin.end();
    await pgis?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  importSuite(() => target);
});

const url = REAL_POSTGRES_URL;
if (!url) console.warn(`import database: ${REAL_POSTGRES_SKIP_REASON}`);

describe.skipIf(!url)('import database on a real PostgreSQL + PostGIS (GEOPLANE_TEST_POSTGRES_URL)', () => {
  let real: RealPostgis | undefined;
  let target: ImportTarget;
  const suffix = randomBytes(4).toString('hex');
  const importer = { user: `geoplane_importer_${suffix}`, password: randomBytes(18).toString('base64url') };
  const roles: ImportRoleNames = {
    readers: `geoplane_import_readers_${suffix}`,
    roleAdmin: `geoplane_import_role_admin_${suffix}`,
  };

  beforeAll(async () => {
    real = await startRealPostgis(url as string);
    // Twice: the roles' SQL is idempotent.
    await real.admin.query(importRolesSql(importer, roles));
    await real.admin.query(importRolesSql(importer, roles));
    const base = { host: real.superuser.host, port: real.superuser.port, database: real.superuser.database };
    target = {
      kind: 'postgresql',
      importer: { ...base, ...importer, sslmode: 'prefer' },
      roles,
      admin: real.admin,
    };
  }, 60_000);

  afterAll(async () => {
    await real?.stop();
    await dropImportRoles(url as string, roles, importer.user);
  });

  importSuite(() => target);
});
