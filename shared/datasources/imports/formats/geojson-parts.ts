/**
 * A GeoJSON discovery in two parts read side by side (ADR 0156): the head reads the features from
 * the top until the item that ends exactly where the tail begins; the tail reads the rest in a
 * thread of its own; the two scans make the discovery a scan in order makes. This side only picks
 * where to split, and merges: both parts run in reader threads (reader-thread.ts).
 */
import { open } from 'node:fs/promises';
import type { Discovery } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { LayerScan, type ScanState } from './scan.ts';
import { layerNameOf } from './source.ts';

/** Which part of a GeoJSON file a discovery job reads. */
export type PartSpec =
  /** The features from the top up to the item whose bytes end at `to`. */
  | { to: number }
  /** The features after the item whose bytes end at `from`, to the end of the file. */
  | { from: number };

/** What a discovery job of a part answers. */
export type GeoJsonPart =
  /** The head read the whole file: the split was no item's end, or the file holds no array of items. */
  | { kind: 'whole'; discovery: Discovery }
  /** The head stopped at the item ending at `to`; the top-level members read before it. */
  | { kind: 'head'; scan: ScanState; members: Record<string, unknown> }
  /** The tail read to the end; the top-level members after the features. */
  | { kind: 'tail'; scan: ScanState; members: Record<string, unknown> };

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

/**
 * The discovery of the file the head and the tail were read from: the tail's scan taken in after
 * the head's, its members after the head's (a member named twice: the later one, as JSON.parse
 * keeps it). Throws what the merged scan throws; a caller that must say which error a scan in
 * order meets first reads the file in order instead.
 */
export function mergeParts(
  head: Extract<GeoJsonPart, { kind: 'head' }>,
  tail: Extract<GeoJsonPart, { kind: 'tail' }>,
  filename: string,
  sizeBytes: number,
  maxFields: number,
): Discovery {
  const scan = new LayerScan(layerNameOf(filename), undefined, maxFields);
  scan.absorb(head.scan);
  scan.absorb(tail.scan);
  return geoJsonDiscovery(scan, { ...head.members, ...tail.members }, sizeBytes);
}

/**
 * Files smaller than this are read in one part: a second thread's start and its own warm-up (each
 * thread compiles its code afresh) cost what the split saves up to ~16 MB (measured, ADR 0156).
 */
export const SPLIT_FROM_BYTES = 24 * 1024 ** 2;

/**
 * About what a reader reads while a second thread starts (its modules load: ~70 ms of a bundled
 * reader at ~60 MB/s): the head is given half of it more than the tail, so both end together.
 */
const START_BYTES = 4 * 1024 ** 2;

/** Bytes searched for an item boundary around the split. */
const WINDOW_BYTES = 256 * 1024;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Where to split a GeoJSON file of `size` bytes: the end of what looks like an item of the
 * features array (a '}' then ',' then '{', white space between) near the middle; undefined when
 * none is found. Only a guess: the head proves it (an item of the array ends exactly there) or
 * reads the whole file.
 */
export async function splitCandidate(path: string, size: number): Promise<number | undefined> {
  const start = Math.min(Math.floor((size + START_BYTES) / 2), size - 1);
  const window = Buffer.alloc(Math.min(WINDOW_BYTES, size - start));
  const file = await open(path, 'r');
  try {
    const { bytesRead } = await file.read(window, 0, window.length, start);
    for (let i = 0; i < bytesRead; i++) {
      if (window[i] !== 0x7d) continue;
      let j = i + 1;
      while (isSpace(window[j])) j++;
      if (window[j] !== 0x2c) continue;
      j++;
      while (isSpace(window[j])) j++;
      if (j < bytesRead && window[j] === 0x7b) return start + i + 1;
    }
    return undefined;
  } finally {
    await file.close();
  }
}
