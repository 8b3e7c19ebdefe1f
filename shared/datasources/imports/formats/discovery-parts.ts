/**
 * A discovery in two parts read side by side (ADR 0156): the head reads the features from the top
 * until the one that ends exactly where the tail begins; the tail reads the rest in a thread of
 * its own; the two scans make the discovery a scan in order makes. GeoJSON, GeoJSONSeq and CSV
 * split. This side only picks where to split, and merges: both parts run in reader threads
 * (reader-thread.ts).
 */
import { open } from 'node:fs/promises';
import type { CsvGeometry, Discovery, ImportFormat } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { LayerScan, type ScanState } from './scan.ts';
import { layerNameOf } from './source.ts';

/** The formats whose discovery splits. */
export type SplitFormat = Extract<ImportFormat, 'geojson' | 'geojsonseq' | 'csv'>;

/** True for a format whose discovery splits. */
export const splits = (format: ImportFormat): format is SplitFormat =>
  format === 'geojson' || format === 'geojsonseq' || format === 'csv';

/** Which part of a file a discovery job reads. */
export type PartSpec =
  /** The features from the top up to the one whose bytes end at `to`. */
  | { to: number }
  /** The features after the one whose bytes end at `from`, to the end of the file. */
  | { from: number };

/** What a part read besides its scan: the format's own (GeoJSON's members, CSV's header and geometry). */
export type PartContext =
  | { format: 'geojson'; members: Record<string, unknown> }
  | { format: 'geojsonseq' }
  | { format: 'csv'; header: string[]; geometry: CsvGeometry | undefined };

/** What a discovery job of a part answers. */
export type DiscoveryPart =
  /** The head read the whole file: the split was no feature's end, or the file can't be split. */
  | { kind: 'whole'; discovery: Discovery }
  /**
   * The head stopped at the feature ending at `to`; `lines`: the line breaks before `to` (the tail
   * numbers its lines from there).
   */
  | ({ kind: 'head'; scan: ScanState; lines: number } & PartContext)
  /** The tail read to the end; its features' indexes counted from `first`. */
  | ({ kind: 'tail'; scan: ScanState; first: number } & PartContext);

/** The SRID a legacy `crs` member names (`EPSG:3857`, `urn:ogc:def:crs:EPSG::3857`, CRS84); undefined = unknown. */
export const sridOfCrs = (crs: unknown): number | undefined => {
  const name = (crs as { properties?: { name?: unknown } } | null)?.properties?.name;
  if (typeof name !== 'string') return undefined;
  if (/CRS:?84$/i.test(name)) return 4326;
  const match = /EPSG:(?:[^:]*:)?:?(\d+)$/i.exec(name);
  return match ? Number(match[1]) : undefined;
};

/** The discovery of a GeoJSON file from its scan and its top-level members (a scan in order or merged parts). */
export function geoJsonDiscovery(
  scan: LayerScan,
  members: Record<string, unknown>,
  sizeBytes: number,
): Discovery {
  if (scan.count === 0) {
    throw new ImportInputError('no_features', 'The GeoJSON file holds no features.');
  }
  const warnings: string[] = [];
  let srid: number | null = 4326;
  let checkRange = true;
  if (members.crs !== undefined && members.crs !== null) {
    const named = sridOfCrs(members.crs);
    srid = named ?? null;
    checkRange = srid === 4326;
    if (named === undefined) {
      warnings.push(
        `The legacy "crs" member names a CRS GeoPlane does not recognise (${JSON.stringify(members.crs)}); give source_srid in the import plan.`,
      );
    }
  }
  return {
    format: 'geojson',
    size_bytes: sizeBytes,
    layers: [scan.result(srid, warnings, { checkRange, written: true })],
    warnings,
  };
}

/** The discovery of a GeoJSONSeq file from its scan. */
export function geoJsonSeqDiscovery(scan: LayerScan, sizeBytes: number): Discovery {
  if (scan.count === 0) throw new ImportInputError('no_features', 'The file holds no features.');
  const warnings: string[] = [];
  return {
    format: 'geojsonseq',
    size_bytes: sizeBytes,
    layers: [scan.result(4326, warnings, { written: true })],
    warnings,
  };
}

