/**
 * Section 8 of `npm run bench`: the data plane (issue #24, ADR 0123), the workspace's OGC API at
 * `/workspaces/{workspace}/ogc` on the local host, against what its answers cost without it:
 *   1. an items page (limit 100) through the host (HTTPS, a viewer's API key) vs the very same
 *      statement (`itemsStatement` of the described source and the parsed query) run alone over
 *      `pg` on the same PostGIS; target ≤ 1.2×;
 *   2. a z14 tile through the host vs `renderTile` called in-process on the same PostGIS (the
 *      closest to "the tile SQL alone" the product has: its read-only unit of work, the statement
 *      and the encoding; the statement alone is measured beside it); target ≤ 1.2×;
 *   3. a cached public tile: an anonymous request with `If-None-Match` of its ETag (304) vs the
 *      floor server's request (HTTPS + one GetItem); target ≤ 1.1×;
 *   4. tiles/s with 10 requests in flight over the z13 tiles of the data (no target).
 * Beside them, a ladder of cheaper requests through the same host (the landing page: the
 * authorizer and the settings reads; a collection's tilesets document: every catalog read of an
 * items page or a tile, no PostGIS) and the product's PostGIS steps called in-process
 * (describeFeatureSource, readFeatureItems, the tile statement alone), so a miss says where the
 * time goes.
 *
 * The data: `public.bench_points` (30,000 points over ~0.3° × 0.2° around Paris, ~170 per z14
 * tile), created in the embedded PostGIS as its superuser and granted to the demo login; a
 * workspace with a PostGIS service on it, one public layer, OGC API Tiles enabled, a viewer key.
 * In the full run it uses the main stack (section 1's host and floor);
 * `npm run bench -- data-plane` (or `BENCH_ONLY=data-plane`) starts that stack alone and writes
 * `.bench/results-data-plane.md`.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import pg from 'pg';
import { builtInPolicies } from '#auth/permissions.ts';
import { config } from '#config/env.ts';
import {
  describeFeatureSource,
  type FeatureLayer,
  type FeatureSource,
  featureQueryContext,
  itemsStatement,
  readFeatureItems,
} from '#datasources/feature-items.ts';
import { postgisLayerData } from '#datasources/layer-data.ts';
import type { PostgisConnection } from '#datasources/postgis.ts';
import { type RenderedTile, renderTile, type TileLayerSource } from '#datasources/vector-tiles.ts';
import type { DataCaller } from '#domain/data-access.ts';
import { collectionTile, type DataPlanePorts, dataItems } from '#domain/data-plane.ts';
import { parseFeatureQuery } from '#domain/feature-query.ts';
import type { Layer } from '#domain/layers.ts';
import { dataLinks } from '#domain/ogc-documents.ts';
import type { Service } from '#domain/services.ts';
import type { OGCAPISettings, OGCTilesSettings } from '#domain/settings.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { DEMO_USER } from '#infra/local/postgis.ts';
import { documentClient } from '#store/client.ts';
import { dataCatalog } from '#wiring/repositories.ts';
import { onCleanup } from './cleanup.ts';
import { call, type Reply, send } from './latency.ts';
import { fixed, mean, percentile, ratio, table, thousands, verdict } from './stats.ts';

// ---- plan ---------------------------------------------------------------------------------------
const TABLE = 'bench_points';
const POINTS = 30_000;
/** Where the points lie (degrees): ~0.3° × 0.2°, about 13 × 14 tiles of z14. */
const EXTENT = { west: 2.2, south: 48.8, east: 2.5, north: 49.0 };
/** The measured tile: the z14 tile of this point (the middle of the data). */
const TILE_POINT = { lon: 2.35, lat: 48.9 };
const TILE_ZOOM = 14;
/** The zoom of the throughput run: every tile of the data at it. */
const THROUGHPUT_ZOOM = 13;
const IN_FLIGHT = 10;
const ITEMS_LIMIT = 100;
/**
 * Sequential rounds, the case order rotating per round as in section 1; many short rounds, so a
 * change of the machine's load falls on every case alike and the time budget cuts finely.
 */
const ROUNDS = 20;
/** Requests per round of the cases with a target (20 × 10 = 200) and of the breakdown (20 × 3 = 60). */
const PER_ROUND = 10;
const PER_ROUND_BREAKDOWN = 3;
const WARMUP = 10;
const WARMUP_BREAKDOWN = 5;
/**
 * In-process cases warm up longer: the host's code has answered many requests by then, and this
 * process's copy of the same functions would otherwise be measured less optimised.
 */
const WARMUP_IN_PROCESS = 30;
/**
 * No new round starts after this much measuring, warm-up included: the counts above are an upper
 * bound, the budget keeps the section near a minute (setup ~5 s, throughput ~10 s) on a busy machine.
 */
