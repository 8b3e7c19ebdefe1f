/**
 * The data-plane section's plan and targets (the figures its setup, the measurement and the report
 * use) and the shapes of what it measures: what it runs against, its cases, the throughput runs,
 * the round trips of one request, the section's outcome.
 */

// ---- plan ---------------------------------------------------------------------------------------
export const TABLE = 'bench_points';
export const POINTS = 30_000;
/** Where the points lie (degrees): ~0.3° × 0.2°, about 13 × 14 tiles of z14. */
export const EXTENT = { west: 2.2, south: 48.8, east: 2.5, north: 49.0 };
/** The measured tile: the z14 tile of this point (the middle of the data). */
export const TILE_POINT = { lon: 2.35, lat: 48.9 };
export const TILE_ZOOM = 14;
/** The zoom of the throughput run: every tile of the data at it. */
export const THROUGHPUT_ZOOM = 13;
export const IN_FLIGHT = 10;
export const ITEMS_LIMIT = 100;
/**
 * Sequential rounds, the case order rotating per round as in section 1; many short rounds, so a
 * change of the machine's load falls on every case alike and the time budget cuts finely.
 */
export const ROUNDS = 20;
/** Requests per round of the cases with a target (20 × 10 = 200) and of the breakdown (20 × 3 = 60). */
export const PER_ROUND = 10;
export const PER_ROUND_BREAKDOWN = 3;
export const WARMUP = 10;
export const WARMUP_BREAKDOWN = 5;
/**
 * In-process cases warm up longer: the host's code has answered many requests by then, and this
 * process's copy of the same functions would otherwise be measured less optimised.
 */
export const WARMUP_IN_PROCESS = 30;
/**
 * No new round starts after this much measuring, warm-up included: the counts above are an upper
 * bound, the budget keeps the section near a minute (setup ~5 s, throughput ~10 s) on a busy machine.
 */
export const ROUNDS_BUDGET_MS = 33_000;
/** The throughput run's length per level (after a warm-up of its own). */
export const THROUGHPUT_MS: Record<number, number> = { 1: 2_500, [IN_FLIGHT]: 5_000 };
export const THROUGHPUT_WARMUP_MS = 1_000;

// ---- targets ------------------------------------------------------------------------------------
export const ITEMS_OVER_SQL_MAX = 1.2;
export const TILE_OVER_RENDER_MAX = 1.2;
export const NOT_MODIFIED_OVER_FLOOR_MAX = 1.1;

// ---- types --------------------------------------------------------------------------------------
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

export type CaseId =
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
  | 'tileHostCached'
  | 'tileNotModified';

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
  roundTrips: { items: RoundTrips; itemsAgain: RoundTrips; tile: RoundTrips };
  setupMs: number;
  measureMs: number;
  throughputMs: number;
}
