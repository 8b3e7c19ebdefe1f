/**
 * What the data-plane section runs against and sets up on it: the environment the product's
 * in-process code reads, the points table seeded in the embedded PostGIS as its superuser, the
 * workspace made through the management API (a PostGIS service, one public layer, OGC API Tiles
 * switched on, a viewer key), and the one GET the section's requests go through.
 */
import { readFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import { join } from 'node:path';
import pg from 'pg';
import { config } from '#config/env.ts';
import type { Layer } from '#domain/layers.ts';
import type { Service } from '#domain/services.ts';
import type { OGCAPISettings, OGCTilesSettings } from '#domain/settings.ts';
import type { Workspace } from '#domain/workspaces.ts';
import { DEMO_USER } from '#infra/local/postgis.ts';
import { type DataPlaneOutcome, type DataPlaneTarget, EXTENT, POINTS, TABLE } from './data-plane-types.ts';
import { call, type Reply, send } from './latency.ts';

/** One GET that must answer `status` (one retry on a keep-alive socket the server closed). */
export async function get(
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
export async function seedPoints(t: DataPlaneTarget): Promise<DataPlaneOutcome['seed']> {
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

/** Sets the environment the product's in-process code reads (config() is parsed once), restorable. */
export function productEnv(t: DataPlaneTarget): () => void {
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

/**
 * A workspace the section measures, made through the management API as the super admin: a
 * PostGIS service on the demo login, one public layer on the points table, OGC API Tiles switched
 * on with the persistent tile cache on (the settings' default, ADR 0139) or off (every tile
 * rendered), and a viewer API key (`asViewer`: its headers).
 */
export async function createWorkspace(agent: Agent, t: DataPlaneTarget, tileCache: boolean) {
  const auth = { 'X-API-Key': t.apiKey };
  const ws = (await call(agent, 'POST', `${t.url}/workspaces`, auth, {
    name: `bench-data-plane-${tileCache ? 'cached' : 'rendered'}-${Date.now().toString(36)}`,
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
    JSON.stringify({
      ...tilesDoc,
      enabled: true,
      settings: { ...tilesDoc.settings, cache_enabled: tileCache },
    }),
  );
  if (put.status !== 200)
    throw new Error(`PUT ${tilesUrl} answered ${put.status}: ${put.text.slice(0, 400)}`);
  const tiles = JSON.parse(put.text) as OGCTilesSettings;
  if (tiles.settings.cache_enabled !== tileCache)
    throw new Error(
      `data plane: the tile cache is ${tiles.settings.cache_enabled ? 'on' : 'off'} after the PUT`,
    );
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
  return { ws, layer, tiles, ogcapi, asViewer };
}