const ROUNDS_BUDGET_MS = 33_000;
/** The throughput run's length per level (after a warm-up of its own). */
const THROUGHPUT_MS: Record<number, number> = { 1: 2_500, [IN_FLIGHT]: 5_000 };
const THROUGHPUT_WARMUP_MS = 1_000;

// ---- targets ------------------------------------------------------------------------------------
const ITEMS_OVER_SQL_MAX = 1.2;
const TILE_OVER_RENDER_MAX = 1.2;
const NOT_MODIFIED_OVER_FLOOR_MAX = 1.1;

/** What the section runs against: the main stack of the run (or the one `data-plane` alone starts). */
export interface DataPlaneTarget {
  /** The management API's base (`https://127.0.0.1:<port>/api/v1`). */
  url: string;
  dataDir: string;
  /** The bootstrap super admin's API key. */
  apiKey: string;
  floorPort: number;
  dynamoEndpoint: string;
  /** The embedded PostGIS as the demo login (bootstrap.json). */
  postgis: { host: string; port: number; database: string; user: string; password?: string };
}

type CaseId =
  | 'floor'
  | 'landingHost'
  | 'tilesetsHost'
  | 'catalog'
  | 'itemsHost'
  | 'describe'
  | 'itemsRead'
  | 'itemsSql'
  | 'tileHost'
  | 'tileRender'
  | 'tileSql'
  | 'tileAnonymous'
  | 'tileNotModified';

interface Case {
  id: CaseId;
  /** One run; its milliseconds. */
  run: () => Promise<number>;
  warmup: number;
  perRound: number;
}

export interface ThroughputRun {
  level: number;
  requests: number;
  wallMs: number;
  samples: number[];
  statuses: Record<string, number>;
  /** Features over the answered tiles (GeoPlane-Tile-Features). */
  features: number;
  bytes: number;
}

/** What one request sends, counted on the use case run in-process. */
export interface RoundTrips {
  /** DynamoDB calls of the handler (the authorizer's read comes on top in the host). */
  dynamo: string[];
  /** PostgreSQL statements, by their first words. */
  postgis: string[];
}

export interface DataPlaneOutcome {
  samples: Partial<Record<CaseId, number[]>>;
  rounds: number;
  truncated: boolean;
  seed: { points: number; ms: number; created: boolean };
  tile: { z: number; x: number; y: number; features: number; bytes: number; encoder: string };
  itemsBytes: number;
  throughput: ThroughputRun[];
  throughputTiles: number;
  roundTrips: { items: RoundTrips; tile: RoundTrips };
  setupMs: number;
  measureMs: number;
  throughputMs: number;
}

// ---- helpers ------------------------------------------------------------------------------------
/** The WebMercatorQuad tile of a point (OGC's tileRow = y, tileCol = x). */
function tileOf(lon: number, lat: number, z: number): { z: number; x: number; y: number } {
  const n = 2 ** z;
  const r = (lat * Math.PI) / 180;
  return {
    z,
    x: Math.floor(((lon + 180) / 360) * n),
    y: Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n),
  };
}

