/**
 * CSV with a header row, parsed by csv-parse from a stream: geometry from lat/lon columns or a WKT
 * column (detected from the header or the first row, or given), attributes as text cells.
 */
import { open } from 'node:fs/promises';
import { Readable, type TransformCallback } from 'node:stream';
import { type Options, Parser } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import type { CsvGeometry, Discovery, SourceFeature } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { csvDiscovery, csvPlace, type DiscoveryPart, type PartSpec } from './discovery-parts.ts';
import { asInputError, invalidUtf8, isAbortError, isInvalidUtf8 } from './errors.ts';
import { limitsOf } from './limits.ts';
import { geometryInfo, LayerScan } from './scan.ts';
import { detectDelimiter } from './sniff.ts';
import { featureBatch, LineCount, layerNameOf, linesBefore, readChunks } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';
import { wktInfo } from './wkt.ts';

const LAT = /^(lat|latitude|y)$/i;
const LON = /^(lon|lng|long|longitude|x)$/i;
const WKT_NAME = /^(wkt|geom|geometry|the_geom|wkt_geom|shape)$/i;
const WKT_VALUE =
  /^\s*(SRID=\d+;\s*)?(MULTI)?(POINT|LINESTRING|POLYGON|GEOMETRYCOLLECTION)\s*(Z|M|ZM)?\s*(\(|EMPTY)/i;

/**
 * One data row: its 0-based index, its line in the file (where it ends), its cells and the file
 * offset just past it (past its record delimiter: a resume at `end` numbers on from `line`).
 */
interface CsvRow {
  index: number;
  line: number;
  cells: string[];
  end: number;
  /** The LFs before `end`. */
  lines: number;
}

/** Where a read starts when it resumes by position (ADR 0143): row `index` begins at `offset`. */
interface CsvResume {
  index: number;
  offset: number;
  /** The lines of the file before `offset`. */
  lines: number;
  /** The record delimiter the header line ends with (what csv-parse detects on a read from the top). */
  recordDelimiter: string;
  /** The field delimiter of the header line. */
  delimiter: string;
  /** The header and the first data row (geometry detection may look at it), read from the file's head. */
  header: string[];
  first: string[] | undefined;
}

/** The head read for a resume: the header and first row must lie inside it. */
const HEAD_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/** Header names made unique and non-empty (`name`, `name_2`; `field_3` for an empty one). */
const uniqueNames = (header: string[]): string[] => {
  const seen = new Set<string>();
  return header.map((raw, i) => {
    const base = raw.trim() || `field_${i + 1}`;
    let name = base;
    for (let n = 2; seen.has(name); n++) name = `${base}_${n}`;
    seen.add(name);
    return name;
  });
};

/** The geometry columns: the given ones (checked), lat/lon names, a WKT name, or WKT-looking values. */
export const detectCsvGeometry = (
  header: string[],
  first: string[] | undefined,
  given?: CsvGeometry,
): CsvGeometry | undefined => {
  if (given && (given.wkt || given.lat || given.lon)) {
    for (const column of [given.wkt, given.lat, given.lon]) {
      if (column !== undefined && !header.includes(column)) {
        throw new ImportInputError(
          'unknown_column',
          `The CSV has no column '${column}' (it has ${header.join(', ')}).`,
        );
      }
    }
    if (!given.wkt && !(given.lat && given.lon)) {
      throw new ImportInputError('invalid_csv_geometry', 'Give both lat and lon columns, or a wkt column.');
    }
    return given.wkt ? { wkt: given.wkt } : { lat: given.lat, lon: given.lon };
  }
  const lat = header.find((h) => LAT.test(h));
  const lon = header.find((h) => LON.test(h));
  if (lat && lon) return { lat, lon };
  const wkt = header.find((h) => WKT_NAME.test(h));
  if (wkt) return { wkt };
  const byValue = first ? header.find((_h, i) => WKT_VALUE.test(first[i] ?? '')) : undefined;
  return byValue ? { wkt: byValue } : undefined;
};

/**
 * The bytes handed to the parser at a time. The file is read in larger chunks; what the parser
 * has parsed past a stop is thrown away (a resume reads on from the last row loaded), so it is
 * fed in pieces this size (~1,300 rows of 50 bytes) rather than a whole chunk (~20,000).
 */
const PARSE_PIECE_BYTES = 64 * 1024;

/** The file's chunks from `start`, cut into pieces of PARSE_PIECE_BYTES at most. */
async function* pieces(path: string, options: ReadOptions, start: number): AsyncGenerator<Buffer> {
  for await (const chunk of readChunks(path, { ...options, start })) {
    for (let at = 0; at < chunk.length; at += PARSE_PIECE_BYTES)
      yield chunk.subarray(at, at + PARSE_PIECE_BYTES);
  }
}

/** The decoded text of the file from `start`, each piece (also handed to `count`); invalid UTF-8 names its line. */
async function* textChunks(
  path: string,
  options: ReadOptions,
  start: number,
  count: LineCount,
): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let chunkStart = start;
  for await (const chunk of pieces(path, options, start)) {
    count.add(chunkStart, chunk);
    chunkStart += chunk.length;
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch (error) {
      if (!isInvalidUtf8(error)) throw error;
      let line = count.before(chunkStart - chunk.length) + 1;
      let from = 0;
      for (;;) {
        const at = chunk.indexOf(0x0a, from);
        const piece = chunk.subarray(from, at === -1 ? chunk.length : at);
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(piece, { stream: true });
        } catch {
          break;
        }
        if (at === -1) break;
        line++;
        from = at + 1;
      }
      throw invalidUtf8(`line ${line}`);
    }
    yield text;
  }
}

