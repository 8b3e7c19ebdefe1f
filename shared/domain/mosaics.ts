import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { InvalidInputError, NotFoundError, RuleViolationError, UnavailableError } from './errors.ts';
import { mapLimited } from './jobs.ts';
import type { Page } from './page.ts';
import type { MosaicService, Service } from './services.ts';
import { checkVersion, IMMUTABLE_VERSION } from './workspaces.ts';

/**
 * Granules one harvest may add: they are written with the generation flip in ONE DynamoDB
 * transaction (100 items at most, minus the mosaic and service items; ADR 0060).
 */
export const MAX_GRANULES_PER_HARVEST = 90;
/** Rounds a harvest or a removal retries after losing the generation race to another writer. */
const MAX_COMMIT_ATTEMPTS = 25;
/** Pattern of a harvest without `uris` or `pattern`. */
export const DEFAULT_HARVEST_PATTERN = '**/*.{tif,tiff,TIF,TIFF}';

/** What a GeoTIFF/COG header says about a granule. */
export interface GranuleHeader {
  crs: string;
  srid?: number;
  /** minx, miny, maxx, maxy in the native CRS. */
  bbox: [number, number, number, number];
  width: number;
  height: number;
  band_count: number;
  data_type: string;
  resolution_x: number;
  resolution_y: number;
}

/** One source of a mosaic; its id never changes across generations. */
export interface Granule extends GranuleHeader {
  id: string;
  workspace_id: string;
  service_id: string;
  source_uri: string;
  time?: string;
  elevation?: number;
  /** First generation that contains it. */
  added_generation: number;
  /** First generation that no longer contains it. */
  removed_generation?: number;
  created_at: string;
}

/** The mosaic's committed generation; `{0, 0}` before the first harvest. */
export interface MosaicState {
  generation: number;
  granule_count: number;
  updated_at?: string;
}

/** Filters of listMosaicGranules: bbox intersection, time within [start, end] (inclusive). */
export interface GranuleFilter {
  bbox?: [number, number, number, number];
  time?: { start?: string; end?: string };
}

/**
 * Port: the raster sources under a mosaic's root (a local directory, or `s3://bucket/prefix`).
 * Paths are relative to the root, `/`-separated.
 */
export interface RasterSources {
  /** Why the root can't be read, or undefined when it can. */
  checkRoot(rootUri: string): Promise<string | undefined>;
  /** Root-relative paths of the files under the root matching `pattern`, sorted. */
  list(rootUri: string, pattern: RegExp): Promise<string[]>;
  /** Reads one header; a missing, unreadable or non-georeferenced file is a RuleViolationError (422). */
  readHeader(rootUri: string, relativePath: string): Promise<GranuleHeader>;
}

/** Port: mosaic persistence (generations, granules with their lifetimes). */
export interface MosaicRepository {
  state(workspaceId: string, serviceId: string): Promise<MosaicState>;
  findGranule(workspaceId: string, serviceId: string, granuleId: string): Promise<Granule | undefined>;
  /** A page of granules active at `generation` that match the filter (pages may come back short). */
  listGranules(
    workspaceId: string,
    serviceId: string,
    generation: number,
    filter: GranuleFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Granule>>;
  /** The source URIs of every granule active at `generation`. */
  activeSources(workspaceId: string, serviceId: string, generation: number): Promise<Set<string>>;
  /** Writes the granules as generation base+1 in one transaction; false when `base` is no longer current. */
  commitHarvest(service: Service, base: MosaicState, granules: Granule[], now: string): Promise<boolean>;
  /**
   * Commits generation base+1 without the granule in one transaction conditioned on `base`:
   * `retry` when another writer moved the generation, `gone` when the granule was already removed.
   */
  commitRemoval(
    service: Service,
    base: MosaicState,
    granuleId: string,
    now: string,
  ): Promise<'ok' | 'retry' | 'gone'>;
}

/** True when the granule belongs to generation `g`. */
export function isActive(g: Pick<Granule, 'added_generation' | 'removed_generation'>, generation: number) {
  return (
    g.added_generation <= generation &&
    (g.removed_generation === undefined || g.removed_generation > generation)
  );
}

/** Refuses mosaic operations on other services (422). */
export function requireMosaic(service: Service): MosaicService {
  if (service.type !== 'raster_mosaic') {
    throw new RuleViolationError(
      'not_a_mosaic',
      `Service '${service.name}' is of type '${service.type}', not a raster_mosaic.`,
    );
  }
  return service;
}

/** The root without a `file://` scheme or a trailing slash. */
export function normaliseRoot(rootUri: string): string {
  const root = rootUri.startsWith('file://') ? rootUri.slice('file://'.length) : rootUri;
  return root.length > 1 ? root.replace(/\/+$/, '') : root;
}

/** Reason of a local mosaic root outside the configured mosaic directory, or spelled ambiguously (ADR 0074). */
export const ROOT_NOT_ALLOWED = 'root_not_allowed';

/**
 * The absolute directory a local root_uri (`/dir` or `file:///dir`) names, or why it is refused:
 * only plain absolute paths pass — no `.`/`..` segments, percent-encoding, backslashes or control
 * characters, no file URL with a host — so the path means what it shows. Whether it lies under the
 * configured mosaic directory is checked where the files are, on the resolved path (ADR 0074).
 */
export function localRootPath(rootUri: string): { path: string } | { refused: string } {
  const path = normaliseRoot(rootUri);
  if (!path.startsWith('/')) return { refused: 'a local root_uri must be an absolute path or file:///path' };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[%\\\x00-\x1f\x7f]/.test(path)) {
    return { refused: 'percent-encoding, backslashes and control characters are not accepted' };
  }
  if (path.split('/').some((s) => s === '.' || s === '..')) {
    return { refused: '"." and ".." segments are not accepted' };
  }
  return { path: posix.normalize(path) };
}

