/**
 * Newline-delimited GeoJSON (one Feature per line) and GeoJSON Text Sequences (RFC 8142: each
 * record starts with 0x1E): split into records on the bytes, each record parsed on its own.
 */
import type { Discovery, SourceFeature, SourceGeometry } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { type DiscoveryPart, geoJsonSeqDiscovery, type PartSpec, seqPlace } from './discovery-parts.ts';
import { asInputError, invalidUtf8, isInvalidUtf8 } from './errors.ts';
import { limitsOf } from './limits.ts';
import { geometryInfo, LayerScan } from './scan.ts';
import { featureBatch, layerNameOf, linesBefore, readChunks } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';

const LF = 0x0a;
const RS = 0x1e;

/**
 * One non-blank record: its 0-based feature index, 1-based line, bytes, the file offset where they
 * end, and the line breaks before that offset (where a resume at `end` numbers on from).
 */
interface SeqRecord {
  index: number;
  line: number;
  bytes: Buffer;
  end: number;
  lines: number;
}

const isBlank = (bytes: Buffer): boolean => {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== LF && b !== RS) return false;
  return true;
};

/**
 * The records of the file (records split on RS when the file starts with RS, else on LF), a
 * chunk's records at a time: an async generator's step per record cost more than the split.
 */
async function* records(path: string, options: ReadOptions): AsyncGenerator<SeqRecord[]> {
  const maxBytes = limitsOf(options.limits).maxFeatureBytes;
  let separator: number | undefined;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let line = 1; // line where the pending record starts
  let linesInPending = 0;
  let index = 0;
  // A resume by position (ADR 0143): record `skip` begins at `offset` (the end of the one before).
  let position = 0;
  if ((options.skip ?? 0) > 0 && options.offset !== undefined && options.offset > 0) {
    position = options.offset;
    index = options.skip ?? 0;
    line = 1 + (options.lines ?? (await linesBefore(path, position, options.signal)));
  }

  /** `atLf`: the record ends at an LF (its separator), which `end` points at and doesn't count. */
  const take = (bytes: Buffer, end: number, atLf: boolean): SeqRecord | undefined => {
    const startLine = line;
    line += linesInPending;
    linesInPending = 0;
    if (isBlank(bytes)) return undefined;
    return { index: index++, line: startLine, bytes, end, lines: line - 1 - (atLf ? 1 : 0) };
  };

  for await (const chunk of readChunks(path, { ...options, start: position })) {
    const chunkStart = position;
    const out: SeqRecord[] = [];
    position += chunk.length;
    if (separator === undefined) {
      const first = chunk.find(
        (b) => b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== LF && b !== 0xef && b !== 0xbb && b !== 0xbf,
      );
      if (first !== undefined) separator = first === RS ? RS : LF;
    }
    let from = 0;
    try {
      for (;;) {
        const at = separator === undefined ? -1 : chunk.indexOf(separator, from);
        const end = at === -1 ? chunk.length : at;
        const piece = chunk.subarray(from, end);
        if (separator === RS) for (const b of piece) if (b === LF) linesInPending++;
        if (pendingBytes + piece.length > maxBytes) {
          throw new ImportInputError(
            'feature_too_large',
            `The record at line ${line} is larger than the limit of ${maxBytes} bytes; split or simplify it.`,
          );
        }
        if (at === -1) {
          if (piece.length > 0) {
            pending.push(Buffer.from(piece));
            pendingBytes += piece.length;
          }
          break;
        }
        const bytes = pending.length ? Buffer.concat([...pending, piece]) : piece;
        pending = [];
        pendingBytes = 0;
        if (separator === LF) linesInPending++;
        const record = take(bytes, chunkStart + at, separator === LF);
        if (record) out.push(record);
        from = at + 1;
      }
    } catch (error) {
      // The records before an error are read as they were one at a time; then the error.
      if (out.length > 0) yield out;
      throw error;
    }
    if (out.length > 0) yield out;
  }
  if (pendingBytes > 0) {
    const record = take(Buffer.concat(pending), position, false);
    if (record) yield [record];
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A record as a SourceFeature (a Feature, or a bare geometry); errors name the line. */
const parseRecord = (record: SeqRecord): SourceFeature => {
  const where = `line ${record.line} (feature ${record.index})`;
  let text: string;
  try {
    text = decoder.decode(record.bytes);
  } catch (error) {
    throw isInvalidUtf8(error) ? invalidUtf8(where) : asInputError(error, 'invalid_utf8', where);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw asInputError(error, 'malformed_json', `Malformed JSON at ${where}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ImportInputError('invalid_feature', `The record at ${where} is not a GeoJSON Feature.`);
  }
  const { type, properties, geometry } = value as Record<string, unknown>;
  if (type === 'Feature') {
    return {
      properties:
        properties !== null && typeof properties === 'object' && !Array.isArray(properties)
          ? (properties as Record<string, unknown>)
          : {},
      geometry: (geometry ?? null) as SourceGeometry | null,
    };
  }
  if (typeof type === 'string' && ('coordinates' in value || 'geometries' in value)) {
    return { properties: {}, geometry: value as SourceGeometry };
  }
  throw new ImportInputError(
    'invalid_feature',
    `The record at ${where} is not a GeoJSON Feature (an object with "type": "Feature").`,
  );
};

/**
 * Scans the records (from `options.offset` on when it resumes); with `to`, stops after the record
 * whose bytes end exactly there and answers the line breaks before it.
 */
async function scanRecords(
  path: string,
  options: ReadOptions,
  scan: LayerScan,
  to?: number,
): Promise<number | undefined> {
  let passed = to === undefined;
  for await (const batch of records(path, options)) {
    for (const record of batch) {
      const feature = parseRecord(record);
      scan.count++;
      scan.fields.addProperties(feature.properties);
      const info =
        feature.geometry === null
          ? null
          : geometryInfo(feature.geometry, seqPlace(record.index, record.line), scan.judging);
      scan.addGeometry(record.index, info, record.line);
      // Records end in order: the first to reach `to` ends there, or `to` was no record's end.
      if (!passed && record.end >= (to as number)) {
        if (record.end === to) return record.lines;
        passed = true;
      }
    }
  }
  return undefined;
}

const seqScan = (filename: string, options: DiscoverOptions) =>
  new LayerScan(layerNameOf(filename), seqPlace, limitsOf(options.limits).maxFields);

/** Discovery of an NDJSON / GeoJSON Text Sequence file: one layer named after the file. */
export async function discoverGeoJsonSeq(
  path: string,
  filename: string,
  sizeBytes: number,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const scan = seqScan(filename, options);
  await scanRecords(path, options, scan);
  return geoJsonSeqDiscovery(scan, sizeBytes);
}

/**
 * One part of a GeoJSONSeq file's discovery (ADR 0156): the head up to the record ending at `to`
 * (the whole discovery when no record ends there), or the tail after the record ending at `from`,
 * read as a resume by position reads on (its records counted from 1, its lines from `from`).
 */
export async function discoverGeoJsonSeqPart(
  path: string,
  filename: string,
  sizeBytes: number,
  part: PartSpec,
  options: DiscoverOptions = {},
): Promise<DiscoveryPart> {
  const scan = seqScan(filename, options);
  if ('to' in part) {
    const lines = await scanRecords(path, options, scan, part.to);
    if (lines === undefined) return { kind: 'whole', discovery: geoJsonSeqDiscovery(scan, sizeBytes) };
    return { kind: 'head', format: 'geojsonseq', scan: scan.snapshot(), lines };
  }
  await scanRecords(path, { ...options, skip: 1, offset: part.from, lines: 0 }, scan);
  return { kind: 'tail', format: 'geojsonseq', scan: scan.snapshot(), first: 1 };
}

/**
 * The features of an NDJSON / GeoJSON Text Sequence file in file order, a chunk's at a time; a
 * record that isn't a feature ends them, after the features before it.
 */
export async function* readGeoJsonSeq(
  path: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature[]> {
  const skip = options.skip ?? 0;
  for await (const batch of records(path, options)) {
    options.signal?.throwIfAborted();
    yield* featureBatch(batch, (record) => {
      if (record.index < skip) return undefined;
      const feature = parseRecord(record);
      feature.end = record.end;
      feature.lines = record.lines;
      return feature;
    });
  }
}
