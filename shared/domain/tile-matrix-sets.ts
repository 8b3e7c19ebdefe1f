import { createHash } from 'node:crypto';
import {
  DependencyConflictError,
  InvalidInputError,
  NotFoundError,
  RuleViolationError,
  StateConflictError,
} from './errors.ts';
import { mapLimited } from './jobs.ts';
import { lastWriterWins } from './last-writer-wins.ts';
import type { Page, PageQuery } from './page.ts';
import { checkVersion } from './workspaces.ts';

/** One tile matrix of an OGC Two Dimensional Tile Matrix Set 2.0 document. */
export interface TileMatrix {
  id: string;
  title?: string;
  description?: string;
  scaleDenominator: number;
  cellSize: number;
  cornerOfOrigin?: 'topLeft' | 'bottomLeft';
  pointOfOrigin: [number, number];
  tileWidth: number;
  tileHeight: number;
  matrixWidth: number;
  matrixHeight: number;
}

/** An OGC Two Dimensional Tile Matrix Set 2.0 definition (the fields GeoPlane understands). */
export interface TileMatrixSetDefinition {
  id: string;
  title?: string;
  description?: string;
  keywords?: string[];
  uri?: string;
  crs: string | { uri: string };
  orderedAxes?: string[];
  wellKnownScaleSet?: string;
  boundingBox?: {
    crs?: string | { uri: string };
    lowerCorner: [number, number];
    upperCorner: [number, number];
    orderedAxes?: string[];
  };
  tileMatrices: TileMatrix[];
}

/** A tile matrix set as the API returns it. Built-ins have revision 0 and no timestamps. */
export interface TileMatrixSetRecord {
  id: string;
  built_in: boolean;
  definition: TileMatrixSetDefinition;
  revision: number;
  digest: string;
  created_at?: string;
  updated_at?: string;
}

/** A list item. */
export interface TileMatrixSetSummary {
  id: string;
  title?: string;
  uri?: string;
  crs: string;
  built_in: boolean;
}

/** Storage port of custom tile matrix sets. */
export interface TileMatrixSetRepository {
  find(id: string): Promise<TileMatrixSetRecord | undefined>;
  list(limit: number, cursor?: string): Promise<Page<TileMatrixSetRecord>>;
  /** Creates (`previous` undefined) or replaces conditioned on the previous revision; references are kept. */
  save(next: TileMatrixSetRecord, previous?: TileMatrixSetRecord): Promise<void>;
  /** Deletes conditioned on the revision and on no workspace referencing it: false when that condition failed. */
  delete(record: TileMatrixSetRecord): Promise<boolean>;
  /** The set's references as stored now (undefined when it is gone). */
  referencesOf(record: TileMatrixSetRecord): Promise<TileMatrixSetReferences | undefined>;
}

/** The references of a custom set as the store found them. */
export interface TileMatrixSetReferences {
  /** Workspaces whose tiles settings name the set (its `ref_count`). */
  count: number;
  /** Names of those workspaces (at most 25, sorted; none when `count` is 0). */
  workspaces: string[];
}

/** Why a conditioned delete of a custom set failed, from its references as read afterwards. */
export function tileMatrixSetDeleteRefusal(
  record: TileMatrixSetRecord,
  found: TileMatrixSetReferences | undefined,
): Error {
  if (!found) {
    return new NotFoundError('tile_matrix_set_not_found', `Tile matrix set '${record.id}' does not exist.`);
  }
  if (found.count > 0) {
    return new DependencyConflictError(
      'tile_matrix_set_referenced',
      `Tile matrix set '${record.id}' is referenced by the tiles settings of workspaces: ${found.workspaces.join(', ')}.`,
      { workspaces: found.workspaces },
    );
  }
  return new StateConflictError(
    'concurrent_modification',
    'The tile matrix set was changed by another request; retry.',
  );
}

const WEB_MERCATOR_EXTENT = 20037508.3427892;
const STANDARDIZED_PIXEL = 0.00028;