/** One GET that must answer `status` (one retry on a keep-alive socket the server closed). */
async function get(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  status: number,
  retry = true,
): Promise<Reply> {
  let reply: Reply;
  try {
    reply = await send(agent, 'GET', url, headers);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (retry && (code === 'ECONNRESET' || code === 'EPIPE')) return get(agent, url, headers, status, false);
    throw error;
  }
  if (reply.status !== status)
    throw new Error(`GET ${url} answered ${reply.status} (expected ${status}): ${reply.text.slice(0, 400)}`);
  return reply;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

/** The embedded PostGIS as its superuser (the password is in the data dir's postgis.json). */
async function asSuperuser<T>(t: DataPlaneTarget, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const marker = JSON.parse(readFileSync(join(t.dataDir, 'postgis.json'), 'utf8'));
  const client = new pg.Client({
    host: t.postgis.host,
    port: t.postgis.port,
    database: t.postgis.database,
    user: 'postgres',
    password: marker.admin_password,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates `public.bench_points` (unless it is there, full) and grants it to the demo login. */
async function seedPoints(t: DataPlaneTarget): Promise<DataPlaneOutcome['seed']> {
  const started = performance.now();
  return asSuperuser(t, async (db) => {
    const exists = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_catalog.pg_class WHERE oid = to_regclass('public.${TABLE}')`,
    );
    if (exists.rows[0]?.n === '1') {
      const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM public.${TABLE}`);
      if (Number(rows[0]?.n) === POINTS)
        return { points: POINTS, ms: performance.now() - started, created: false };
      await db.query(`DROP TABLE public.${TABLE}`);
    }
    const { west, south, east, north } = EXTENT;
    // A deterministic scatter over the extent (two coprime strides), ~uniform per tile.
    await db.query(`
      CREATE TABLE public.${TABLE} (
        id integer PRIMARY KEY,
        name text NOT NULL,
        kind text NOT NULL,
        population integer,
        geom geometry(Point, 4326) NOT NULL
      );
      INSERT INTO public.${TABLE}
      SELECT i, 'Point ' || i, (ARRAY['shop', 'cafe', 'school', 'stop', 'park'])[1 + i % 5],
             CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 7919) % 100000 END,
             ST_SetSRID(ST_MakePoint(${west} + ((i::bigint * 7919) % 30011) / 30011.0 * ${east - west},
                                     ${south} + ((i::bigint * 104729) % 20011) / 20011.0 * ${north - south}), 4326)
      FROM generate_series(1, ${POINTS}) AS i;
      CREATE INDEX ${TABLE}_geom ON public.${TABLE} USING gist (geom);
      ANALYZE public.${TABLE};
      GRANT SELECT ON public.${TABLE} TO ${DEMO_USER};
    `);
    return { points: POINTS, ms: performance.now() - started, created: true };
  });
}

/** The tile source `layer-data.ts` renders a described table layer with (its `tileSource`). */
function tileSourceOf(layer: Pick<Layer, 'public_id'>, source: FeatureSource): TileLayerSource {
  if (source.kind !== 'table') throw new Error('the bench layer is a table layer');
  return {
    kind: 'table',
    schema: source.schema,
    table: source.table,
    name: layer.public_id,
    geometryColumn: source.geometryColumn,
    srid: source.srid,
    idColumn: source.idColumn,
    properties: source.properties.map((p) => p.name),
  };
}

/**
 * Runs `work` once and returns the tile statement it sent (text and values), caught on pg's
 * Client.prototype.query: the statement `renderTile` builds is private to vector-tiles.ts.
 */
async function captureTileStatement(
  work: () => Promise<unknown>,
): Promise<{ text: string; values: unknown[] }> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let captured: { text: string; values: unknown[] } | undefined;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string; values?: unknown[] };
    const text = typeof first === 'string' ? first : first?.text;
    if (typeof text === 'string' && text.includes('WITH src AS')) {
      const values = typeof first === 'string' ? args[1] : first.values;
      captured = { text, values: (values as unknown[] | undefined) ?? [] };
    }
    return original.apply(this, args);
  };
  try {
    await work();
  } finally {
    proto.query = original;
  }
  if (!captured) throw new Error('renderTile sent no tile statement (WITH src AS …)');
  return captured;
}

/** The DynamoDB calls (on the product's document client) and PostgreSQL statements `work` sends. */
async function countRoundTrips(work: () => Promise<unknown>): Promise<RoundTrips> {
  const out: RoundTrips = { dynamo: [], postgis: [] };
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = (typeof first === 'string' ? first : (first?.text ?? '')).replace(/\s+/g, ' ').trim();
    out.postgis.push(text.slice(0, 40));
    return query.apply(this, args);
  };
  const client = documentClient() as unknown as { send: (...args: unknown[]) => unknown };
  const send = client.send;
  client.send = function (this: unknown, ...args: unknown[]) {
    out.dynamo.push((args[0] as { constructor: { name: string } }).constructor.name.replace(/Command$/, ''));
    return send.apply(this, args);
  };
  try {
    await work();
  } finally {
    proto.query = query;
    client.send = send;
  }
  return out;
}

/** Warm-up, then rounds in which every case runs its count, the order rotating per round. */
async function measureRounds(
  cases: readonly Case[],
  progress: (s: string) => void,
): Promise<{ samples: Partial<Record<CaseId, number[]>>; rounds: number; truncated: boolean }> {
  const started = Date.now();
  progress(`data plane: warm-up of ${cases.length} cases`);
  for (const c of cases) for (let i = 0; i < c.warmup; i++) await c.run();
  const samples: Partial<Record<CaseId, number[]>> = {};
  for (const c of cases) samples[c.id] = [];
  let rounds = 0;
  let truncated = false;
  for (let round = 0; round < ROUNDS; round++) {
    if (Date.now() - started > ROUNDS_BUDGET_MS) {
      truncated = true;
      break;
    }
    if (round % 5 === 0)
      progress(`data plane: rounds ${round + 1}–${Math.min(round + 5, ROUNDS)} of ${ROUNDS}`);
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length] as Case;
      const out = samples[c.id] as number[];
      for (let i = 0; i < c.perRound; i++) out.push(await c.run());
    }
    rounds++;
  }
  return { samples, rounds, truncated };
}