/** The delimiter of the header line in the file's head, `,` when none is found. */
const delimiterIn = (head: Buffer): string => {
  const text = head.toString('utf8').replace(/^\uFEFF/, '');
  return detectDelimiter(text.split(/\r?\n/, 1)[0] ?? '') ?? ',';
};

/** The first bytes of the file (up to 64 KiB). */
const headOf = async (path: string): Promise<Buffer> => {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
};

/**
 * Where a read resumes by position: row `skip` at `offset` (the end of the row before), with the
 * header and first row parsed from the file's head alone (csv-parse's `to`: nothing after them is
 * parsed). Undefined (a read from the top) without an offset, or when they aren't within the head.
 */
async function resumeOf(path: string, options: ReadOptions): Promise<CsvResume | undefined> {
  const skip = options.skip ?? 0;
  if (skip === 0 || options.offset === undefined || options.offset <= 0) return undefined;
  const head = await headOf(path);
  const lf = head.indexOf(LF);
  const cr = head.indexOf(CR);
  let recordDelimiter: string;
  if (lf !== -1) recordDelimiter = lf > 0 && head[lf - 1] === CR ? '\r\n' : '\n';
  else if (cr !== -1) recordDelimiter = '\r';
  else return undefined;
  if (cr !== -1 && cr < lf - 1) recordDelimiter = '\r';
  const text = new TextDecoder('utf-8').decode(head);
  const delimiter = delimiterIn(head);
  let records: { record: string[]; info: { bytes: number } }[];
  try {
    records = parseSync(text, {
      delimiter,
      bom: true,
      info: true,
      skip_empty_lines: true,
      to: 2,
    }) as unknown as { record: string[]; info: { bytes: number } }[];
  } catch {
    return undefined;
  }
  const last = records.at(-1);
  // A head that may have cut the first row short: read from the top instead.
  if (!last || (head.length === HEAD_BYTES && last.info.bytes >= Buffer.byteLength(text) - 4))
    return undefined;
  return {
    delimiter,
    header: uniqueNames(records[0]?.record ?? []),
    first: records[1]?.record,
    index: skip,
    offset: options.offset,
    lines: options.lines ?? (await linesBefore(path, options.offset, options.signal)),
    recordDelimiter,
  };
}

