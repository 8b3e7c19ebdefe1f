/**
 * FlatGeobuf, streamed with the flatgeobuf library's GeoJSON API from a file stream. A framing
 * walk over the feature length prefixes catches a truncated file (the library reads past the end
 * without noticing).
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { type ColumnMeta, geojson, type HeaderMeta } from 'flatgeobuf';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { calcTreeSize } from 'flatgeobuf/lib/mjs/packedrtree.js';
import type {
  Discovery,
  FieldType,
  SourceFeature,
  SourceField,
  SourceGeometry,
} from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { asInputError } from './errors.ts';
import { limitsOf, READ_CHUNK_BYTES } from './limits.ts';
import { geometryInfo, LayerScan } from './scan.ts';
import { layerNameOf } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';

const columnType = (type: ColumnType): FieldType | 'skip' => {
  switch (type) {
    case ColumnType.Byte:
    case ColumnType.UByte:
    case ColumnType.Short:
    case ColumnType.UShort:
    case ColumnType.Int:
      return 'integer';
    case ColumnType.UInt:
    case ColumnType.Long:
    case ColumnType.ULong:
      return 'bigint';
    case ColumnType.Float:
    case ColumnType.Double:
      return 'double precision';
    case ColumnType.Bool:
      return 'boolean';
    case ColumnType.Json:
      return 'jsonb';
    case ColumnType.DateTime:
      return 'timestamptz';
    case ColumnType.Binary:
      return 'skip';
    default:
      return 'text';
  }
};

/** The features of the file with their header, in order. */
async function* fgbFeatures(
  path: string,
  options: ReadOptions,
  onHeader: (header: HeaderMeta) => void,
): AsyncGenerator<{ index: number; properties: Record<string, unknown>; geometry: SourceGeometry | null }> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      options.onBytes?.(bytes);
      callback(null, chunk);
    },
  });
  const file = createReadStream(path, { highWaterMark: READ_CHUNK_BYTES, signal: options.signal });
  file.on('error', (error) => counter.destroy(error));
  file.pipe(counter);
  const stream = Readable.toWeb(counter) as unknown as ReadableStream;
  let index = 0;
  try {
    for await (const feature of geojson.deserialize(stream, { headerMetaFn: onHeader })) {
      yield {
        index: index++,
        properties: { ...(feature.properties ?? {}) },
        geometry: (feature.geometry ?? null) as SourceGeometry | null,
      };
    }
  } catch (error) {
    throw asInputError(error, 'invalid_flatgeobuf', `Feature ${index} of the FlatGeobuf file cannot be read`);
  } finally {
    file.destroy();
    counter.destroy();
  }
}

/** Thrown by the header callback to stop the library once it has the header. */
const HEADER_READ = Symbol('header read');

/**
 * The header of the file. Checks first that the file holds the whole header (the library waits
 * forever on a file that ends inside it), then lets the library parse it and stops it there.
 */
async function readHeader(path: string): Promise<HeaderMeta> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(12);
    const { bytesRead } = await handle.read(head, 0, 12, 0);
    if (bytesRead < 12 || head[0] !== 0x66 || head[1] !== 0x67 || head[2] !== 0x62) {
      throw new ImportInputError(
        'invalid_flatgeobuf',
        'The FlatGeobuf file is truncated or not FlatGeobuf (bad magic bytes).',
      );
    }
    if (12 + head.readUInt32LE(8) > size) {
      throw new ImportInputError(
        'truncated_file',
        'The FlatGeobuf file is truncated: it ends inside its header.',
      );
    }
  } finally {
    await handle.close();
  }
  let header: HeaderMeta | undefined;
  const file = createReadStream(path, { highWaterMark: 64 * 1024 });
  try {
    const stream = Readable.toWeb(file) as unknown as ReadableStream;
    for await (const _ of geojson.deserialize(stream, {
      headerMetaFn: (h: HeaderMeta) => {
        header = h;
        throw HEADER_READ;
      },
    })) {
      break;
    }
  } catch (error) {
    if (error !== HEADER_READ)
      throw asInputError(error, 'invalid_flatgeobuf', 'The FlatGeobuf header cannot be read');
  } finally {
    file.destroy();
  }
  if (!header)
    throw new ImportInputError('invalid_flatgeobuf', 'The FlatGeobuf file has no readable header.');
  return header;
}

/**
 * Walks the length prefixes of the features after the header and index; throws 'truncated_file'
 * naming the feature when the file ends inside one or holds fewer features than its header says.
 */
