/**
 * CSV with a header row, parsed by csv-parse from a stream: geometry from lat/lon columns or a WKT
 * column (detected from the header or the first row, or given), attributes as text cells.
 */
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { CsvGeometry, Discovery, SourceFeature } from '../../../domain/import-sources.ts';
import { ImportInputError } from '../../../domain/import-sources.ts';
import { asInputError, invalidUtf8, isAbortError, isInvalidUtf8 } from './errors.ts';
import { limitsOf } from './limits.ts';
import { geometryInfo, LayerScan } from './scan.ts';
import { detectDelimiter } from './sniff.ts';
import { layerNameOf, readChunks } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';
import { wktInfo } from './wkt.ts';

const LAT = /^(lat|latitude|y)$/i;
const LON = /^(lon|lng|long|longitude|x)$/i;
const WKT_NAME = /^(wkt|geom|geometry|the_geom|wkt_geom|shape)$/i;
const WKT_VALUE =
  /^\s*(SRID=\d+;\s*)?(MULTI)?(POINT|LINESTRING|POLYGON|GEOMETRYCOLLECTION)\s*(Z|M|ZM)?\s*(\(|EMPTY)/i;

/** One data row: its 0-based index, its line in the file and its cells. */
interface CsvRow {
  index: number;
  line: number;
  cells: string[];
}

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

/** The decoded text of the file, each chunk; invalid UTF-8 names its line. */
async function* textChunks(path: string, options: ReadOptions): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let lines = 0;
  for await (const chunk of readChunks(path, options)) {
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch (error) {
      if (!isInvalidUtf8(error)) throw error;
      let line = lines + 1;
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
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    yield text;
  }
}

/** The delimiter of the header line (from the first 64 KiB), `,` when none is found. */
const delimiterOf = async (path: string): Promise<string> => {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    return detectDelimiter(text.split(/\r?\n/, 1)[0] ?? '') ?? ',';
  } finally {
    await handle.close();
  }
};

/** The header and the data rows of the file, in order. */
async function* csvRows(
  path: string,
  options: ReadOptions,
  onHeader: (header: string[]) => void,
): AsyncGenerator<CsvRow> {
  const { maxFeatureBytes } = limitsOf(options.limits);
  let header: string[] | undefined;
  let index = 0;
  const parser = parse({
    delimiter: await delimiterOf(path),
    bom: true,
    info: true,
    skip_empty_lines: true,
    max_record_size: maxFeatureBytes,
  });
  const source = Readable.from(textChunks(path, options), { objectMode: false });
  source.on('error', (error) => parser.destroy(error));
  source.pipe(parser);
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number };
    }>) {
      if (header === undefined) {
        header = uniqueNames(record);
        onHeader(header);
        continue;
      }
      options.signal?.throwIfAborted();
      yield { index: index++, line: info.lines, cells: record };
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

/** A row as a feature: the cells (empty = null) minus the WKT column, and the geometry. */
const toFeature = (header: string[], row: CsvRow, geometry: CsvGeometry | undefined): SourceFeature => {
  const properties: Record<string, unknown> = {};
  header.forEach((name, i) => {
    if (name !== geometry?.wkt) properties[name] = row.cells[i] || null;
  });
  if (!geometry) return { properties, geometry: null };
  if (geometry.wkt) {
    const wkt = row.cells[header.indexOf(geometry.wkt)]?.trim();
    return { properties, geometry: wkt ? { wkt } : null };
  }
  const lat = row.cells[header.indexOf(geometry.lat ?? '')]?.trim();
  const lon = row.cells[header.indexOf(geometry.lon ?? '')]?.trim();
  if (!lat && !lon) return { properties, geometry: null };
  const x = Number(lon);
  const y = Number(lat);
  if (!lat || !lon || !Number.isFinite(x) || !Number.isFinite(y)) {
    throw new ImportInputError(
      'invalid_coordinates',
      `Line ${row.line}: the coordinates ${geometry.lon}=${JSON.stringify(lon ?? '')}, ${geometry.lat}=${JSON.stringify(lat ?? '')} are not numbers.`,
    );
  }
  return { properties, geometry: { type: 'Point', coordinates: [x, y] } };
};

/** Discovery of a CSV file: one layer named after the file. */
export async function discoverCsv(
  path: string,
  filename: string,
  sizeBytes: number,
  options: DiscoverOptions & Pick<ReadOptions, 'csv'> = {},
): Promise<Discovery> {
  const scan = new LayerScan(
    layerNameOf(filename),
    (i) => `row ${i + 1}`,
    limitsOf(options.limits).maxFields,
  );
  let header: string[] = [];
  let geometry: CsvGeometry | undefined;
  for await (const row of csvRows(path, options, (h) => {
    header = h;
  })) {
    if (row.index === 0) geometry = detectCsvGeometry(header, row.cells, options.csv);
    const feature = toFeature(header, row, geometry);
    scan.count++;
    for (const [name, value] of Object.entries(feature.properties))
      scan.fields.addText(name, value as string | null);
    const where = `line ${row.line}`;
    let info: ReturnType<typeof geometryInfo> | null = null;
    if (feature.geometry && 'wkt' in feature.geometry) info = wktInfo(feature.geometry.wkt, where);
    else if (feature.geometry) info = geometryInfo(feature.geometry, where);
    scan.addGeometry(row.index, info?.type ?? null, info?.box ?? null, where);
  }
  if (header.length === 0) throw new ImportInputError('empty_file', 'The CSV file has no header row.');
  if (scan.count === 0) geometry = detectCsvGeometry(header, undefined, options.csv);
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
  const layer = scan.result(srid, warnings, !geometry?.wkt);
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

/** The rows of a CSV file as features, in order (cells as text, empty = null). */
export async function* readCsv(path: string, options: ReadOptions = {}): AsyncGenerator<SourceFeature> {
  const skip = options.skip ?? 0;
  let header: string[] = [];
  let geometry: CsvGeometry | undefined;
  for await (const row of csvRows(path, options, (h) => {
    header = h;
  })) {
    if (row.index === 0) geometry = detectCsvGeometry(header, row.cells, options.csv);
    if (row.index >= skip) yield toFeature(header, row, geometry);
  }
}
