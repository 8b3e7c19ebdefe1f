/**
 * The data-plane section's part of the report (bench/results.md): its verdict lines (the three
 * targets) and its text: how it measured, the cases, where the host p50 goes, the round trips of
 * one request, tiles/s, each table built by a function of its own.
 */

import { DESCRIPTION_TTL_MS } from '#datasources/layer-data.ts';
import {
  type CaseId,
  type DataPlaneOutcome,
  EXTENT,
  IN_FLIGHT,
  ITEMS_LIMIT,
  ITEMS_OVER_SQL_MAX,
  NOT_MODIFIED_OVER_FLOOR_MAX,
  PER_ROUND,
  PER_ROUND_BREAKDOWN,
  ROUNDS_BUDGET_MS,
  TABLE,
  THROUGHPUT_ZOOM,
  TILE_OVER_RENDER_MAX,
  TILE_ZOOM,
  WARMUP,
  WARMUP_BREAKDOWN,
  WARMUP_IN_PROCESS,
} from './data-plane-types.ts';
import { fixed, mean, percentile, ratio, table, thousands, verdict } from './stats.ts';

const DESCRIBE: Record<CaseId, string> = {
  floor: '**FLOOR**: bare HTTPS server, 1 GetItem',
  landingHost: 'landing page (`/ogc`) through the host: authorizer, 2 settings reads ‖',
  tilesetsHost: "a collection's tilesets (`…/tiles`) through the host: every catalog read, no PostGIS",
  catalog:
    'catalog reads in-process, repeated (2 settings, the public-id marker, its layer and service: 1 BatchGetItem)',
  itemsHost: `**items page** (limit ${ITEMS_LIMIT}) through the host, viewer API key`,
  describe: '`describeFeatureSource` in-process (one read-only unit of PostGIS catalog queries)',
  itemsRead:
    '`readFeatureItems` in-process (read-only unit: BEGIN with the session setup, statement, ROLLBACK)',
  itemsSql: `**items statement alone over pg** (\`itemsStatement\`, ${ITEMS_LIMIT + 1} rows)`,
  tileHost: `**z${TILE_ZOOM} tile** through the host, viewer API key, tile cache off: rendered`,
  tileRender: '**`renderTile` in-process** (read-only unit, tile statement, vt-pbf encoding)',
  tileSql: 'the tile statement alone over pg (no unit of work, no encoding)',
  tileAnonymous: 'the same tile, anonymous (public layer), tile cache on: read from the cache, 200',
  tileNotModified: '**the same tile, anonymous, `If-None-Match` its ETag → 304** (tile cache on)',
  tileHostCached:
    'the same tile through the host, viewer API key, tile cache on: read from the cache (ADR 0139)',
};

function p50(o: DataPlaneOutcome, id: CaseId): number {
  return percentile(o.samples[id] ?? [], 50);
}