const outside = (uri: string) =>
  new InvalidInputError('source_outside_root', `Source '${uri}' is not inside the mosaic's root_uri.`);

/** The root-relative path of a source given relative to the root or as a URI inside it (400 otherwise). */
export function relativeSource(rootUri: string, uri: string): string {
  if (uri.length === 0 || uri.includes('\0') || uri.includes('\\')) throw outside(uri);
  const root = normaliseRoot(rootUri);
  let rest = uri;
  const absolute = uri.startsWith('/') || uri.startsWith('file://') || /^[a-z][a-z0-9+.-]*:\/\//i.test(uri);
  if (absolute) {
    const given = normaliseRoot(uri);
    if (!given.startsWith(`${root}/`)) throw outside(uri);
    rest = given.slice(root.length + 1);
  }
  const segments = rest.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.length === 0 || segments.includes('..')) throw outside(uri);
  return posix.join(...segments);
}

/** The stored `source_uri` of a root-relative path. */
export function sourceUri(rootUri: string, relative: string): string {
  return `${normaliseRoot(rootUri)}/${relative}`;
}

const escapeRe = (s: string) => s.replace(/[.+^$()|[\]\\]/g, '\\$&');

/** A glob (`*`, `**`, `?`, `{a,b}`) over root-relative paths as a RegExp; `..` and absolute globs → 400. */
export function globToRegExp(glob: string): RegExp {
  if (glob.startsWith('/') || glob.split('/').includes('..')) {
    throw new InvalidInputError(
      'invalid_pattern',
      'pattern must be relative to root_uri and must not contain "..".',
    );
  }
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        re += '(?:[^/]+/)*';
      } else re += '.*';
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end < 0) throw new InvalidInputError('invalid_pattern', 'pattern has an unclosed "{".');
      re += `(?:${glob
        .slice(i + 1, end)
        .split(',')
        .map((alt) => escapeRe(alt).replaceAll('*', '[^/]*').replaceAll('?', '[^/]'))
        .join('|')})`;
      i = end;
    } else re += escapeRe(c);
  }
  return new RegExp(`^${re}$`);
}

/** One entry of a harvest's `uris`: a path (relative or inside the root), optionally with its dimensions. */
export type HarvestSource = string | { uri: string; time?: string; elevation?: number };

export interface HarvestInput {
  uris?: HarvestSource[];
  pattern?: string;
}

export interface HarvestResult {
  generation: number;
  granule_count: number;
  added: Granule[];
  /** Sources already in the active generation (left as they are, ids kept). */
  skipped: string[];
}

/** Retries exhausted: a transient condition like a throttled table (503 with Retry-After), not a conflict of the caller's. */
const lostRace = () =>
  new UnavailableError('mosaic_busy', 'The mosaic kept changing under concurrent writers; retry shortly.');

/**
 * Reads the headers of the sources and commits the new ones as generation N+1 in one transaction
 * conditioned on N. Any unreadable source fails the whole harvest (422) and nothing changes.
 */