function webMercatorQuad(): TileMatrixSetDefinition {
  const tileMatrices: TileMatrix[] = [];
  for (let z = 0; z <= 24; z++) {
    const cellSize = (2 * WEB_MERCATOR_EXTENT) / 256 / 2 ** z;
    tileMatrices.push({
      id: String(z),
      scaleDenominator: cellSize / STANDARDIZED_PIXEL,
      cellSize,
      cornerOfOrigin: 'topLeft',
      pointOfOrigin: [-WEB_MERCATOR_EXTENT, WEB_MERCATOR_EXTENT],
      tileWidth: 256,
      tileHeight: 256,
      matrixWidth: 2 ** z,
      matrixHeight: 2 ** z,
    });
  }
  return {
    id: 'WebMercatorQuad',
    title: 'Google Maps Compatible for the World',
    uri: 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad',
    crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
    orderedAxes: ['E', 'N'],
    wellKnownScaleSet: 'http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible',
    boundingBox: {
      crs: 'http://www.opengis.net/def/crs/EPSG/0/3857',
      lowerCorner: [-WEB_MERCATOR_EXTENT, -WEB_MERCATOR_EXTENT],
      upperCorner: [WEB_MERCATOR_EXTENT, WEB_MERCATOR_EXTENT],
    },
    tileMatrices,
  };
}

function worldCrs84Quad(): TileMatrixSetDefinition {
  const metresPerDegree = (2 * Math.PI * 6378137) / 360;
  const tileMatrices: TileMatrix[] = [];
  for (let z = 0; z <= 17; z++) {
    const cellSize = 180 / 256 / 2 ** z;
    tileMatrices.push({
      id: String(z),
      scaleDenominator: (cellSize * metresPerDegree) / STANDARDIZED_PIXEL,
      cellSize,
      cornerOfOrigin: 'topLeft',
      pointOfOrigin: [-180, 90],
      tileWidth: 256,
      tileHeight: 256,
      matrixWidth: 2 * 2 ** z,
      matrixHeight: 2 ** z,
    });
  }
  return {
    id: 'WorldCRS84Quad',
    title: 'CRS84 for the World',
    uri: 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WorldCRS84Quad',
    crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84',
    orderedAxes: ['Lon', 'Lat'],
    wellKnownScaleSet: 'http://www.opengis.net/def/wkss/OGC/1.0/GoogleCRS84Quad',
    boundingBox: {
      crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84',
      lowerCorner: [-180, -90],
      upperCorner: [180, 90],
    },
    tileMatrices,
  };
}

/** Largest stored definition (its canonical JSON, UTF-8 bytes): one DynamoDB item with room to spare (ADR 0073). */
export const MAX_DEFINITION_BYTES = 256 * 1024;

/** Deepest nesting canonicalJson walks; a schema-valid definition nests 4 levels (ADR 0073). */
export const MAX_DEFINITION_DEPTH = 16;

/** Canonical JSON: object keys sorted, no whitespace; the digest is computed over it. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value && typeof value === 'object' && depth >= MAX_DEFINITION_DEPTH) {
    throw new InvalidInputError(
      'json_too_deep',
      `The definition nests deeper than ${MAX_DEFINITION_DEPTH} levels.`,
    );
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v, depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 hex of canonical JSON text. */
function digestOfText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** SHA-256 hex of the canonical JSON of a definition. */
export function digestOf(definition: TileMatrixSetDefinition): string {
  return digestOfText(canonicalJson(definition));
}

function builtIn(definition: TileMatrixSetDefinition): TileMatrixSetRecord {
  return { id: definition.id, built_in: true, definition, revision: 0, digest: digestOf(definition) };
}

/** The built-in sets' ids, in listing order. */
const BUILT_IN_IDS: readonly string[] = ['WebMercatorQuad', 'WorldCRS84Quad'];

let builtIns: readonly TileMatrixSetRecord[] | undefined;