async function checkFraming(path: string, header: HeaderMeta): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const window = Buffer.alloc(READ_CHUNK_BYTES);
    let windowStart = 0;
    let windowLength = 0;
    const u32 = async (offset: number): Promise<number | undefined> => {
      if (offset + 4 > size) return undefined;
      if (offset < windowStart || offset + 4 > windowStart + windowLength) {
        windowStart = offset;
        windowLength = (await handle.read(window, 0, window.length, offset)).bytesRead;
      }
      return window.readUInt32LE(offset - windowStart);
    };
    const headerSize = (await u32(8)) ?? 0;
    let offset = 12 + headerSize;
    if (header.indexNodeSize > 0 && header.featuresCount > 0) {
      offset += calcTreeSize(header.featuresCount, header.indexNodeSize);
    }
    if (offset > size) {
      throw new ImportInputError(
        'truncated_file',
        'The FlatGeobuf file is truncated: it ends inside its spatial index.',
      );
    }
    let count = 0;
    while (offset < size) {
      const length = await u32(offset);
      if (length === undefined || offset + 4 + length > size) {
        throw new ImportInputError(
          'truncated_file',
          `The FlatGeobuf file is truncated: it ends inside feature ${count} (${size} bytes).`,
        );
      }
      offset += 4 + length;
      count++;
    }
    if (header.featuresCount > 0 && count < header.featuresCount) {
      throw new ImportInputError(
        'truncated_file',
        `The FlatGeobuf file is truncated: it holds ${count} of the ${header.featuresCount} features its header declares.`,
      );
    }
  } finally {
    await handle.close();
  }
}

const fieldsOf = (
  columns: ColumnMeta[] | null,
  warnings: string[],
): { fields: SourceField[]; skipped: string[] } => {
  const fields: SourceField[] = [];
  const skipped: string[] = [];
  for (const column of columns ?? []) {
    const type = columnType(column.type);
    if (type === 'skip') {
      skipped.push(column.name);
      warnings.push(`The binary column '${column.name}' is not imported.`);
    } else fields.push({ name: column.name, type });
  }
  return { fields, skipped };
};

const sridOf = (header: HeaderMeta | null): number | null => {
  const crs = header?.crs;
  if (!crs || crs.code <= 0) return null;
  return !crs.org || crs.org.toUpperCase() === 'EPSG' ? crs.code : null;
};

/** Discovery of a FlatGeobuf file: one layer named after the file. */
export async function discoverFlatGeobuf(
  path: string,
  filename: string,
  sizeBytes: number,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  await checkFraming(path, await readHeader(path));
  const scan = new LayerScan(layerNameOf(filename), undefined, limitsOf(options.limits).maxFields);
  let header: HeaderMeta | null = null;
  for await (const feature of fgbFeatures(path, options, (h) => {
    header = h;
  })) {
    scan.count++;
    scan.fields.addProperties(feature.properties);
    const info =
      feature.geometry === null ? null : geometryInfo(feature.geometry, `feature ${feature.index}`);
    scan.addGeometry(feature.index, info);
  }
  if (!header)
    throw new ImportInputError('invalid_flatgeobuf', 'The FlatGeobuf file has no readable header.');
  const meta = header as HeaderMeta;
  if (scan.count === 0) throw new ImportInputError('no_features', 'The FlatGeobuf file holds no features.');
  const warnings: string[] = [];
  const srid = sridOf(meta);
  if (srid === null)
    warnings.push('The FlatGeobuf header names no EPSG CRS; give source_srid in the import plan.');
  const layer = scan.result(srid, warnings);
  const { fields } = fieldsOf(meta.columns, warnings);
  return {
    format: 'flatgeobuf',
    size_bytes: sizeBytes,
    layers: [{ ...layer, fields: meta.columns?.length ? fields : layer.fields }],
    warnings,
  };
}

/** The features of a FlatGeobuf file in file order. */
export async function* readFlatGeobuf(
  path: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature> {
  const header = await readHeader(path);
  await checkFraming(path, header);
  const { skipped } = fieldsOf(header.columns, []);
  const skip = options.skip ?? 0;
  for await (const feature of fgbFeatures(path, options, () => undefined)) {
    if (feature.index < skip) continue;
    for (const name of skipped) delete feature.properties[name];
    yield { properties: feature.properties, geometry: feature.geometry };
  }
  options.onBytes?.((await stat(path)).size);
}