/** How a CSV discovery names a row: by its line (its row number where the line is not known). */
export const csvPlace = (index: number, line?: number): string =>
  line === undefined ? `row ${index + 1}` : `line ${line}`;

/** How a GeoJSONSeq discovery names a record. */
export const seqPlace = (index: number, line?: number): string => `line ${line} (feature ${index})`;

/**
 * The discovery of a CSV file with a header from its scan: the header's fields no row showed
 * declared after the others, in its order.
 */
export function csvDiscovery(
  scan: LayerScan,
  header: string[],
  geometry: CsvGeometry | undefined,
  filename: string,
  sizeBytes: number,
): Discovery {
  for (const name of header) if (name !== geometry?.wkt) scan.fields.declare(name);
  const warnings: string[] = [];
  if (!geometry)
    warnings.push(`No geometry column found in ${filename}; it is loaded as a table without geometry.`);
  const srid = !geometry ? null : geometry.wkt ? (scan.inLonLatRange ? 4326 : null) : 4326;
  if (geometry?.wkt && srid === null) {
    warnings.push(
      `The WKT coordinates of ${filename} are not longitude/latitude; give source_srid in the import plan.`,
    );
  }
  const layer = scan.result(srid, warnings, { checkRange: !geometry?.wkt, written: !geometry?.wkt });
  return {
    format: 'csv',
    size_bytes: sizeBytes,
    layers: [
      {
        ...layer,
        geometry_type: geometry ? layer.geometry_type : null,
        ...(geometry ? { csv: geometry } : {}),
      },
    ],
    warnings,
  };
}

/**
 * The discovery of the file the head and the tail were read from: the tail's scan taken in after
 * the head's, then the format's own: GeoJSON's members the head's then the tail's (a member named
 * twice: the later one, as JSON.parse keeps it); CSV's header and geometry, which both parts read
 * from the file's head. Throws what the merged scan throws, and when the parts disagree; a caller
 * that must say which error a scan in order meets first reads the file in order instead.
 */
export function mergeParts(
  head: Extract<DiscoveryPart, { kind: 'head' }>,
  tail: Extract<DiscoveryPart, { kind: 'tail' }>,
  filename: string,
  sizeBytes: number,
  maxFields: number,
): Discovery {
  const where = head.format === 'csv' ? csvPlace : head.format === 'geojsonseq' ? seqPlace : undefined;
  const scan = new LayerScan(layerNameOf(filename), where, maxFields);
  scan.absorb(head.scan);
  scan.absorb(tail.scan, { first: tail.first, lines: head.lines });
  if (head.format === 'geojson' && tail.format === 'geojson') {
    return geoJsonDiscovery(scan, { ...head.members, ...tail.members }, sizeBytes);
  }
  if (head.format === 'geojsonseq' && tail.format === 'geojsonseq')
    return geoJsonSeqDiscovery(scan, sizeBytes);
  if (
    head.format === 'csv' &&
    tail.format === 'csv' &&
    JSON.stringify([head.header, head.geometry]) === JSON.stringify([tail.header, tail.geometry])
  ) {
    return csvDiscovery(scan, head.header, head.geometry, filename, sizeBytes);
  }
  throw new Error('The parts of the discovery disagree.');
}

/** How a discovery in parts reads the file: the two parts started at once, and the file in order. */
export interface PartReads {
  head: Promise<DiscoveryPart>;
  tail: Promise<DiscoveryPart>;
  /** Stops the tail (it is not needed). */
  stopTail: () => void;
  inOrder: () => Promise<Discovery>;
}

/**
 * The discovery from its two parts (ADR 0156): the head's error is the file's (it reads in order
 * up to the split); when the head read the whole file (the split was no feature's end) that is the
 * discovery; else the parts merged; when the tail failed, or the merge meets an error (which one a
 * scan in order meets first is not known), the file read in order. `merged`: the parts made it.
 */
