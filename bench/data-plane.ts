/**
 * Section 8 of `npm run bench`: the data plane (issue #24, ADR 0123), the workspace's OGC API at
 * `/workspaces/{workspace}/ogc` on the local host, against what its answers cost without it:
 *   1. an items page (limit 100) through the host (HTTPS, a viewer's API key) vs the very same
 *      statement (`itemsStatement` of the described source and the parsed query) run alone over
 *      `pg` on the same PostGIS; target ≤ 1.2×;
 *   2. a z14 tile through the host, rendered (a workspace whose Tiles settings switch the
 *      persistent tile cache off, ADR 0139), vs `renderTile` called in-process on the same PostGIS
 *      (the closest to "the tile SQL alone" the product has: its read-only unit of work, the
 *      statement and the encoding; the statement alone is measured beside it); target ≤ 1.2×;
 *   3. a cached public tile: an anonymous request with `If-None-Match` of its ETag (304) vs the
 *      floor server's request (HTTPS + one GetItem), in a workspace with the tile cache on (the
 *      settings' default), so the tile is read from the cache, not rendered; target ≤ 1.1×;
 *   4. tiles/s with 10 requests in flight over the z13 tiles of the data, rendered (no target).
 * The same z14 tile read from the tile cache through the host is measured beside them (no target).
 * Beside them, a ladder of cheaper requests through the same host (the landing page: the
 * authorizer and the settings reads; a collection's tilesets document: every catalog read of an
 * items page or a tile, no PostGIS) and the product's PostGIS steps called in-process
 * (describeFeatureSource, readFeatureItems, the tile statement alone), so a miss says where the
 * time goes.
 *
 * The data: `public.bench_points` (30,000 points over ~0.3° × 0.2° around Paris, ~170 per z14
 * tile), created in the embedded PostGIS as its superuser and granted to the demo login; a
 * two workspaces, each with a PostGIS service on it, one public layer, OGC API Tiles enabled (the
 * tile cache on in one, off in the other) and a viewer key.
 * In the full run it uses the main stack (section 1's host and floor);
 * `npm run bench -- data-plane` (or `BENCH_ONLY=data-plane`) starts that stack alone and writes
 * `.bench/results-data-plane.md`.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { join } from 'node:path';
import pg from 'pg';
import { builtInPolicies } from '#auth/permissions.ts';
import {
  describeFeatureSource,
  type FeatureLayer,
  featureQueryContext,
  itemsStatement,
  readFeatureItems,
} from '#datasources/feature-items.ts';
import { postgisLayerData } from '#datasources/layer-data.ts';
import type { PostgisConnection } from '#datasources/postgis.ts';
import { type RenderedTile, renderTile } from '#datasources/vector-tiles.ts';
import type { DataCaller } from '#domain/data-access.ts';
import { collectionTile, type DataPlanePorts, dataItems } from '#domain/data-plane.ts';
import { parseFeatureQuery } from '#domain/feature-query.ts';
import { dataLinks } from '#domain/ogc-documents.ts';
import { dataCatalog } from '#wiring/repositories.ts';
import { onCleanup } from './cleanup.ts';
import { captureTileStatement, countRoundTrips, tileSourceOf } from './data-plane-probes.ts';
import { createWorkspace, get, productEnv, seedPoints } from './data-plane-targets.ts';
import {
  type CaseId,
  type DataPlaneOutcome,
  type DataPlaneTarget,
  EXTENT,
  IN_FLIGHT,
  ITEMS_LIMIT,
  PER_ROUND,
  PER_ROUND_BREAKDOWN,
  POINTS,
  ROUNDS,
  ROUNDS_BUDGET_MS,
  TABLE,
  THROUGHPUT_MS,
  THROUGHPUT_WARMUP_MS,
  THROUGHPUT_ZOOM,
  type ThroughputRun,
  TILE_POINT,
  TILE_ZOOM,
  WARMUP,
  WARMUP_BREAKDOWN,
  WARMUP_IN_PROCESS,
} from './data-plane-types.ts';
import { send } from './latency.ts';
import { fixed, thousands } from './stats.ts';

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

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

interface Case {
  id: CaseId;
  /** One run; its milliseconds. */
  run: () => Promise<number>;
  warmup: number;
  perRound: number;
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
    const origin = new URL(t.url).origin;
    // Tiles read from the persistent cache (the default) and tiles rendered on every request: a
    // workspace of each, on the same table. Everything but the rendered tile goes to the first.
    const { ws, layer, tiles, ogcapi, asViewer } = await createWorkspace(agent, t, true);
    const uncached = await createWorkspace(agent, t, false);

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
      itemsAgain: await countRoundTrips(() =>
        dataItems(ports, dataRequest({ limit: [String(ITEMS_LIMIT)] }), TABLE),
      ),
      tile: await countRoundTrips(() =>
        collectionTile(ports, dataRequest({}), TABLE, 'WebMercatorQuad', address),
      ),
    };

    // ---- the answers agree: the host's page is the statement's, its tile renderTile's ----
    const collection = (workspace: string) => `${origin}/workspaces/${workspace}/ogc/collections/${TABLE}`;
    const ogc = collection(ws.id);
    const itemsUrl = `${ogc}/items?limit=${ITEMS_LIMIT}`;
    const tileUrl = (z: number, x: number, y: number, workspace = ws.id) =>
      `${collection(workspace)}/tiles/WebMercatorQuad/${z}/${y}/${x}`;
    const renderedUrl = (z: number, x: number, y: number) => tileUrl(z, x, y, uncached.ws.id);
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
    // Rendered twice with the cache off, then stored once and read back with it on: the same tile.
    const sameTile = (reply: Awaited<ReturnType<typeof get>>, cache: string, what: string) => {
      if (
        Number(reply.headers['geoplane-tile-features']) !== rendered?.features ||
        reply.bytes !== rendered.bytes.length
      )
        throw new Error(`data plane: the host answered another tile than renderTile (${what})`);
      if (reply.headers['geoplane-tile-cache'] !== cache)
        throw new Error(
          `data plane: ${what}: GeoPlane-Tile-Cache ${reply.headers['geoplane-tile-cache']}, expected ${cache}`,
        );
    };
    for (const round of [1, 2])
      sameTile(
        await get(agent, renderedUrl(tile.z, tile.x, tile.y), uncached.asViewer, 200),
        'off',
        `rendered ${round}`,
      );
    sameTile(
      await get(agent, tileUrl(tile.z, tile.x, tile.y), asViewer, 200),
      'miss',
      'first with the cache on',
    );
    sameTile(
      await get(agent, tileUrl(tile.z, tile.x, tile.y), asViewer, 200),
      'hit',
      'again with the cache on',
    );
    const anonymous = await get(agent, tileUrl(tile.z, tile.x, tile.y), {}, 200);
    sameTile(anonymous, 'hit', 'anonymous with the cache on');
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
      { id: 'tileHost', run: http(renderedUrl(tile.z, tile.x, tile.y), uncached.asViewer, 200), ...primary },
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
        // The use case's catalog reads of a collection read before: both settings documents, the
        // public-id marker and the layer and service it pointed at, in one BatchGetItem.
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
      { id: 'tileHostCached', run: http(tileAt, asViewer, 200), ...breakdown },
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
      for (let x = nw.x; x <= se.x; x++) urls.push(renderedUrl(THROUGHPUT_ZOOM, x, y));
    const runs: ThroughputRun[] = [];
    for (const level of [1, IN_FLIGHT]) {
      const a = level === 1 ? agent : crowd;
      progress(`data plane: tiles/s with ${level} in flight over ${urls.length} z${THROUGHPUT_ZOOM} tiles`);
      // Warm-up (not kept): opens the connections and runs every tile once or so.
      await throughput(a, urls, uncached.asViewer, level, THROUGHPUT_WARMUP_MS);
      runs.push(await throughput(a, urls, uncached.asViewer, level, THROUGHPUT_MS[level] as number));
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
