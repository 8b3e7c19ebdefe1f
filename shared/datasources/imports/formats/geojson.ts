/**
 * GeoJSON (a FeatureCollection, a single Feature or a bare geometry), streamed with stream-json's
 * tokenizer: each item of `features` is assembled on its own, so memory holds one feature at a time.
 */
import { Assembler } from 'stream-json/assembler.js';
import { jsonParser, type Token } from 'stream-json/parser.js';
import type { Discovery, SourceFeature, SourceGeometry } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { type DiscoveryPart, geoJsonDiscovery, type PartSpec } from './discovery-parts.ts';
import { asInputError, invalidUtf8, isAbortError, isInvalidUtf8 } from './errors.ts';
import { ItemSplitter, NotSplittable, placeIn, SplitError, type TopLevel } from './json-items.ts';
import { limitsOf } from './limits.ts';
import { CoordinatePacker } from './packed-coordinates.ts';
import { geometryInfo, LayerScan } from './scan.ts';
import { layerNameOf, readChunks } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';

/** stream-chain's end-of-input marker (`none`, a registered symbol): flushes the parser. */
const FLUSH = Symbol.for('object-stream.none');

/** Characters handed to the tokenizer at a time. */
const PARSE_SLICE = 64 * 1024;

const STREAMED = new Set(['startString', 'stringChunk', 'endString']);

/** One feature item of the document: its 0-based index, the assembled JSON, where its bytes end (split items). */
interface RawItem {
  index: number;
  item: unknown;
  end?: number;
}

/**
 * The raw JSON items of the document's features, in order, after skipping `skip` of them: split at
 * byte level and each parsed on its own (json-items.ts); a document that isn't an object or an
 * array at the top is read by the tokenizing walker, and any error is located by it. Yielded a
 * run's items at a time (json-items.ts): an async generator's step costs a few promise turns, which
 * per feature were a sixth of a discovery's time (issue #27), and a chunk's items all alive at once
 * were what the reader's young-generation collections copied.
 */
async function* rawFeatures(
  path: string,
  options: ReadOptions,
  top: TopLevel,
  tailFrom?: number,
): AsyncGenerator<RawItem[]> {
  const maxBytes = limitsOf(options.limits).maxFeatureBytes;
  const skip = options.skip ?? 0;
  const splitter = new ItemSplitter(
    top,
    skip,
    maxBytes,
    options.packCoordinates ? new CoordinatePacker() : undefined,
  );
  // A resume by position (ADR 0143): feature `skip` of the features array begins at `offset`.
  const resume = skip > 0 && options.offset !== undefined && options.offset > 0;
  let offset = tailFrom ?? (resume ? (options.offset as number) : 0);
  // A discovery's tail (ADR 0156): an item ends at `tailFrom`, its items are counted from there.
  if (tailFrom !== undefined) splitter.resumeAt(0, await isBareArray(path, options), true);
  else if (resume) splitter.resumeAt(skip, await isBareArray(path, options));
  let split = true;
  try {
    for await (const chunk of readChunks(path, { ...options, start: offset })) {
      for (const items of splitter.push(chunk, offset)) yield items;
      offset += chunk.length;
    }
    splitter.finish(offset);
  } catch (caught) {
    // A tail split where no item ended: nothing to locate, the head reads the file in order.
    if (tailFrom !== undefined && !isAbortError(caught)) throw new Error('the tail does not split');
    if (caught instanceof NotSplittable) split = false;
    else if (caught instanceof SplitError) {
      const error = caught.reason;
      const where = await locateError(path, caught.chunkOffset, maxBytes);
      if (isInvalidUtf8(error)) throw invalidUtf8(where);
      throw asInputError(error, 'malformed_json', `Malformed JSON in ${where}`);
    } else throw asInputError(caught, 'malformed_json', 'Malformed GeoJSON');
  }
  // Another top level (a string, a number): nothing was read yet; the walker says what it is.
  if (!split) yield* tokenizedFeatures(path, options, top);
}

/**
 * Walks the token stream of a GeoJSON document: assembles each member of the top-level object
 * and each item of `features` (or of a bare top-level array) on its own; items before `skip` are
 * only walked over, not assembled.
 */