/** A record and the parser's byte count at its end (past its record delimiter). */
interface ParsedRecord {
  cells: string[];
  bytes: number;
}

/**
 * csv-parse's stream, passing on each chunk's records as one array, each with the parser's byte
 * count at its end. That is what `info: true` reports as `info.bytes`, read from the parser's
 * public `info` when the record is pushed instead of copied into an info object per record (which
 * cost ~3 s of a 1M-row pass). An array per chunk instead of an object per record spares the
 * stream's per-record queueing and the async iteration's promise per record.
 */
class RecordParser extends Parser {
  #records: ParsedRecord[] = [];

  constructor(options: Options) {
    // One array waiting to be taken at most: the parser runs no further ahead of its reader.
    super({
      ...options,
      info: false,
      raw: false,
      objname: undefined,
      columns: false,
      readableHighWaterMark: 1,
    } as Options);
  }

  // csv-parse calls push once per record (a string array), and with null where it ends early.
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) {
      this.#pass();
      return super.push(null, encoding);
    }
    this.#records.push({ cells: chunk as string[], bytes: this.info.bytes });
    return true;
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void {
    super._transform(chunk, encoding, (error?: Error | null) => {
      this.#pass();
      callback(error);
    });
  }

  override _flush(callback: TransformCallback): void {
    super._flush((error?: Error | null) => {
      this.#pass();
      callback(error);
    });
  }

  /** Hands the records parsed so far on as one array. */
  #pass(): void {
    if (this.#records.length === 0) return;
    const records = this.#records;
    this.#records = [];
    super.push(records);
  }
}

/** The header and the data rows of the file, in order; with `resume`, the rows from there on. */
async function* csvRows(
  path: string,
  options: ReadOptions,
  onHeader: (header: string[]) => void,
  resume?: CsvResume,
): AsyncGenerator<CsvRow[]> {
  const { maxFeatureBytes } = limitsOf(options.limits);
  let header: string[] | undefined = resume?.header;
  let index = resume?.index ?? 0;
  // Where the parser's bytes begin in the file: after a BOM (the decoder drops it), or the resume point.
  // One read of the head (a resume read it already): the delimiter and whether a BOM comes first.
  const head = resume ? undefined : await headOf(path);
  const base = resume ? resume.offset : head?.[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  const parser = new RecordParser({
    delimiter: resume?.delimiter ?? delimiterIn(head as Buffer),
    bom: true,
    skip_empty_lines: true,
    max_record_size: maxFeatureBytes,
    ...(resume ? { record_delimiter: resume.recordDelimiter } : {}),
  });
  const count = new LineCount(resume?.offset ?? 0, resume?.lines ?? 0);
  const source = Readable.from(textChunks(path, options, resume?.offset ?? 0, count), {
    objectMode: false,
  });
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  try {
    // A parsed batch of records at a time: one async step per batch, not per row.
    for await (const records of parser as AsyncIterable<ParsedRecord[]>) {
      options.signal?.throwIfAborted();
      const rows: CsvRow[] = [];
      for (const { cells, bytes } of records) {
        if (header === undefined) {
          header = uniqueNames(cells);
          onHeader(header);
          continue;
        }
        const end = base + bytes;
        // The line the row ends on (its last byte's), and the lines before its end for a resume there.
        const line = count.before(end - 1) + 1;
        rows.push({ index: index++, line, cells, end, lines: count.before(end) });
      }
      if (rows.length > 0) yield rows;
    }
  } catch (error) {
    if (error instanceof ImportInputError || isAbortError(error)) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'CSV_MAX_RECORD_SIZE') {
      throw new ImportInputError(
        'feature_too_large',
        `A CSV record after line ${(error as { lines?: number }).lines ?? '?'} is larger than the limit of ${maxFeatureBytes} bytes.`,
      );
    }
    throw asInputError(error, 'malformed_csv', 'Malformed CSV');
  } finally {
    source.destroy();
    parser.destroy();
  }
  if (header === undefined) throw new ImportInputError('empty_file', 'The CSV file has no header row.');
}

