/** Telling the format from the file's bytes (the name is only a hint for messages). */
import { open } from 'node:fs/promises';
import type { ImportFormat } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { type ImportLimits, limitsOf } from './limits.ts';
import { openZip } from './zip.ts';

/** Bytes read from the start of the file to sniff it (the first NDJSON line must fit). */
const HEAD_BYTES = 1024 * 1024;

/** GeoPackage application_id values: 'GPKG', 'GP10', 'GP11'. */
const GPKG_APPLICATION_IDS = new Set([0x47504b47, 0x47503130, 0x47503131]);

const unsupported = (filename: string, what: string) =>
  new ImportInputError(
    'unsupported_format',
    `${filename} looks like ${what}, which GeoPlane cannot import. Upload GeoJSON, newline-delimited GeoJSON, CSV, a zipped shapefile, a GeoPackage or a FlatGeobuf file.`,
  );

const startsWith = (head: Buffer, bytes: number[]) => bytes.every((b, i) => head[i] === b);

/** What a text that isn't data looks like (XML flavours, HTML), for the message. */
const describeMarkup = (text: string): string => {
  const start = text.slice(0, 4096).toLowerCase();
  if (start.includes('<ogrvrtdatasource')) {
    return 'an OGR virtual data source (.vrt), which only points at other files — upload the data file itself';
  }
  if (start.includes('<html') || start.includes('<!doctype html')) return 'an HTML page';
  if (start.includes('<kml')) return 'a KML document';
  if (start.includes('<gpx')) return 'a GPX document';
  if (start.includes('<svg')) return 'an SVG image';
  return 'an XML document';
};

const BINARY_MAGIC: [number[], string][] = [
  [[0x25, 0x50, 0x44, 0x46], 'a PDF document'],
  [[0x1f, 0x8b], 'a gzip archive'],
  [[0x52, 0x61, 0x72, 0x21], 'a RAR archive'],
  [[0x37, 0x7a, 0xbc, 0xaf], 'a 7-Zip archive'],
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
  [[0x49, 0x49, 0x2a, 0x00], 'a TIFF image'],
  [[0x4d, 0x4d, 0x00, 0x2a], 'a TIFF image'],
  [
    [0x00, 0x00, 0x27, 0x0a],
    'a bare .shp file (zip the .shp together with its .shx, .dbf, .prj and .cpg and upload the zip)',
  ],
];

const isWhitespace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** True when the first line is one complete JSON Feature and another non-blank line follows. */
const isNdjson = (text: string): boolean => {
  const newline = text.indexOf('\n');
  if (newline === -1) return false;
  if (text.slice(newline + 1).trim() === '') return false;
  try {
    const first = JSON.parse(text.slice(0, newline)) as { type?: unknown };
    return (
      first !== null &&
      typeof first === 'object' &&
      (first.type === 'Feature' || typeof first.type === 'string')
    );
  } catch {
    return false;
  }
};

/** The delimiter of a CSV header line (`,`, `;` or tab, the most frequent), undefined when none. */
export const detectDelimiter = (line: string): string | undefined => {
  let best: string | undefined;
  let bestCount = 0;
  for (const d of [',', ';', '\t']) {
    const count = line.split(d).length - 1;
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
};

/** Sniffs the format; throws ImportInputError('unsupported_format' | 'empty_file'). */
export async function sniffFormat(
  path: string,
  filename: string,
  limits?: Partial<ImportLimits>,
): Promise<ImportFormat> {
  const handle = await open(path, 'r');
  let head: Buffer;
  let size: number;
  try {
    size = (await handle.stat()).size;
    const buffer = Buffer.alloc(Math.min(HEAD_BYTES, size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  if (size === 0) throw new ImportInputError('empty_file', `${filename} is empty (0 bytes).`);

  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04]) || startsWith(head, [0x50, 0x4b, 0x05, 0x06])) {
    const zip = await openZip(path, limitsOf(limits));
    zip.close();
    const names = zip.entries.map((e) => e.fileName);
    if (names.some((n) => /\.shp$/i.test(n))) return 'shapefile';
    if (names.length === 0) throw new ImportInputError('empty_file', `${filename} is an empty zip.`);
    const listed = names.slice(0, 10).join(', ') + (names.length > 10 ? ', …' : '');
    throw unsupported(filename, `a zip without a shapefile (.shp) in it (it holds ${listed})`);
  }
  if (head.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') {
    const applicationId = head.length >= 72 ? head.readUInt32BE(68) : 0;
    if (GPKG_APPLICATION_IDS.has(applicationId)) return 'geopackage';
    throw unsupported(
      filename,
      'an SQLite database that is not a GeoPackage (its application_id is not GPKG)',
    );
  }
  if (startsWith(head, [0x66, 0x67, 0x62, 0x03])) return 'flatgeobuf';
  for (const [magic, what] of BINARY_MAGIC) if (startsWith(head, magic)) throw unsupported(filename, what);

  let start = startsWith(head, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  while (start < head.length && isWhitespace(head[start] as number)) start++;
  if (start >= head.length) {
    if (size <= head.length) throw new ImportInputError('empty_file', `${filename} holds only whitespace.`);
    throw unsupported(filename, 'a text file that starts with over 1 MiB of whitespace');
  }
  const first = head[start];
  if (first === 0x1e) return 'geojsonseq';
  const text = head.subarray(start).toString('utf8');
  if (first === 0x7b || first === 0x5b) return isNdjson(text) ? 'geojsonseq' : 'geojson';
  if (first === 0x3c) throw unsupported(filename, describeMarkup(text));
  if (head.includes(0)) throw unsupported(filename, 'a binary file of an unknown type');
  const newline = text.search(/\r?\n/);
  const firstLine = newline === -1 ? text : text.slice(0, newline);
  if (detectDelimiter(firstLine)) return 'csv';
  throw unsupported(filename, 'a text file without a delimiter (,;tab) in its first line, so not CSV');
}