class DocumentWalker {
  /** start → top (members) ⇄ member (a member's value) | features ⇄ item (one feature) → end */
  state: 'start' | 'top' | 'member' | 'features' | 'item' | 'end' = 'start';
  private key = '';
  private index = 0;
  private asm: Assembler | null = null;
  private reading = false;
  private depth = 0;
  private size = 0;
  private readonly parse = jsonParser({ streamKeys: false, streamNumbers: false, streamStrings: true });

  constructor(
    readonly top: TopLevel,
    private readonly skip: number,
    private readonly maxBytes: number,
  ) {}

  /** Where the walk is, for messages ("feature 12"). */
  where(): string {
    const at =
      this.state === 'item' || this.state === 'features'
        ? 'feature'
        : this.state === 'start' || this.state === 'end'
          ? this.state
          : 'member';
    return placeIn(at, this.top, this.key, this.index);
  }

  /** Parses more text (FLUSH at the end) and returns the items it completed. */
  push(text: string | typeof FLUSH): RawItem[] {
    const result = this.parse(text as string) as unknown;
    const out: RawItem[] = [];
    if (typeof result !== 'object' || result === null || !('values' in result)) return out;
    for (const tok of (result as { values: Token[] }).values) {
      const item = this.onToken(tok);
      if (item) out.push(item);
    }
    return out;
  }

  /** Feeds one token to the value being read; true when the value is complete. */
  private feed(tok: Token): boolean {
    switch (tok.name) {
      case 'startObject':
      case 'startArray':
        this.depth++;
        this.size++;
        break;
      case 'endObject':
      case 'endArray':
        this.depth--;
        this.size++;
        break;
      case 'stringChunk':
      case 'keyValue':
      case 'numberValue':
        this.size += tok.value.length + 1;
        break;
      default:
        this.size += 2;
    }
    if (this.size > this.maxBytes) {
      throw new ImportInputError(
        'feature_too_large',
        `${this.where()} is larger than the limit of ${this.maxBytes} bytes; split or simplify it.`,
      );
    }
    this.asm?.consume(tok);
    return this.depth === 0 && !STREAMED.has(tok.name);
  }

  /** Starts reading a value with its first token; true when it is already complete. */
  private begin(tok: Token, assemble: boolean): boolean {
    this.asm = assemble ? new Assembler() : null;
    this.reading = true;
    this.depth = 0;
    this.size = 0;
    return this.feed(tok);
  }

  private onToken(tok: Token): RawItem | undefined {
    switch (this.state) {
      case 'start':
        if (tok.name === 'startObject') this.state = 'top';
        else if (tok.name === 'startArray') {
          this.top.collection = true;
          this.state = 'features';
        } else if (!STREAMED.has(tok.name)) {
          throw new ImportInputError('invalid_geojson', 'The file is JSON but not a GeoJSON object.');
        }
        return undefined;
      case 'top':
        if (tok.name === 'keyValue') {
          this.key = tok.value;
          this.state = 'member';
          this.reading = false;
        } else if (tok.name === 'endObject') this.state = 'end';
        return undefined;
      case 'member':
        if (!this.reading && this.key === 'features' && tok.name === 'startArray' && !this.top.collection) {
          this.top.collection = true;
          this.state = 'features';
          return undefined;
        }
        if (this.reading ? this.feed(tok) : this.begin(tok, true)) {
          this.top.members[this.key] = this.asm?.current;
          this.asm = null;
          this.state = 'top';
        }
        return undefined;
      case 'features':
        if (tok.name === 'endArray') {
          this.state = this.key === 'features' ? 'top' : 'end';
          return undefined;
        }
        this.state = 'item';
        return this.begin(tok, this.index >= this.skip) ? this.itemDone() : undefined;
      case 'item':
        return this.feed(tok) ? this.itemDone() : undefined;
      default:
        return undefined;
    }
  }

  private itemDone(): RawItem | undefined {
    const done = this.index >= this.skip ? { index: this.index, item: this.asm?.current } : undefined;
    this.asm = null;
    this.index++;
    this.state = 'features';
    return done;
  }
}

/** Thrown inside a pass when parsing fails in the chunk starting at `offset` (located by a second pass). */
class ChunkError extends Error {
  constructor(
    readonly offset: number,
    readonly reason: unknown,
  ) {
    super('parse error');
  }
}

/**
 * Finds where a parse error is: walks the file again up to the failing chunk, then feeds that chunk
 * one character at a time so the walker stops exactly at the error. Returns the walker's position.
 */