/** Tiles of `urls` (round robin) with `level` requests in flight for `ms`. */
async function throughput(
  agent: Agent,
  urls: readonly string[],
  headers: Record<string, string>,
  level: number,
  ms: number,
): Promise<ThroughputRun> {
  const run: ThroughputRun = {
    level,
    requests: 0,
    wallMs: 0,
    samples: [],
    statuses: {},
    features: 0,
    bytes: 0,
  };
  let next = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  const worker = async () => {
    while (performance.now() < end) {
      const url = urls[next++ % urls.length] as string;
      const reply = await send(agent, 'GET', url, headers);
      if (reply.status !== 200 && reply.status !== 204)
        throw new Error(`GET ${url} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
      run.samples.push(reply.ms);
      run.statuses[reply.status] = (run.statuses[reply.status] ?? 0) + 1;
      run.features += Number(reply.headers['geoplane-tile-features'] ?? 0);
      run.bytes += reply.bytes;
    }
  };
  await Promise.all(Array.from({ length: level }, worker));
  run.wallMs = performance.now() - t0;
  run.requests = run.samples.length;
  return run;
}

/** Sets the environment the product's in-process code reads (config() is parsed once), restorable. */
function productEnv(t: DataPlaneTarget): () => void {
  const wanted: Record<string, string> = {
    TABLE_NAME: 'geoplane',
    DYNAMODB_ENDPOINT: t.dynamoEndpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    GEOPLANE_ALLOWED_DATABASE_HOSTS: `${t.postgis.host}:${t.postgis.port}`,
  };
  const before: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(wanted)) {
    before[k] = process.env[k];
    process.env[k] = v;
  }
  const cfg = config();
  if (
    cfg.DYNAMODB_ENDPOINT !== t.dynamoEndpoint ||
    cfg.GEOPLANE_ALLOWED_DATABASE_HOSTS !== wanted.GEOPLANE_ALLOWED_DATABASE_HOSTS
  ) {
    throw new Error(
      'data plane: the product configuration was read before this section set it (config() is parsed once)',
    );
  }
  return () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

// ---- the measurement ----------------------------------------------------------------------------
export async function measureDataPlane(
  t: DataPlaneTarget,
  progress: (s: string) => void,
): Promise<DataPlaneOutcome> {
  const restoreEnv = productEnv(t);
  const ca = readFileSync(join(t.dataDir, 'tls-cert.pem'));
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
  const crowd = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT, ca });
  onCleanup('data plane: HTTPS clients', () => {
    agent.destroy();
    crowd.destroy();
  });
  const raw = new pg.Client({
    host: t.postgis.host,
    port: t.postgis.port,
    database: t.postgis.database,
    user: t.postgis.user,
    password: t.postgis.password,
  });
  onCleanup('data plane: pg client', () => raw.end().catch(() => {}));
  try {
    const setupStarted = performance.now();
    progress(`data plane: creating public.${TABLE} (${thousands(POINTS)} points) in the embedded PostGIS`);
    const seed = await seedPoints(t);
    progress(
      `data plane: table ready in ${fixed(seed.ms / 1000, 1)} s; workspace, service, layer, settings, key`,
    );
    const auth = { 'X-API-Key': t.apiKey };
    const origin = new URL(t.url).origin;
    const ws = (await call(agent, 'POST', `${t.url}/workspaces`, auth, {
      name: `bench-data-plane-${Date.now().toString(36)}`,
    })) as Workspace;
    const service = (await call(agent, 'POST', `${t.url}/workspaces/${ws.id}/services`, auth, {
      name: 'bench-pg',
      type: 'postgis',
      connection: t.postgis,
    })) as Service;
    const layer = (await call(
      agent,
      'POST',
      `${t.url}/workspaces/${ws.id}/services/${service.id}/layers`,
      auth,
      {
        source_layer: `public.${TABLE}`,
        public_id: TABLE,
        public: true,
      },
    )) as Layer;
    // OGC API Tiles is off in a fresh workspace: switched on as the tests do (PUT with If-Match).
    const tilesUrl = `${t.url}/workspaces/${ws.id}/settings/ogc-tiles`;
    const current = await get(agent, tilesUrl, auth, 200);
    const { version: _version, ...tilesDoc } = JSON.parse(current.text) as OGCTilesSettings & {
      version: number;
    };
    const put = await send(
      agent,
      'PUT',
      tilesUrl,
      { ...auth, 'If-Match': String(current.headers.etag) },
      JSON.stringify({ ...tilesDoc, enabled: true }),
    );
    if (put.status !== 200)
      throw new Error(`PUT ${tilesUrl} answered ${put.status}: ${put.text.slice(0, 400)}`);
    const tiles = JSON.parse(put.text) as OGCTilesSettings;
    const { version: _v2, ...ogcapi } = (await call(
      agent,
      'GET',
      `${t.url}/workspaces/${ws.id}/settings/ogcapi`,
      auth,
    )) as OGCAPISettings & { version: number };
    const viewer = (
      (await call(agent, 'POST', `${t.url}/workspaces/${ws.id}/apikeys`, auth, {
        name: 'bench-viewer',
        role_id: 'viewer',
      })) as { key: string }
    ).key;
    const asViewer = { 'X-API-Key': viewer };

    // ---- the in-process side: the product's own code on the same PostGIS and DynamoDB Local ----
    await raw.connect();
    const c: PostgisConnection = { ...t.postgis };
    const featureLayer: FeatureLayer = layer;
    const source = await describeFeatureSource(c, featureLayer);
    const query = parseFeatureQuery({ limit: [String(ITEMS_LIMIT)] }, featureQueryContext(source, ogcapi));
    const statement = itemsStatement(source, query);
    const tile = tileOf(TILE_POINT.lon, TILE_POINT.lat, TILE_ZOOM);
    const budget = {
      ...(tiles.settings.max_features ? { maxFeatures: tiles.settings.max_features } : {}),
      ...(tiles.settings.max_tile_bytes ? { maxBytes: tiles.settings.max_tile_bytes } : {}),
    };
    const tileSource = tileSourceOf(layer, source);
    let rendered: RenderedTile | undefined;
    const tileStatement = await captureTileStatement(async () => {
      rendered = await renderTile(c, tileSource, tile, budget);
    });
    if (!rendered || rendered.features === 0)
      throw new Error(`the z${TILE_ZOOM} tile ${tile.x}/${tile.y} is empty`);
    const catalog = dataCatalog();
    // One items request and one tile request of the use case, in-process, counted.
    const ports: DataPlanePorts = { catalog, data: postgisLayerData(async () => c) };
    const caller: DataCaller = {
      kind: 'principal',
      superAdmin: false,
      role: { id: 'viewer', policies: builtInPolicies.viewer },
    };
    const dataRequest = (q: Record<string, readonly string[]>) => ({
      workspace: { ...ws, status: 'active' as const },
      caller,
      links: dataLinks(`${origin}/workspaces/${ws.id}/ogc`),
      query: q,
    });
    const address = { z: String(tile.z), y: String(tile.y), x: String(tile.x) };
    const roundTrips = {
      items: await countRoundTrips(() =>
        dataItems(ports, dataRequest({ limit: [String(ITEMS_LIMIT)] }), TABLE),
      ),
      tile: await countRoundTrips(() =>
        collectionTile(ports, dataRequest({}), TABLE, 'WebMercatorQuad', address),
      ),
    };

    // ---- the answers agree: the host's page is the statement's, its tile renderTile's ----
    const ogc = `${origin}/workspaces/${ws.id}/ogc/collections/${TABLE}`;
    const itemsUrl = `${ogc}/items?limit=${ITEMS_LIMIT}`;
    const tileUrl = (z: number, x: number, y: number) => `${ogc}/tiles/WebMercatorQuad/${z}/${y}/${x}`;
    const hostItems = await get(agent, itemsUrl, asViewer, 200);
    const hostIds = (JSON.parse(hostItems.text).features as { id: number }[]).map((f) => String(f.id));
    const sqlRows = (await raw.query<{ fid: string }>(statement.text, statement.values)).rows;
    if (
      hostIds.length !== ITEMS_LIMIT ||
      hostIds.join() !==
        sqlRows
          .slice(0, ITEMS_LIMIT)
          .map((r) => r.fid)
          .join()
    )
      throw new Error('data plane: the host answered another page than the items statement');
    const hostTile = await get(agent, tileUrl(tile.z, tile.x, tile.y), asViewer, 200);
    if (
      Number(hostTile.headers['geoplane-tile-features']) !== rendered.features ||
      hostTile.bytes !== rendered.bytes.length
    )
      throw new Error('data plane: the host answered another tile than renderTile');
    const anonymous = await get(agent, tileUrl(tile.z, tile.x, tile.y), {}, 200);
    const etag = String(anonymous.headers.etag);
    if (!/^public/.test(String(anonymous.headers['cache-control'])))
      throw new Error(`data plane: the anonymous tile is not public (${anonymous.headers['cache-control']})`);
    const setupMs = performance.now() - setupStarted;

    // ---- the cases ----
    const expectRows = (n: number, want: number, what: string) => {
      if (n !== want) throw new Error(`data plane: ${what} returned ${n} rows, expected ${want}`);
    };
    const http = (url: string, headers: Record<string, string>, status: number) => async () =>
      (await get(agent, url, headers, status)).ms;
    const primary = { warmup: WARMUP, perRound: PER_ROUND };
    const breakdown = { warmup: WARMUP_BREAKDOWN, perRound: PER_ROUND_BREAKDOWN };
    const inProcess = { warmup: WARMUP_IN_PROCESS };
    const tileAt = tileUrl(tile.z, tile.x, tile.y);
    const cases: Case[] = [
      // The targets' cases and their references.
      { id: 'floor', run: http(`https://127.0.0.1:${t.floorPort}/floor/${ws.id}`, {}, 200), ...primary },
      { id: 'itemsHost', run: http(itemsUrl, asViewer, 200), ...primary },
      {
        id: 'itemsSql',
        run: () =>
          timed(async () =>
            expectRows(
              (await raw.query(statement.text, statement.values)).rowCount ?? 0,
              ITEMS_LIMIT + 1,
              'the items statement',
            ),
          ),
        ...primary,
        ...inProcess,
      },
      { id: 'tileHost', run: http(tileAt, asViewer, 200), ...primary },
      {
        id: 'tileRender',
        run: () => timed(() => renderTile(c, tileSource, tile, budget)),
        ...primary,
        ...inProcess,
      },
      { id: 'tileNotModified', run: http(tileAt, { 'If-None-Match': etag }, 304), ...primary },
      // The breakdown: cheaper requests through the host, the PostGIS steps in-process.
      { id: 'landingHost', run: http(`${origin}/workspaces/${ws.id}/ogc`, asViewer, 200), ...breakdown },
      { id: 'tilesetsHost', run: http(`${ogc}/tiles`, asViewer, 200), ...breakdown },
      {
        id: 'catalog',
        // The use case's catalog reads: both settings documents and the public-id marker in one
        // BatchGetItem, then the layer and its service in another.
        run: () =>
          timed(async () => {
            const found = await catalog.collection(ws.id, TABLE);
            if (!found.layer || !found.service) throw new Error('data plane: the catalog lost the layer');
          }),
        ...breakdown,
        ...inProcess,
      },
      {
        id: 'describe',
        run: () => timed(() => describeFeatureSource(c, featureLayer)),
        ...breakdown,
        ...inProcess,
      },
      {
        id: 'itemsRead',
        run: () => timed(() => readFeatureItems(c, source, query, TABLE)),
        ...breakdown,
        ...inProcess,
      },
      {
        id: 'tileSql',
        run: () =>
          timed(async () =>
            expectRows(
              (await raw.query(tileStatement.text, tileStatement.values)).rowCount ?? 0,
              rendered?.features ?? -1,
              'the tile statement',
            ),
          ),
        ...breakdown,
        ...inProcess,
      },
      { id: 'tileAnonymous', run: http(tileAt, {}, 200), ...breakdown },
    ];
    const measureStarted = performance.now();
    const measured = await measureRounds(cases, progress);
    const measureMs = performance.now() - measureStarted;

    // ---- throughput: every z13 tile of the data, round robin ----
    const throughputStarted = performance.now();
    const nw = tileOf(EXTENT.west, EXTENT.north, THROUGHPUT_ZOOM);
    const se = tileOf(EXTENT.east, EXTENT.south, THROUGHPUT_ZOOM);
    const urls: string[] = [];
    for (let y = nw.y; y <= se.y; y++)
      for (let x = nw.x; x <= se.x; x++) urls.push(tileUrl(THROUGHPUT_ZOOM, x, y));
    const runs: ThroughputRun[] = [];
    for (const level of [1, IN_FLIGHT]) {
      const a = level === 1 ? agent : crowd;
      progress(`data plane: tiles/s with ${level} in flight over ${urls.length} z${THROUGHPUT_ZOOM} tiles`);
      // Warm-up (not kept): opens the connections and runs every tile once or so.
      await throughput(a, urls, asViewer, level, THROUGHPUT_WARMUP_MS);
      runs.push(await throughput(a, urls, asViewer, level, THROUGHPUT_MS[level] as number));
    }
    const throughputMs = performance.now() - throughputStarted;

    return {
      samples: measured.samples,
      rounds: measured.rounds,
      truncated: measured.truncated,
      seed,
      tile: { ...tile, features: rendered.features, bytes: rendered.bytes.length, encoder: rendered.encoder },
      itemsBytes: hostItems.bytes,
      throughput: runs,
      throughputTiles: urls.length,
      roundTrips,
      setupMs,
      measureMs,
      throughputMs,
    };
  } finally {
    agent.destroy();
    crowd.destroy();
    await raw.end().catch(() => {});
    restoreEnv();
  }
}

// ---- the report ---------------------------------------------------------------------------------
const DESCRIBE: Record<CaseId, string> = {
  floor: '**FLOOR**: bare HTTPS server, 1 GetItem',
  landingHost: 'landing page (`/ogc`) through the host: authorizer, 2 settings reads ‖',
  tilesetsHost: "a collection's tilesets (`…/tiles`) through the host: every catalog read, no PostGIS",
  catalog: 'catalog reads in-process (2 settings + public-id marker, then layer + service: 2 BatchGetItems)',
  itemsHost: `**items page** (limit ${ITEMS_LIMIT}) through the host, viewer API key`,
  describe: '`describeFeatureSource` in-process (one read-only unit of PostGIS catalog queries)',
  itemsRead:
    '`readFeatureItems` in-process (read-only unit: BEGIN, session setup, jit/TZ, statement, ROLLBACK)',
  itemsSql: `**items statement alone over pg** (\`itemsStatement\`, ${ITEMS_LIMIT + 1} rows)`,
  tileHost: `**z${TILE_ZOOM} tile** through the host, viewer API key`,
  tileRender: '**`renderTile` in-process** (read-only unit, tile statement, vt-pbf encoding)',
  tileSql: 'the tile statement alone over pg (no unit of work, no encoding)',
  tileAnonymous: 'the same tile, anonymous (public layer), 200',
  tileNotModified: '**the same tile, anonymous, `If-None-Match` its ETag → 304**',
};

function p50(o: DataPlaneOutcome, id: CaseId): number {
  return percentile(o.samples[id] ?? [], 50);
}

export function dataPlaneSection(o: DataPlaneOutcome, verdicts: string[]): string {
  const floor = p50(o, 'floor');
  const against = (what: string, id: CaseId, max: number, ref: CaseId, refName: string) => {
    const value = p50(o, id);
    const base = p50(o, ref);
    verdicts.push(
      `- data plane: ${what} p50 ≤ ${max}× ${refName}: ${verdict(value <= max * base)} (${ratio(value, base)}: ${fixed(value)} ms vs ${fixed(base)} ms)`,
    );
  };
  against(
    `items page (limit ${ITEMS_LIMIT}, viewer API key)`,
    'itemsHost',
    ITEMS_OVER_SQL_MAX,
    'itemsSql',
    'its statement alone over pg',
  );
  against(
    `z${TILE_ZOOM} tile (viewer API key)`,
    'tileHost',
    TILE_OVER_RENDER_MAX,
    'tileRender',
    'renderTile in-process',
  );
  against(
    'cached public tile (anonymous, 304 on If-None-Match)',
    'tileNotModified',
    NOT_MODIFIED_OVER_FLOOR_MAX,
    'floor',
    'floor',
  );

  const order: CaseId[] = [
    'floor',
    'landingHost',
    'tilesetsHost',
    'catalog',
    'itemsHost',
    'describe',
    'itemsRead',
    'itemsSql',
    'tileHost',
    'tileRender',
    'tileSql',
    'tileAnonymous',
    'tileNotModified',
  ];
  const rows = order.map((id) => {
    const s = o.samples[id] ?? [];
    return [
      DESCRIBE[id],
      String(s.length),
      fixed(percentile(s, 50)),
      fixed(percentile(s, 95)),
      fixed(mean(s)),
      id === 'floor' ? '1.00×' : ratio(percentile(s, 50), floor),
    ];
  });

  // Where the host's p50 goes: a ladder of host requests, then the PostGIS steps measured
  // in-process; the last row is what is left (answer body, ETag, encoding differences, noise).
  const share = (ms: number, of: number) =>
    `${fixed(ms)} (${Number.isFinite(ms / of) ? Math.round((100 * ms) / of) : 'n/a'} %)`;
  const itemsHost = p50(o, 'itemsHost');
  const tileHost = p50(o, 'tileHost');
  const landing = p50(o, 'landingHost');
  const tilesets = p50(o, 'tilesetsHost');
  const describe = p50(o, 'describe');
  const common = (of: number) => [
    share(floor, of),
    share(landing - floor, of),
    share(tilesets - landing, of),
    share(describe, of),
  ];
  const itemsParts = [
    ...common(itemsHost),
    share(p50(o, 'itemsRead') - p50(o, 'itemsSql'), itemsHost),
    share(p50(o, 'itemsSql'), itemsHost),
    share(itemsHost - tilesets - describe - p50(o, 'itemsRead'), itemsHost),
  ];
  const tileParts = [
    ...common(tileHost),
    share(p50(o, 'tileRender') - p50(o, 'tileSql'), tileHost),
    share(p50(o, 'tileSql'), tileHost),
    share(tileHost - tilesets - describe - p50(o, 'tileRender'), tileHost),
  ];
  const partNames = [
    'HTTPS + one DynamoDB read (the floor)',
    "gateway, authorizer's API-key read, handler edge, settings reads ‖ (landing − floor)",
    'public-id marker, layer, service: one more batched read (tilesets − landing)',
    '`describeFeatureSource`: a read-only unit of 3 catalog queries, every request',
    'the read-only unit around the statement (BEGIN, setup, ROLLBACK; tiles: + encoding)',
    'the statement alone',
    'the rest: answer body, ETag, base64, noise (host − tilesets − describe − read/render)',
  ];
  const breakdownRows = partNames.map((name, i) => [name, itemsParts[i] as string, tileParts[i] as string]);

  const runRows = o.throughput.map((r) => [
    String(r.level),
    String(r.requests),
    fixed(r.wallMs / 1000, 1),
    fixed((1000 * r.requests) / r.wallMs, 1),
    fixed(percentile(r.samples, 50)),
    fixed(percentile(r.samples, 95)),
    Object.entries(r.statuses)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', '),
    thousands(r.requests ? r.features / r.requests : 0),
    fixed(r.requests ? r.bytes / r.requests / 1024 : 0, 1),
  ]);

  return [
    '## 8. Data plane: the OGC API vs its SQL',
    '',
    `The workspace's OGC API on the local host (\`/workspaces/{id}/ogc\`, \`functions/ogc/data-plane.ts\` behind the ` +
      'gateway emulation and the REQUEST authorizer) against the same work without it, on the same embedded PostGIS ' +
      `(PGlite in a worker thread of the host: one backend, every connection queued on it) and DynamoDB Local. Data: ` +
      `\`public.${TABLE}\`, ${thousands(o.seed.points)} points over ${EXTENT.west}–${EXTENT.east}°E, ${EXTENT.south}–${EXTENT.north}°N ` +
      `(id primary key, GiST on geom, 3 properties; ${o.seed.created ? `created as the superuser in ${fixed(o.seed.ms / 1000, 1)} s` : 'already there'}), ` +
      'one public table layer on a PostGIS service of the demo login, OGC API Tiles switched on, a viewer API key. ' +
      `Sequential requests over one keep-alive HTTPS connection (as section 1); in-process cases call the product's own ` +
      'functions from this process with its own pooled connections; raw statements go over one plain `pg` client of the ' +
      `demo login, outside any transaction. Warm-up ${WARMUP} per case (host breakdown cases ${WARMUP_BREAKDOWN}, in-process ones ${WARMUP_IN_PROCESS}), then ` +
      `${o.rounds} round(s) of ${PER_ROUND} (breakdown ${PER_ROUND_BREAKDOWN}) per case, the case order rotating per round. ` +
      `Times from the call to the last byte, in ms; percentiles nearest-rank. Items page: ${fixed(o.itemsBytes / 1024, 1)} KB of GeoJSON. ` +
      `The tile: ${o.tile.z}/${o.tile.y}/${o.tile.x} (tileMatrix/tileRow/tileCol), ${thousands(o.tile.features)} features, ` +
      `${fixed(o.tile.bytes / 1024, 1)} KB, encoded by ${o.tile.encoder === 'typescript' ? '`@maplibre/vt-pbf` (this PostGIS has no ST_AsMVT: PGlite lacks protobuf-c, ADR 0119)' : 'ST_AsMVT'}. ` +
      '"Tile SQL alone" for the target is `renderTile` called in-process: the closest the product has (its read-only unit of work, ' +
      "the statement and the encoding); the statement itself (captured from renderTile's own call) is measured alone beside it.",
    '',
    table(['case', 'n', 'p50', 'p95', 'mean', 'p50 × floor'], rows, '---|---:|---:|---:|---:|---:'),
    '',
    ...(o.truncated
      ? [
          `Stopped early at the time budget (${fixed(ROUNDS_BUDGET_MS / 1000, 0)} s of rounds): fewer samples than planned.\n`,
        ]
      : []),
    '**Where the host p50 goes** (ms and share of the host p50; differences of p50s, so approximate — a negative ' +
      'part is within the noise). Host requests down to the catalog reads, then the PostGIS steps as measured in-process:',
    '',
    table(
      ['part', `items page (${fixed(itemsHost)} ms)`, `z${TILE_ZOOM} tile (${fixed(tileHost)} ms)`],
      breakdownRows,
      '---|---:|---:',
    ),
    '',
    `Cross-check: the same catalog reads made in-process (2 round trips) take ${fixed(p50(o, 'catalog'))} ms; ` +
      `through the host the tilesets document costs ${fixed(tilesets - floor)} ms over the floor.`,
    '',
    'Round trips of one request, counted on the use case run in-process (`dataItems`, `collectionTile`; the host adds ' +
      "the authorizer's BatchGetItem of the API key and the workspace):",
    '',
    table(
      ['request', 'DynamoDB calls', 'PostgreSQL statements'],
      (['items', 'tile'] as const).map((k) => [
        k === 'items' ? 'items page' : `z${TILE_ZOOM} tile`,
        `${o.roundTrips[k].dynamo.length}: ${o.roundTrips[k].dynamo.join(', ')}`,
        `${o.roundTrips[k].postgis.length}: ${o.roundTrips[k].postgis.map((q) => `\`${q.replaceAll('|', '\\|')}\``).join(', ')}`,
      ]),
      '---|---|---',
    ),
    '',
    `The 304 renders the tile in full to compute its ETag (no server-side cache, ADR 0123): it costs what the 200 does ` +
      `(${fixed(p50(o, 'tileNotModified'))} vs ${fixed(p50(o, 'tileAnonymous'))} ms) minus the body.`,
    '',
    `**Tiles/s** (no target): every z${THROUGHPUT_ZOOM} tile of the data (${o.throughputTiles} tiles, round robin), viewer API key, ` +
      `${IN_FLIGHT} requests in flight over ${IN_FLIGHT} keep-alive connections vs 1:`,
    '',
    table(
      ['in flight', 'requests', 's', 'tiles/s', 'p50', 'p95', 'statuses', 'features/tile', 'KB/tile'],
      runRows,
      '---:|---:|---:|---:|---:|---:|---|---:|---:',
    ),
    '',
    `Section time: setup ${fixed(o.setupMs / 1000, 1)} s (table ${fixed(o.seed.ms / 1000, 1)} s), measured rounds ${fixed(o.measureMs / 1000, 1)} s ` +
      `(warm-up included), throughput ${fixed(o.throughputMs / 1000, 1)} s.`,
  ].join('\n');
}