export async function discoveryOfParts(
  reads: PartReads,
  filename: string,
  sizeBytes: number,
  maxFields: number,
): Promise<{ discovery: Discovery; merged: boolean }> {
  reads.tail.catch(() => undefined);
  let head: DiscoveryPart;
  try {
    head = await reads.head;
  } catch (error) {
    reads.stopTail();
    throw error;
  }
  if (head.kind === 'whole') {
    reads.stopTail();
    return { discovery: head.discovery, merged: false };
  }
  const tail = await reads.tail.catch(() => undefined);
  if (head.kind === 'head' && tail?.kind === 'tail') {
    try {
      return { discovery: mergeParts(head, tail, filename, sizeBytes, maxFields), merged: true };
    } catch {
      // Read in order below: it says which error comes first.
    }
  }
  return { discovery: await reads.inOrder(), merged: false };
}

/**
 * Files smaller than this are read in one part: a second thread's start and its own warm-up (each
 * thread compiles its code afresh) cost what the split saves up to ~16 MB of GeoJSON and ~8 MB of
 * CSV, whose rows take twice the time a byte (measured, ADR 0156).
 */
export const SPLIT_FROM_BYTES: Readonly<Record<SplitFormat, number>> = Object.freeze({
  geojson: 24 * 1024 ** 2,
  geojsonseq: 24 * 1024 ** 2,
  csv: 12 * 1024 ** 2,
});

/** The smallest file any format splits. */
export const SMALLEST_SPLIT = Math.min(...Object.values(SPLIT_FROM_BYTES));

/**
 * About what a reader reads while a second thread starts (its modules load: ~70 ms of a bundled
 * reader at ~60 MB/s): the head is given half of it more than the tail, so both end together.
 */
const START_BYTES = 4 * 1024 ** 2;

/** Bytes searched for a feature's end around the split. */
const WINDOW_BYTES = 256 * 1024;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Where in `window`'s first `length` bytes a feature of `format` first looks like it ends, or -1. */
function endIn(window: Buffer, length: number, format: SplitFormat): number {
  if (format === 'csv') {
    // A row ends past its line break (a break inside a quoted cell looks the same).
    const at = window.indexOf(0x0a);
    return at === -1 || at >= length ? -1 : at + 1;
  }
  if (format === 'geojsonseq') {
    // A record ends at its separator: an RS where the records start with one, else an LF.
    const rs = window.indexOf(0x1e);
    const at = rs !== -1 && rs < length ? rs : window.indexOf(0x0a);
    return at >= length ? -1 : at;
  }
  // An item of the features array: '}' then ',' then '{', white space between.
  for (let i = 0; i < length; i++) {
    if (window[i] !== 0x7d) continue;
    let j = i + 1;
    while (isSpace(window[j])) j++;
    if (window[j] !== 0x2c) continue;
    j++;
    while (isSpace(window[j])) j++;
    if (j < length && window[j] === 0x7b) return i + 1;
  }
  return -1;
}

/**
 * Where to split a file of `size` bytes: the first place past the middle where a feature looks
 * like it ends (GeoJSON: an item of the features array; GeoJSONSeq: a record's separator; CSV: a
 * line break); undefined when none is found near it. Only a guess: the head proves it (a feature
 * ends exactly there) or reads the whole file.
 */
export async function splitCandidate(
  path: string,
  size: number,
  format: SplitFormat = 'geojson',
): Promise<number | undefined> {
  const start = Math.min(Math.floor((size + START_BYTES) / 2), size - 1);
  const window = Buffer.alloc(Math.min(WINDOW_BYTES, size - start));
  const file = await open(path, 'r');
  try {
    const { bytesRead } = await file.read(window, 0, window.length, start);
    const at = endIn(window, bytesRead, format);
    return at === -1 ? undefined : start + at;
  } finally {
    await file.close();
  }
}