async function locateError(path: string, failing: number, maxBytes: number): Promise<string> {
  const walker = new DocumentWalker({ members: {}, collection: false }, Number.MAX_SAFE_INTEGER, maxBytes);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  try {
    for await (const chunk of readChunks(path)) {
      if (offset < failing) {
        walker.push(decoder.decode(chunk, { stream: true }));
      } else {
        const text = new TextDecoder('utf-8').decode(chunk, { stream: true });
        const bad = text.indexOf('\uFFFD');
        for (const c of bad === -1 ? text : text.slice(0, bad)) walker.push(c);
        if (bad !== -1) return walker.where();
        walker.push(FLUSH);
        return walker.where();
      }
      offset += chunk.length;
    }
    walker.push(FLUSH);
  } catch {
    return walker.where();
  }
  return walker.where();
}

/** True when the document's first value is an array (not an object holding `features`). */
async function isBareArray(path: string, options: ReadOptions): Promise<boolean> {
  for await (const chunk of readChunks(path, { ...(options.signal ? { signal: options.signal } : {}) })) {
    for (const byte of chunk) {
      if (byte === 0x5b) return true;
      if (
        byte !== 0x20 &&
        byte !== 0x0a &&
        byte !== 0x0d &&
        byte !== 0x09 &&
        byte !== 0xef &&
        byte !== 0xbb &&
        byte !== 0xbf
      )
        return false;
    }
  }
  return false;
}

/** rawFeatures by the tokenizing walker: each token an object (only for documents the splitter leaves alone). */
async function* tokenizedFeatures(
  path: string,
  options: ReadOptions,
  top: TopLevel,
): AsyncGenerator<RawItem[]> {
  const maxBytes = limitsOf(options.limits).maxFeatureBytes;
  const walker = new DocumentWalker(top, options.skip ?? 0, maxBytes);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  try {
    for await (const chunk of readChunks(path, options)) {
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch (error) {
        throw new ChunkError(offset, error);
      }
      // Parsed in slices so only a slice's tokens and features are alive at a time.
      for (let from = 0; from < text.length; from += PARSE_SLICE) {
        let items: RawItem[];
        try {
          items = walker.push(text.slice(from, from + PARSE_SLICE));
        } catch (error) {
          throw new ChunkError(offset, error);
        }
        if (items.length > 0) yield items;
      }
      offset += chunk.length;
    }
    let items: RawItem[];
    try {
      items = [...walker.push(decoder.decode()), ...walker.push(FLUSH)];
    } catch (error) {
      throw new ChunkError(offset, error);
    }
    if (items.length > 0) yield items;
    if (walker.state !== 'end')
      throw new ChunkError(offset, new Error('the file ends before the JSON is complete'));
  } catch (caught) {
    if (!(caught instanceof ChunkError)) throw asInputError(caught, 'malformed_json', 'Malformed GeoJSON');
    const error = caught.reason;
    if (error instanceof ImportInputError || isAbortError(error)) throw error;
    const where = await locateError(path, caught.offset, maxBytes);
    if (isInvalidUtf8(error)) throw invalidUtf8(where);
    throw asInputError(error, 'malformed_json', `Malformed JSON in ${where}`);
  }
}

/** A raw item as a SourceFeature; throws 'invalid_feature' naming the index when it isn't a Feature. */
const toFeature = (item: unknown, index: number): SourceFeature => {
  if (item === null || typeof item !== 'object' || (item as { type?: unknown }).type !== 'Feature') {
    throw new ImportInputError(
      'invalid_feature',
      `Feature ${index} is not a GeoJSON Feature (an object with "type": "Feature").`,
    );
  }
  const { properties, geometry } = item as { properties?: unknown; geometry?: unknown };
  return {
    properties:
      properties !== null && typeof properties === 'object' && !Array.isArray(properties)
        ? (properties as Record<string, unknown>)
        : {},
    geometry: (geometry ?? null) as SourceGeometry | null,
  };
};

/** A feature of the document and its index. */
type IndexedFeature = { index: number; feature: SourceFeature };

/**
 * The features of the document, whatever its shape (collection, single Feature, bare geometry),
 * in order and a batch at a time (as rawFeatures reads them).
 */