/** Where a file's cells go, found once from its header and its geometry columns. */
interface CsvColumns {
  geometry: CsvGeometry | undefined;
  /**
   * Every column but the WKT one, with its cell's index, in the order a feature's properties
   * object lists them (integer-like names first, as JavaScript orders keys).
   */
  attributes: [string, number][];
  /** The cells the geometry is read from (-1: none). */
  wkt: number;
  lat: number;
  lon: number;
}

const columnsOf = (header: string[], geometry: CsvGeometry | undefined): CsvColumns => {
  const attributes: Record<string, number> = {};
  header.forEach((name, i) => {
    if (name !== geometry?.wkt) attributes[name] = i;
  });
  const at = (name: string | undefined) => (name === undefined ? -1 : header.indexOf(name));
  return {
    geometry,
    attributes: Object.entries(attributes),
    wkt: at(geometry?.wkt),
    lat: at(geometry?.lat),
    lon: at(geometry?.lon),
  };
};

/** A row's geometry: its WKT, or a point from its lon/lat cells; throws when those aren't numbers. */
const geometryOf = (columns: CsvColumns, row: CsvRow): SourceFeature['geometry'] => {
  const { geometry } = columns;
  if (!geometry) return null;
  if (geometry.wkt) {
    const wkt = row.cells[columns.wkt]?.trim();
    return wkt ? { wkt } : null;
  }
  const lat = row.cells[columns.lat]?.trim();
  const lon = row.cells[columns.lon]?.trim();
  if (!lat && !lon) return null;
  const x = Number(lon);
  const y = Number(lat);
  if (!lat || !lon || !Number.isFinite(x) || !Number.isFinite(y)) {
    throw new ImportInputError(
      'invalid_coordinates',
      `Line ${row.line}: the coordinates ${geometry.lon}=${JSON.stringify(lon ?? '')}, ${geometry.lat}=${JSON.stringify(lat ?? '')} are not numbers.`,
    );
  }
  return { type: 'Point', coordinates: [x, y] };
};

/** A row as a feature: the cells (empty = null) minus the WKT column, and the geometry. */
const toFeature = (columns: CsvColumns, row: CsvRow): SourceFeature => {
  const properties: Record<string, unknown> = {};
  for (const [name, at] of columns.attributes) properties[name] = row.cells[at] || null;
  return { properties, geometry: geometryOf(columns, row) };
};

/** One row scanned into `scan` (its cells as they are: no feature object is built for discovery). */
function scanRow(scan: LayerScan, columns: CsvColumns, row: CsvRow): void {
  const shape = geometryOf(columns, row);
  scan.count++;
  for (const [name, at] of columns.attributes) scan.fields.addText(name, row.cells[at] || null);
  const where = `line ${row.line}`;
  let info: ReturnType<typeof geometryInfo> | null = null;
  if (shape && 'wkt' in shape) info = wktInfo(shape.wkt, where);
  else if (shape) info = geometryInfo(shape, where);
  scan.addGeometry(row.index, info, row.line);
}

/** A CSV discovery's scan. */
const csvScan = (filename: string, options: DiscoverOptions) =>
  new LayerScan(layerNameOf(filename), csvPlace, limitsOf(options.limits).maxFields);

/**
 * Scans the rows from the top; with `to`, stops after the row whose bytes end exactly there and
 * answers the line breaks before it (`lines`).
 */
async function scanRows(
  path: string,
  options: DiscoverOptions & Pick<ReadOptions, 'csv'>,
  scan: LayerScan,
  to?: number,
): Promise<{ header: string[]; columns: CsvColumns; lines?: number }> {
  let header: string[] = [];
  // Set from the header with the first row.
  let columns = columnsOf([], undefined);
  let passed = to === undefined;
  const rows = csvRows(path, options, (h) => {
    header = h;
  });
  for await (const batch of rows) {
    for (const row of batch) {
      if (row.index === 0) columns = columnsOf(header, detectCsvGeometry(header, row.cells, options.csv));
      scanRow(scan, columns, row);
      // Rows end in order: the first to reach `to` ends there, or `to` was no row's end.
      if (!passed && row.end >= (to as number)) {
        if (row.end === to) return { header, columns, lines: row.lines };
        passed = true;
      }
    }
  }
  return { header, columns };
}