export async function harvestGranules(
  { mosaics: repo, sources }: { mosaics: MosaicRepository; sources: RasterSources },
  { service, body: input, now = new Date() }: { service: Service; body: HarvestInput; now?: Date },
): Promise<HarvestResult> {
  const mosaic = requireMosaic(service);
  const root = mosaic.connection.root_uri;
  if (input.uris && input.pattern !== undefined) {
    throw new InvalidInputError('uris_and_pattern', 'Send either uris or pattern, not both.');
  }
  const dims = new Map<string, { time?: string; elevation?: number }>();
  let relatives: string[];
  if (input.uris) {
    relatives = [];
    for (const s of input.uris) {
      const entry = typeof s === 'string' ? { uri: s } : s;
      const rel = relativeSource(root, entry.uri);
      if (!dims.has(rel)) relatives.push(rel);
      dims.set(rel, { time: entry.time, elevation: entry.elevation });
    }
  } else {
    relatives = await sources.list(root, globToRegExp(input.pattern ?? DEFAULT_HARVEST_PATTERN));
    if (relatives.length === 0) {
      throw new RuleViolationError('no_sources', 'No file under root_uri matches the pattern.');
    }
  }
  const headers = new Map<string, GranuleHeader>();
  for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt++) {
    const base = await repo.state(mosaic.workspace_id, mosaic.id);
    const existing = await repo.activeSources(mosaic.workspace_id, mosaic.id, base.generation);
    const fresh = relatives.filter((r) => !existing.has(sourceUri(root, r)));
    const skipped = relatives.filter((r) => existing.has(sourceUri(root, r))).map((r) => sourceUri(root, r));
    if (fresh.length > MAX_GRANULES_PER_HARVEST) {
      throw new InvalidInputError(
        'too_many_sources',
        `A harvest adds at most ${MAX_GRANULES_PER_HARVEST} granules (${fresh.length} new sources); narrow the pattern.`,
      );
    }
    if (fresh.length === 0) {
      return { generation: base.generation, granule_count: base.granule_count, added: [], skipped };
    }
    const unread = fresh.filter((r) => !headers.has(r));
    const read = await mapLimited(unread, 8, (r) => sources.readHeader(root, r));
    for (const [i, r] of unread.entries()) headers.set(r, read[i] as GranuleHeader);
    const ts = now.toISOString();
    const granules: Granule[] = fresh.map((r) => {
      const d = dims.get(r) ?? {};
      return {
        id: randomUUID(),
        workspace_id: mosaic.workspace_id,
        service_id: mosaic.id,
        source_uri: sourceUri(root, r),
        ...(headers.get(r) as GranuleHeader),
        ...(d.time !== undefined ? { time: new Date(d.time).toISOString() } : {}),
        ...(d.elevation !== undefined ? { elevation: d.elevation } : {}),
        added_generation: base.generation + 1,
        created_at: ts,
      };
    });
    if (await repo.commitHarvest(mosaic, base, granules, ts)) {
      return {
        generation: base.generation + 1,
        granule_count: base.granule_count + granules.length,
        added: granules,
        skipped,
      };
    }
  }
  throw lostRace();
}

const granuleNotFound = (id: string) =>
  new NotFoundError('granule_not_found', `Granule '${id}' is not in the mosaic's current generation.`);

/** A granule of the active generation (getMosaicGranule; 404 otherwise). */
export async function requireGranule(
  { mosaics: repo }: { mosaics: MosaicRepository },
  { service, granule: granuleId }: GranuleCommand,
) {
  const mosaic = requireMosaic(service);
  const { state, granule } = await stateAndGranule(repo, mosaic, granuleId.toLowerCase());
  if (!granule || !isActive(granule, state.generation)) throw granuleNotFound(granuleId);
  return granule;
}

/**
 * The mosaic's committed generation and a granule, read together (ADR 0154): neither read needs
 * the other. Two strongly consistent reads are no snapshot, read in turn or together: what is
 * decided from them commits conditioned on the generation read (ADR 0060).
 */
async function stateAndGranule(repo: MosaicRepository, mosaic: Service, granuleId: string) {
  const [state, granule] = await Promise.all([
    repo.state(mosaic.workspace_id, mosaic.id),
    repo.findGranule(mosaic.workspace_id, mosaic.id, granuleId),
  ]);
  return { state, granule };
}

/** What a use case on one granule is asked: the mosaic the request resolved and the `{granule}` of the path. */
export interface GranuleCommand {
  service: Service;
  granule: string;
  ifMatch?: string;
}

/**
 * Removes a granule by committing generation N+1 in one transaction conditioned on N (spec
 * 4.17). The last granule stays (422); a lost race re-reads N and tries again, a bounded number of times.
 */