async function* documentFeatures(
  path: string,
  options: ReadOptions,
  top: TopLevel,
  tailFrom?: number,
): AsyncGenerator<IndexedFeature[]> {
  for await (const items of rawFeatures(path, options, top, tailFrom)) {
    options.signal?.throwIfAborted();
    const batch: IndexedFeature[] = [];
    for (const { index, item, end } of items) {
      let feature: SourceFeature;
      try {
        feature = toFeature(item, index);
      } catch (error) {
        // The features before it are read as they were one at a time; then the error.
        if (batch.length > 0) yield batch;
        throw error;
      }
      if (end !== undefined) feature.end = end;
      batch.push({ index, feature });
    }
    yield batch;
  }
  if (top.collection) return;
  const { type } = top.members;
  if (type === 'Feature') {
    if ((options.skip ?? 0) === 0) yield [{ index: 0, feature: toFeature(top.members, 0) }];
  } else if (typeof type === 'string' && type !== 'FeatureCollection' && 'coordinates' in top.members) {
    if ((options.skip ?? 0) === 0) {
      yield [{ index: 0, feature: { properties: {}, geometry: top.members as SourceGeometry } }];
    }
  } else if (type === 'GeometryCollection') {
    if ((options.skip ?? 0) === 0) {
      yield [{ index: 0, feature: { properties: {}, geometry: top.members as SourceGeometry } }];
    }
  } else if (type !== 'FeatureCollection') {
    throw new ImportInputError(
      'invalid_geojson',
      'The file is JSON but not GeoJSON: expected a FeatureCollection, a Feature or a geometry.',
    );
  }
}

/**
 * Scans the document's features (from `part.from` on for a discovery's tail); for a head
 * (`part.to`), stops after the item whose bytes end exactly at `to` and answers true.
 */
async function scanFeatures(
  path: string,
  options: DiscoverOptions,
  top: TopLevel,
  scan: LayerScan,
  part?: PartSpec,
): Promise<boolean> {
  const to = part && 'to' in part ? part.to : undefined;
  const from = part && 'from' in part ? part.from : undefined;
  let passed = to === undefined;
  // Discovery only measures the coordinates: they come packed, not as arrays.
  for await (const batch of documentFeatures(path, { ...options, packCoordinates: true }, top, from)) {
    for (const { index, feature } of batch) {
      scan.count++;
      scan.fields.addProperties(feature.properties);
      const info =
        feature.geometry === null ? null : geometryInfo(feature.geometry, `feature ${index}`, scan.judging);
      scan.addGeometry(index, info);
      // Items end in order: the first to reach `to` ends there, or `to` was no item's end.
      if (!passed && feature.end !== undefined && feature.end >= (to as number)) {
        if (feature.end === to) return true;
        passed = true;
      }
    }
  }
  return false;
}

/** A GeoJSON discovery's scan: one layer named after the file. */
const geoJsonScan = (filename: string, options: DiscoverOptions) =>
  new LayerScan(layerNameOf(filename), undefined, limitsOf(options.limits).maxFields);

/** Discovery of a GeoJSON file: one layer named after the file. */
export async function discoverGeoJson(
  path: string,
  filename: string,
  sizeBytes: number,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const scan = geoJsonScan(filename, options);
  const top: TopLevel = { members: {}, collection: false };
  await scanFeatures(path, options, top, scan);
  return geoJsonDiscovery(scan, top.members, sizeBytes);
}

/**
 * One part of a GeoJSON file's discovery (ADR 0156), read alone: the head up to the item ending
 * at `to` (the whole discovery when no item ends there), or the tail after the item ending at
 * `from`.
 */
export async function discoverGeoJsonPart(
  path: string,
  filename: string,
  sizeBytes: number,
  part: PartSpec,
  options: DiscoverOptions = {},
): Promise<DiscoveryPart> {
  const scan = geoJsonScan(filename, options);
  const top: TopLevel = { members: {}, collection: false };
  if ('from' in part) {
    await scanFeatures(path, options, top, scan, part);
    return { kind: 'tail', format: 'geojson', scan: scan.snapshot(), first: 0, members: top.members };
  }
  if (await scanFeatures(path, options, top, scan, part)) {
    return { kind: 'head', format: 'geojson', scan: scan.snapshot(), lines: 0, members: top.members };
  }
  return { kind: 'whole', discovery: geoJsonDiscovery(scan, top.members, sizeBytes) };
}

/** The features of a GeoJSON file in file order, a chunk's at a time. */
export async function* readGeoJson(path: string, options: ReadOptions = {}): AsyncGenerator<SourceFeature[]> {
  const top: TopLevel = { members: {}, collection: false };
  for await (const batch of documentFeatures(path, options, top)) yield batch.map((f) => f.feature);
}