/** The report's data-plane section; adds its verdict lines to `verdicts`. */
export function dataPlaneSection(o: DataPlaneOutcome, verdicts: string[]): string {
  targetVerdicts(o, verdicts);
  const floor = p50(o, 'floor');
  const tilesets = p50(o, 'tilesetsHost');
  return [
    '## 8. Data plane: the OGC API vs its SQL',
    '',
    methodParagraph(o),
    '',
    casesTable(o),
    '',
    ...(o.truncated
      ? [
          `Stopped early at the time budget (${fixed(ROUNDS_BUDGET_MS / 1000, 0)} s of rounds): fewer samples than planned.\n`,
        ]
      : []),
    '**Where the host p50 goes** (ms and share of the host p50; differences of p50s, so approximate — a negative ' +
      'part is within the noise). Host requests down to the catalog reads, then the PostGIS steps as measured in-process:',
    '',
    breakdownTable(o),
    '',
    `Cross-check: the same catalog reads made in-process (one round trip, as for every collection read again) take ${fixed(p50(o, 'catalog'))} ms; ` +
      `through the host the tilesets document costs ${fixed(tilesets - floor)} ms over the floor.`,
    '',
    'Round trips of one request, counted on the use case run in-process (`dataItems`, `collectionTile`; the host adds ' +
      "the authorizer's BatchGetItem of the API key and the workspace). The first items page is the process's first read " +
      'of the collection: its public-id marker is read before its layer and service, and the source is described; read again, ' +
      'the marker is read beside the layer and service it pointed at (ADR 0123):',
    '',
    roundTripsTable(o),
    '',
    'The rendered tile (the target against `renderTile`) comes from a workspace whose OGC API Tiles settings switch the ' +
      'persistent tile cache off; the cached tile, the anonymous 200 and the 304 from one with it on (the default, ADR 0139), ' +
      'where the tile is read from the cache: the bench checks `GeoPlane-Tile-Cache` (`off`, then `miss` once, then `hit`) and ' +
      `that every answer is renderTile's tile. A cached tile through the host takes ${fixed(p50(o, 'tileHostCached'))} ms ` +
      `against ${fixed(p50(o, 'tileHost'))} ms rendered. The 304 hashes the tile's bytes for its ETag as the 200 does ` +
      `(${fixed(p50(o, 'tileNotModified'))} vs ${fixed(p50(o, 'tileAnonymous'))} ms): it saves the body, not the read.`,
    '',
    `**Tiles/s** (no target): every z${THROUGHPUT_ZOOM} tile of the data (${o.throughputTiles} tiles, round robin), rendered (tile cache off), viewer API key, ` +
      `${IN_FLIGHT} requests in flight over ${IN_FLIGHT} keep-alive connections vs 1:`,
    '',
    throughputTable(o),
    '',
    `Section time: setup ${fixed(o.setupMs / 1000, 1)} s (table ${fixed(o.seed.ms / 1000, 1)} s), measured rounds ${fixed(o.measureMs / 1000, 1)} s ` +
      `(warm-up included), throughput ${fixed(o.throughputMs / 1000, 1)} s.`,
  ].join('\n');
}

/** The three targets, each a verdict line: the host against its reference, p50 over p50. */
function targetVerdicts(o: DataPlaneOutcome, verdicts: string[]): void {
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
    `z${TILE_ZOOM} tile rendered (viewer API key, tile cache off)`,
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
}

/** How the section measured: the data, the requests, the in-process cases, the rounds, the tile. */
function methodParagraph(o: DataPlaneOutcome): string {
  return (
    `The workspace's OGC API on the local host (\`/workspaces/{id}/ogc\`, \`functions/ogc/data-plane.ts\` behind the ` +
    'gateway emulation and the REQUEST authorizer) against the same work without it, on the same embedded PostGIS ' +
    `(PGlite in a worker thread of the host: one backend, every connection queued on it) and DynamoDB Local. Data: ` +
    `\`public.${TABLE}\`, ${thousands(o.seed.points)} points over ${EXTENT.west}–${EXTENT.east}°E, ${EXTENT.south}–${EXTENT.north}°N ` +
    `(id primary key, GiST on geom, 3 properties; ${o.seed.created ? `created as the superuser in ${fixed(o.seed.ms / 1000, 1)} s` : 'already there'}), ` +
    'one public table layer on a PostGIS service of the demo login, OGC API Tiles switched on, a viewer API key (in each workspace). ' +
    `Sequential requests over one keep-alive HTTPS connection (as section 1); in-process cases call the product's own ` +
    'functions from this process with its own pooled connections; raw statements go over one plain `pg` client of the ' +
    `demo login, outside any transaction. Warm-up ${WARMUP} per case (host breakdown cases ${WARMUP_BREAKDOWN}, in-process ones ${WARMUP_IN_PROCESS}), then ` +
    `${o.rounds} round(s) of ${PER_ROUND} (breakdown ${PER_ROUND_BREAKDOWN}) per case, the case order rotating per round. ` +
    `Times from the call to the last byte, in ms; percentiles nearest-rank. Items page: ${fixed(o.itemsBytes / 1024, 1)} KB of GeoJSON. ` +
    `The tile: ${o.tile.z}/${o.tile.y}/${o.tile.x} (tileMatrix/tileRow/tileCol), ${thousands(o.tile.features)} features, ` +
    `${fixed(o.tile.bytes / 1024, 1)} KB, encoded by ${o.tile.encoder === 'typescript' ? '`@maplibre/vt-pbf` (this PostGIS has no ST_AsMVT: PGlite lacks protobuf-c, ADR 0119)' : 'ST_AsMVT'}. ` +
    '"Tile SQL alone" for the target is `renderTile` called in-process: the closest the product has (its read-only unit of work, ' +
    "the statement and the encoding); the statement itself (captured from renderTile's own call) is measured alone beside it. " +
    'Two workspaces on the same table: the persistent tile cache off in one (the rendered tile, tiles/s), on in the other (everything else).'
  );
}