/**
 * The built-in sets, in listing order; they can be neither replaced nor deleted. Built on first
 * use: their matrices and digests took ~2.4 ms of every cold start of a route that imports this
 * module and never lists a set.
 */
export function builtInTileMatrixSets(): readonly TileMatrixSetRecord[] {
  builtIns ??= [builtIn(webMercatorQuad()), builtIn(worldCrs84Quad())];
  return builtIns;
}

/** True when `id` names a built-in set. */
export function isBuiltInTileMatrixSet(id: string): boolean {
  return BUILT_IN_IDS.includes(id);
}

/** The CRS URI of a definition's `crs` member. */
export function crsUri(crs: TileMatrixSetDefinition['crs']): string {
  return typeof crs === 'string' ? crs : crs.uri;
}

const crsPatterns = [
  /^https?:\/\/www\.opengis\.net\/def\/crs\/EPSG\/0\/[1-9][0-9]{0,5}$/,
  /^https?:\/\/www\.opengis\.net\/def\/crs\/OGC\/(1\.3|0)\/CRS84h?$/,
  /^urn:ogc:def:crs:EPSG::[1-9][0-9]{0,5}$/,
  /^urn:ogc:def:crs:OGC:1\.3:CRS84$/,
];

/** Checks what a schema can't: the id matches the path, a known CRS, unique canonical matrix ids. */
export function validateDefinition(pathId: string, def: TileMatrixSetDefinition): void {
  if (def.id !== pathId) {
    throw new InvalidInputError(
      'id_mismatch',
      `The definition's id '${def.id}' differs from the path ('${pathId}').`,
    );
  }
  const crs = crsUri(def.crs);
  if (!crsPatterns.some((p) => p.test(crs))) {
    throw new RuleViolationError(
      'unknown_crs',
      `CRS '${crs}' is not an OGC CRS URI (http://www.opengis.net/def/crs/EPSG/0/<code> or OGC/1.3/CRS84).`,
    );
  }
  const ids = new Set<string>();
  for (const [i, m] of def.tileMatrices.entries()) {
    if (ids.has(m.id)) {
      throw new RuleViolationError(
        'duplicate_tile_matrix',
        `tileMatrices[${i}]: id '${m.id}' is used twice.`,
      );
    }
    ids.add(m.id);
  }
  if (def.boundingBox) {
    const { lowerCorner: lo, upperCorner: hi } = def.boundingBox;
    if (!(lo[0] < hi[0] && lo[1] < hi[1])) {
      throw new RuleViolationError(
        'invalid_bounding_box',
        'boundingBox: lowerCorner must be below and left of upperCorner.',
      );
    }
  }
}

/** Ports of the tile matrix set use cases. */
export interface TileMatrixSetDeps {
  tileMatrixSets: TileMatrixSetRepository;
}

/** What a use case on one set is asked: the set the path names. */
export interface TileMatrixSetCommand {
  tileMatrixSet: string;
  ifMatch?: string;
}

/** A set by id: a built-in or a stored custom set (404 otherwise). */
export async function requireTileMatrixSet(
  repo: TileMatrixSetRepository,
  id: string,
): Promise<TileMatrixSetRecord> {
  const builtInSet = builtInTileMatrixSets().find((s) => s.id === id);
  if (builtInSet) return builtInSet;
  const found = await repo.find(id);
  if (!found) throw new NotFoundError('tile_matrix_set_not_found', `Tile matrix set '${id}' does not exist.`);
  return found;
}

/** Reads a set (getTileMatrixSet): a built-in or a stored custom one, 404 otherwise. */
export function getTileMatrixSet(
  { tileMatrixSets }: TileMatrixSetDeps,
  { tileMatrixSet }: Pick<TileMatrixSetCommand, 'tileMatrixSet'>,
): Promise<TileMatrixSetRecord> {
  return requireTileMatrixSet(tileMatrixSets, tileMatrixSet);
}

function refuseBuiltIn(id: string): void {
  if (isBuiltInTileMatrixSet(id)) {
    throw new StateConflictError(
      'built_in_tile_matrix_set',
      `'${id}' is a built-in tile matrix set and can't be changed or deleted.`,
    );
  }
}