/** Discovery of a CSV file: one layer named after the file. */
export async function discoverCsv(
  path: string,
  filename: string,
  sizeBytes: number,
  options: DiscoverOptions & Pick<ReadOptions, 'csv'> = {},
): Promise<Discovery> {
  const scan = csvScan(filename, options);
  const { header, columns } = await scanRows(path, options, scan);
  return discoveryOf(scan, header, columns, filename, sizeBytes, options.csv);
}

/** The discovery from a scan of the whole file. */
function discoveryOf(
  scan: LayerScan,
  header: string[],
  columns: CsvColumns,
  filename: string,
  sizeBytes: number,
  given: CsvGeometry | undefined,
): Discovery {
  if (header.length === 0) throw new ImportInputError('empty_file', 'The CSV file has no header row.');
  const geometry = scan.count === 0 ? detectCsvGeometry(header, undefined, given) : columns.geometry;
  return csvDiscovery(scan, header, geometry, filename, sizeBytes);
}

/**
 * One part of a CSV file's discovery (ADR 0156): the head up to the row ending at `to` (the whole
 * discovery when no row ends there), or the tail after the row ending at `from`, read as a resume
 * by position reads on (its rows counted from 1, its lines from `from`).
 */
export async function discoverCsvPart(
  path: string,
  filename: string,
  sizeBytes: number,
  part: PartSpec,
  options: DiscoverOptions = {},
): Promise<DiscoveryPart> {
  const scan = csvScan(filename, options);
  if ('to' in part) {
    const { header, columns, lines } = await scanRows(path, options, scan, part.to);
    if (lines === undefined) {
      return { kind: 'whole', discovery: discoveryOf(scan, header, columns, filename, sizeBytes, undefined) };
    }
    const context = { format: 'csv', header, geometry: columns.geometry } as const;
    return { kind: 'head', scan: scan.snapshot(), lines, ...context };
  }
  const resume = await resumeOf(path, { ...options, skip: 1, offset: part.from, lines: 0 });
  if (!resume) throw new Error('the header and first row are not within the head of the file');
  const columns = columnsOf(resume.header, detectCsvGeometry(resume.header, resume.first));
  for await (const batch of csvRows(path, options, () => undefined, resume)) {
    for (const row of batch) scanRow(scan, columns, row);
  }
  const context = { format: 'csv', header: resume.header, geometry: columns.geometry } as const;
  return { kind: 'tail', scan: scan.snapshot(), first: 1, ...context };
}

/**
 * The rows of a CSV file as features, in order (cells as text, empty = null). With `skip` and an
 * `offset` (ADR 0143) the rows are read from that offset on; the header and the first row (which
 * geometry detection may look at) are read from the top first.
 */
export async function* readCsv(path: string, options: ReadOptions = {}): AsyncGenerator<SourceFeature[]> {
  const skip = options.skip ?? 0;
  let header: string[] = [];
  const resume = await resumeOf(path, options);
  // Set from the header with the first row, or from the head a resume read.
  let columns = resume
    ? columnsOf(resume.header, detectCsvGeometry(resume.header, resume.first, options.csv))
    : columnsOf([], undefined);
  const rows = csvRows(
    path,
    options,
    (h) => {
      header = h;
    },
    resume,
  );
  for await (const batch of rows) {
    yield* featureBatch(batch, (row) => {
      if (row.index === 0) columns = columnsOf(header, detectCsvGeometry(header, row.cells, options.csv));
      if (row.index < skip) return undefined;
      const feature = toFeature(columns, row);
      feature.end = row.end;
      feature.lines = row.lines;
      return feature;
    });
  }
}