export async function removeGranule(
  { mosaics: repo }: { mosaics: MosaicRepository },
  { service, granule: granuleId, ifMatch, now = new Date() }: GranuleCommand & { now?: Date },
): Promise<void> {
  const mosaic = requireMosaic(service);
  const id = granuleId.toLowerCase();
  for (let attempt = 0; attempt < MAX_COMMIT_ATTEMPTS; attempt++) {
    const { state, granule } = await stateAndGranule(repo, mosaic, id);
    if (!granule || !isActive(granule, state.generation)) throw granuleNotFound(granuleId);
    // A granule record never changes while active: its ETag is "1" (ADR 0087).
    checkVersion({ version: IMMUTABLE_VERSION }, ifMatch);
    if (state.granule_count <= 1) {
      throw new RuleViolationError(
        'last_granule',
        'The mosaic must retain at least one granule; this is the last one.',
      );
    }
    const outcome = await repo.commitRemoval(mosaic, state, id, now.toISOString());
    if (outcome === 'ok') return;
    if (outcome === 'gone') throw granuleNotFound(granuleId);
  }
  throw lostRace();
}

/** The API view of a granule: its lifetime bookkeeping stays internal. */
export function presentGranule(g: Granule) {
  const { added_generation: _a, removed_generation: _r, ...rest } = g;
  return { ...rest, version: IMMUTABLE_VERSION };
}

const badFilter = (detail: string) => new InvalidInputError('invalid_filter', detail);

function instant(value: string, what: string): string {
  const t = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(t))
    throw badFilter(`${what} must be an RFC 3339 date-time.`);
  return new Date(t).toISOString();
}

/**
 * The filters of listMosaicGranules: `bbox=minx,miny,maxx,maxy` (min < max) and `time=<instant>` or
 * `time=<start>/<end>` (either side may be `..`); anything else is a 400.
 */
export function parseGranuleFilter(query: { bbox?: string; time?: string }): GranuleFilter {
  const filter: GranuleFilter = {};
  if (query.bbox !== undefined) {
    const parts = query.bbox.split(',').map((p) => (p.trim() === '' ? Number.NaN : Number(p)));
    const [minx, miny, maxx, maxy] = parts as [number, number, number, number];
    if (parts.length !== 4 || parts.some((n) => !Number.isFinite(n)) || minx >= maxx || miny >= maxy) {
      throw badFilter('bbox must be four numbers minx,miny,maxx,maxy with min < max.');
    }
    filter.bbox = [minx, miny, maxx, maxy];
  }
  if (query.time !== undefined) {
    const [a = '', b, ...more] = query.time.split('/');
    if (more.length > 0) throw badFilter('time must be an instant or start/end.');
    if (b === undefined) {
      const t = instant(a, 'time');
      filter.time = { start: t, end: t };
    } else {
      const start = a === '..' || a === '' ? undefined : instant(a, 'time start');
      const end = b === '..' || b === '' ? undefined : instant(b, 'time end');
      if (start && end && start > end) throw badFilter('time start must not be after its end.');
      filter.time = { ...(start ? { start } : {}), ...(end ? { end } : {}) };
    }
  }
  return filter;
}

/** The API view of a mosaic: its root and committed generation. */
export function presentMosaic(mosaic: MosaicService, state: MosaicState) {
  return {
    workspace_id: mosaic.workspace_id,
    service_id: mosaic.id,
    root_uri: mosaic.connection.root_uri,
    generation: state.generation,
    granule_count: state.granule_count,
    ...(state.updated_at ? { updated_at: state.updated_at } : {}),
  };
}

/**
 * One page of a mosaic's granules (listMosaicGranules): one generation for the whole page — read
 * first, then only granules alive in it (ADR 0060); the filter as the query gave it (400 when bad).
 */
export async function listGranules(
  { mosaics }: { mosaics: MosaicRepository },
  {
    service,
    query,
  }: { service: Service; query: { bbox?: string; time?: string; limit: number; cursor?: string } },
): Promise<{ generation: number; page: Page<Granule> }> {
  const mosaic = requireMosaic(service);
  const filter = parseGranuleFilter(query);
  const { generation } = await mosaics.state(mosaic.workspace_id, mosaic.id);
  const page = await mosaics.listGranules(
    mosaic.workspace_id,
    mosaic.id,
    generation,
    filter,
    query.limit,
    query.cursor,
  );
  return { generation, page };
}

/** getMosaic: a raster mosaic service (422 for another type) with its current generation. */
export async function getMosaic(
  { mosaics }: { mosaics: MosaicRepository },
  { service }: { service: Service },
): Promise<ReturnType<typeof presentMosaic>> {
  const mosaic = requireMosaic(service);
  return presentMosaic(mosaic, await mosaics.state(mosaic.workspace_id, mosaic.id));
}