/** The cases, a row each: n, p50, p95, mean and p50 over the floor's. */
function casesTable(o: DataPlaneOutcome): string {
  const floor = p50(o, 'floor');
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
    'tileHostCached',
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
  return table(['case', 'n', 'p50', 'p95', 'mean', 'p50 × floor'], rows, '---|---:|---:|---:|---:|---:');
}

/**
 * Where the host's p50 goes: a ladder of host requests, then the PostGIS steps measured
 * in-process; the last row is what is left (answer body, ETag, encoding differences, noise).
 */
function breakdownTable(o: DataPlaneOutcome): string {
  const floor = p50(o, 'floor');
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
    // Kept for DESCRIPTION_TTL_MS per layer and versions (ADR 0123): a sequential run pays it about
    // once in 5 s, so it is no part of a p50.
    share(0, of),
  ];
  const itemsParts = [
    ...common(itemsHost),
    share(p50(o, 'itemsRead') - p50(o, 'itemsSql'), itemsHost),
    share(p50(o, 'itemsSql'), itemsHost),
    share(itemsHost - tilesets - p50(o, 'itemsRead'), itemsHost),
  ];
  const tileParts = [
    ...common(tileHost),
    share(p50(o, 'tileRender') - p50(o, 'tileSql'), tileHost),
    share(p50(o, 'tileSql'), tileHost),
    share(tileHost - tilesets - p50(o, 'tileRender'), tileHost),
  ];
  const partNames = [
    'HTTPS + one DynamoDB read (the floor)',
    "gateway, authorizer's API-key read, handler edge, settings reads ‖ (landing − floor)",
    'public-id marker, layer, service (in the settings read) and the tilesets document (tilesets − landing)',
    `\`describeFeatureSource\` (${fixed(describe)} ms in-process): kept ${DESCRIPTION_TTL_MS / 1000} s per layer and versions (ADR 0123), in no p50`,
    'the read-only unit around the statement (BEGIN, setup, ROLLBACK; tiles: + encoding)',
    'the statement alone',
    'the rest: answer body, ETag, base64, noise (host − tilesets − read/render)',
  ];
  const breakdownRows = partNames.map((name, i) => [name, itemsParts[i] as string, tileParts[i] as string]);
  return table(
    ['part', `items page (${fixed(itemsHost)} ms)`, `z${TILE_ZOOM} tile (${fixed(tileHost)} ms)`],
    breakdownRows,
    '---|---:|---:',
  );
}

/** The DynamoDB calls and PostgreSQL statements of one items request and one tile request. */
function roundTripsTable(o: DataPlaneOutcome): string {
  return table(
    ['request', 'DynamoDB calls', 'PostgreSQL statements'],
    (['items', 'itemsAgain', 'tile'] as const).map((k) => [
      { items: 'items page, first', itemsAgain: 'items page, again', tile: `z${TILE_ZOOM} tile` }[k],
      `${o.roundTrips[k].dynamo.length}: ${o.roundTrips[k].dynamo.join(', ')}`,
      `${o.roundTrips[k].postgis.length}: ${o.roundTrips[k].postgis.map((q) => `\`${q.replaceAll('|', '\\|')}\``).join(', ')}`,
    ]),
    '---|---|---',
  );
}

/** Tiles/s, a row per level of requests in flight. */
function throughputTable(o: DataPlaneOutcome): string {
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
  return table(
    ['in flight', 'requests', 's', 'tiles/s', 'p50', 'p95', 'statuses', 'features/tile', 'KB/tile'],
    runRows,
    '---:|---:|---:|---:|---:|---:|---|---:|---:',
  );
}