/** Creates or replaces a custom set; `created` tells which. Honours If-Match on the revision. */
export async function putTileMatrixSet(
  { tileMatrixSets: repo }: TileMatrixSetDeps,
  {
    tileMatrixSet: id,
    body: definition,
    ifMatch,
    now = new Date(),
  }: TileMatrixSetCommand & { body: TileMatrixSetDefinition; now?: Date },
): Promise<{ record: TileMatrixSetRecord; created: boolean }> {
  refuseBuiltIn(id);
  validateDefinition(id, definition);
  const canonical = canonicalJson(definition);
  const bytes = Buffer.byteLength(canonical, 'utf8');
  if (bytes > MAX_DEFINITION_BYTES) {
    throw new InvalidInputError(
      'definition_too_large',
      `The definition is ${bytes} bytes as canonical JSON; the limit is ${MAX_DEFINITION_BYTES}.`,
    );
  }
  // Without If-Match a lost race (a concurrent create or replace) is applied again (ADR 0075).
  return lastWriterWins(async () => {
    const previous = await repo.find(id);
    checkVersion({ version: previous?.revision ?? 0 }, ifMatch);
    const at = now.toISOString();
    const record: TileMatrixSetRecord = {
      id,
      built_in: false,
      definition: JSON.parse(canonical) as TileMatrixSetDefinition,
      revision: (previous?.revision ?? 0) + 1,
      digest: digestOfText(canonical),
      created_at: previous?.created_at ?? at,
      updated_at: at,
    };
    await repo.save(record, previous);
    return { record, created: !previous };
  });
}

/** Deletes a custom set: built-ins 409, unknown 404, referenced by tiles settings 409. */
export async function deleteTileMatrixSet(
  { tileMatrixSets: repo }: TileMatrixSetDeps,
  { tileMatrixSet: id, ifMatch }: TileMatrixSetCommand,
): Promise<void> {
  refuseBuiltIn(id);
  await lastWriterWins(async () => {
    const current = await requireTileMatrixSet(repo, id);
    checkVersion({ version: current.revision }, ifMatch);
    if (!(await repo.delete(current)))
      throw tileMatrixSetDeleteRefusal(current, await repo.referencesOf(current));
  });
}

/**
 * The sets a workspace's Tiles settings name, in their order: built-ins from memory, custom ones
 * from the store (a GetItem each, together; the settings name at most 16). A custom set the store no longer
 * has is left out (its reference count keeps that from happening).
 */
export async function tileMatrixSetsNamed(
  repo: Pick<TileMatrixSetRepository, 'find'>,
  ids: readonly string[],
): Promise<TileMatrixSetRecord[]> {
  // The custom ones are read together (at most 16), in the settings' order.
  const records = await mapLimited(
    ids,
    16,
    async (id) => builtInTileMatrixSets().find((s) => s.id === id) ?? repo.find(id),
  );
  return records.filter((r): r is TileMatrixSetRecord => r !== undefined);
}

/** The list item of a set. */
export function summaryOf(r: TileMatrixSetRecord): TileMatrixSetSummary {
  return {
    id: r.id,
    ...(r.definition.title ? { title: r.definition.title } : {}),
    ...(r.definition.uri ? { uri: r.definition.uri } : {}),
    crs: crsUri(r.definition.crs),
    built_in: r.built_in,
  };
}

/** A page of sets: the built-ins lead the first page, followed by up to `limit` custom sets. */
export async function listTileMatrixSets(
  { tileMatrixSets: repo }: TileMatrixSetDeps,
  { limit, cursor }: PageQuery,
): Promise<{ tile_matrix_sets: TileMatrixSetSummary[]; next_cursor?: string }> {
  const page = await repo.list(limit, cursor);
  const items = [...(cursor === undefined ? builtInTileMatrixSets() : []), ...page.items].map(summaryOf);
  return { tile_matrix_sets: items, ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}) };
}
