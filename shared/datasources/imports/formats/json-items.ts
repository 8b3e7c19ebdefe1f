/**
 * The GeoJSON document's items found at byte level (ADR 0143): where each member of the top-level
 * object and each item of `features` (or of a bare top-level array) begins and ends is found by
 * scanning bytes (strings, escapes, nesting) without tokenizing; each value is then read by one
 * `JSON.parse` of its own bytes. No object per token, and items before `skip` are not parsed at all.
 *
 * It reads the shapes a GeoJSON file has (a top-level object or array). Anything else — another
 * top level, or bytes that are not JSON or not UTF-8 — is left to the tokenizing walker in
 * geojson.ts, which says exactly where the file is wrong: `NotSplittable` before the first item,
 * `SplitError` (with the offset of the chunk the value began in) after.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { ImportInputError } from '#domain/import-sources.ts';
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isSpace,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
} from './json-bytes.ts';
import type { CoordinatePacker } from './packed-coordinates.ts';

/** One value of the document: a feature item (`index` ≥ 0) and where its bytes end in the file. */
export interface SplitItem {
  index: number;
  item: unknown;
  /** The file offset just past the item's last byte. */
  end: number;
}

/** The top level isn't an object or an array: the tokenizing walker reads this file. */
export class NotSplittable extends Error {}

/** A value that is not JSON (or not UTF-8); `chunkOffset` is where the chunk it began in starts. */
export class SplitError extends Error {
  constructor(
    readonly chunkOffset: number,
    readonly reason: Error,
  ) {
    super(reason.message);
  }
}

/** What the top level of the document held besides the features. */
export interface TopLevel {
  members: Record<string, unknown>;
  /** True when a `features` array was found (or the document is a bare array). */
  collection: boolean;
}

/**
 * Where a reading of the document is, in a message's words ("feature 12"): the same for the
 * splitter and the tokenizing walker, so a located error reads alike whichever found it.
 */
export function placeIn(
  at: 'feature' | 'start' | 'end' | 'member',
  top: TopLevel,
  key: string,
  index: number,
): string {
  if (at === 'feature') return `feature ${index}`;
  if (at === 'start') return 'the start of the file';
  if (at === 'end') return 'the end of the file';
  return top.collection
    ? `the top-level member ${JSON.stringify(key)} after feature ${index - 1}`
    : `the top-level member ${JSON.stringify(key)}`;
}

/** The TypeError a fatal TextDecoder throws, so callers treat both alike. */
function notUtf8(): Error {
  const error = new TypeError('The encoded data was not valid for encoding utf-8');
  (error as { code?: string }).code = 'ERR_ENCODING_INVALID_ENCODED_DATA';
  return error;
}

type Mode = 'start' | 'top' | 'colon' | 'value' | 'features' | 'end';
type Capture = 'key' | 'member' | 'item';
/** An item read whole from the current chunk, waiting to be parsed: its index and bytes. */
type Pending = { index: number; from: number; end: number };

/**
 * At most this much of a chunk's text goes to one JSON.parse (a longer item goes alone). V8 keeps a
 * string over ~128 KB in pages of its own, mapped fresh for it and unmapped when it is collected, so
 * a parse of a whole 1 MiB chunk paid a first-write page fault per 4 KiB of its text, in the copy
 * and again in the flattening; pieces this size live in the young generation, whose pages are
 * reused (ADR 0143). 32 KiB stays under that size even as a two-byte string (UTF-8 outside ASCII).
 */
export const PARSE_BYTES = 32 * 1024;

/**
 * Splits a GeoJSON document fed chunk by chunk (`push`, then `finish`). Keeps only the value being
 * read (at most `maxBytes` of it) between chunks.
 */
export class ItemSplitter {
  mode: Mode = 'start';
  /** The items of `features` (or a bare array) read so far, skipped ones included. */
  index = 0;
  private bare = false;
  /** Inside the object or array: just opened, after a value, or after a ',' (a value must follow). */
  private between: 'open' | 'value' | 'comma' = 'open';
  private key = '';
  // The value being captured.
  private capture: Capture | null = null;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private startOffset = 0;
  private startChunk = 0;
  private nest = 0;
  private inString = false;
  private escape = false;
  private scalar = false;
  /** Items read whole from the current chunk, parsed a run at a time as they are taken (see runs). */
  private pending: Pending[] = [];

  /**
   * @param packer when given, the geometry coordinates of items read whole from a chunk are packed
   *   from their bytes (packed-coordinates.ts) instead of parsed into arrays.
   */
  constructor(
    readonly top: TopLevel,
    private readonly skip: number,
    private readonly maxBytes: number,
    private readonly packer?: CoordinatePacker,
  ) {}

  /**
   * Starts in the features array (a bare top-level array when `bare`) at item `index`, fed from
   * the file offset just past item `index - 1` (`afterItem`; a discovery's tail counts its items
   * from 0 after one, ADR 0156).
   */
  resumeAt(index: number, bare: boolean, afterItem = index > 0): void {
    this.mode = 'features';
    this.top.collection = true;
    this.bare = bare;
    this.key = bare ? '' : 'features';
    this.index = index;
    this.between = afterItem ? 'value' : 'open';
  }

  /** Where the split is, for messages ("feature 12"), as the tokenizing walker says it. */
  where(): string {
    const at =
      this.capture === 'item' || this.mode === 'features'
        ? 'feature'
        : this.mode === 'start' || this.mode === 'end'
          ? this.mode
          : 'member';
    return placeIn(at, this.top, this.key, this.index);
  }

  /**
   * Feeds the chunk that starts at file offset `offset`; yields the feature items it completed, in
   * order, a run at a time: each run is parsed as it is taken, so what is live at once is one run's
   * items, not the chunk's (ADR 0143). Take every run before the next push.
   */
  *push(chunk: Buffer, offset: number): Generator<SplitItem[]> {
    const out: SplitItem[] = [];
    try {
      this.split(chunk, offset, out);
    } catch (error) {
      // An item before the error that isn't JSON was the first thing wrong: its error goes first.
      this.flush(chunk, offset, out);
      throw error;
    }
    // An item completed from earlier chunks is the chunk's first: the items read whole follow it.
    if (out.length > 0) yield out;
    yield* this.runs(chunk, offset);
  }

  private split(chunk: Buffer, offset: number, out: SplitItem[]): void {
    const n = chunk.length;
    let i = 0;
    if (this.capture !== null) {
      const end = this.scan(chunk, 0);
      if (end < 0) {
        this.keep(chunk, 0, offset);
        return;
      }
      this.complete(chunk, 0, end, offset, out);
      i = end;
    }
    while (i < n) {
      const c = chunk[i] as number;
      if (isSpace(c)) {
        i++;
        continue;
      }
      switch (this.mode) {
        case 'start':
          if (offset + i === 0 && c === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
            i += 3;
            continue;
          }
          if (c === OPEN_OBJECT) this.mode = 'top';
          else if (c === OPEN_ARRAY) {
            this.top.collection = true;
            this.bare = true;
            this.mode = 'features';
          } else throw new NotSplittable();
          i++;
          continue;
        case 'top':
          if (c === CLOSE_OBJECT && this.between !== 'comma') {
            this.mode = 'end';
            i++;
            continue;
          }
          if (this.separator(c)) {
            i++;
            continue;
          }
          if (c !== QUOTE || this.between === 'value') throw this.syntax(offset, c);
          this.begin('key', chunk, i, offset);
          break;
        case 'colon':
          if (c !== COLON) throw this.syntax(offset, c);
          this.mode = 'value';
          i++;
          continue;
        case 'value':
          if (this.key === 'features' && c === OPEN_ARRAY && !this.top.collection) {
            this.top.collection = true;
            this.mode = 'features';
            this.between = 'open';
            i++;
            continue;
          }
          this.begin('member', chunk, i, offset);
          break;
        case 'features':
          if (c === CLOSE_ARRAY && this.between !== 'comma') {
            this.mode = this.bare ? 'end' : 'top';
            this.between = 'value';
            i++;
            continue;
          }
          if (this.separator(c)) {
            i++;
            continue;
          }
          if (this.between === 'value') throw this.syntax(offset, c);
          this.begin('item', chunk, i, offset);
          break;
        case 'end':
          throw this.syntax(offset, c);
      }
      // A value begins at i.
      const from = i;
      const end = this.scan(chunk, i + 1);
      if (end < 0) {
        this.keep(chunk, from, offset);
        return;
      }
      this.complete(chunk, from, end, offset, out);
      i = end;
    }
    return;
  }

  /** The end of the input: throws when the document isn't complete. */
  finish(offset: number): void {
    if (this.capture !== null) {
      throw new SplitError(this.startChunk, new Error('the file ends before the JSON is complete'));
    }
    if (this.mode !== 'end') {
      throw new SplitError(offset, new Error('the file ends before the JSON is complete'));
    }
  }

  /** A ',' after a value: a value must follow. */
  private separator(c: number): boolean {
    if (c !== COMMA || this.between !== 'value') return false;
    this.between = 'comma';
    return true;
  }

  private syntax(offset: number, c: number): SplitError {
    return new SplitError(
      offset,
      new Error(`unexpected character ${JSON.stringify(String.fromCharCode(c))}`),
    );
  }

  /** Starts capturing a value whose first byte is chunk[i]. */
  private begin(capture: Capture, chunk: Buffer, i: number, offset: number): void {
    const c = chunk[i] as number;
    this.capture = capture;
    this.parts = [];
    this.partBytes = 0;
    this.startOffset = offset + i;
    this.startChunk = offset;
    this.escape = false;
    this.scalar = false;
    this.inString = false;
    this.nest = 0;
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) this.nest = 1;
    else if (c === QUOTE) this.inString = true;
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === COMMA || c === COLON)
      throw this.syntax(offset, c);
    else this.scalar = true;
  }

  /** Scans the captured value from chunk[i]: the offset just past its end, or -1 when it goes on. */
  private scan(chunk: Buffer, i: number): number {
    const n = chunk.length;
    if (this.scalar) {
      for (; i < n; i++) {
        const c = chunk[i] as number;
        if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) return i;
      }
      return -1;
    }
    let nest = this.nest;
    let inString = this.inString;
    let escaped = this.escape;
    for (; i < n; i++) {
      const c = chunk[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (nest === 0) {
            this.inString = false;
            return i + 1;
          }
        }
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_OBJECT || c === OPEN_ARRAY) nest++;
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        nest--;
        if (nest === 0) {
          this.nest = 0;
          return i + 1;
        }
      }
    }
    this.nest = nest;
    this.inString = inString;
    this.escape = escaped;
    return -1;
  }

  /** Keeps the captured value's bytes from chunk[from] on (the chunk ended inside it). */
  private keep(chunk: Buffer, from: number, offset: number): void {
    this.partBytes += chunk.length - from;
    this.checkSize(offset + chunk.length);
    this.parts.push(Buffer.from(chunk.subarray(from)));
  }

  private checkSize(endOffset: number): void {
    if (this.capture === 'key') return;
    if (endOffset - this.startOffset > this.maxBytes) {
      throw new ImportInputError(
        'feature_too_large',
        `${this.where()} is larger than the limit of ${this.maxBytes} bytes; split or simplify it.`,
      );
    }
  }

  /** The items kept from `chunk`, in order, parsed in runs of at most {@link PARSE_BYTES} as they are taken. */
  private *runs(chunk: Buffer, offset: number): Generator<SplitItem[]> {
    const pending = this.pending;
    this.pending = [];
    for (let i = 0; i < pending.length; ) {
      const from = (pending[i] as Pending).from;
      let j = i + 1;
      while (j < pending.length && (pending[j] as Pending).end - from <= PARSE_BYTES) j++;
      const out: SplitItem[] = [];
      this.parseRun(chunk, offset, pending.slice(i, j), out);
      yield out;
      i = j;
    }
  }

  /** Parses the items kept from `chunk` into `out` at once. */
  private flush(chunk: Buffer, offset: number, out: SplitItem[]): void {
    for (const run of this.runs(chunk, offset)) out.push(...run);
  }

  /**
   * Only commas and white space lie between the items of a run (the split checked that), so their
   * bytes from the first's start to the last's end are the inside of a JSON array: one JSON.parse
   * reads them all, instead of one call, one UTF-8 check and one string per item. When that fails,
   * each is parsed on its own, so the error is the first bad item's, as it would be read alone.
   */
  private parseRun(chunk: Buffer, offset: number, pending: Pending[], out: SplitItem[]): void {
    const first = pending[0] as Pending;
    const last = pending[pending.length - 1] as Pending;
    const bytes = chunk.subarray(first.from, last.end);
    let values: unknown[] | undefined;
    // ASCII text (most files) is UTF-8 read as Latin-1, which Node decodes many times faster.
    const encoding = isAscii(bytes) ? 'latin1' : isUtf8(bytes) ? 'utf8' : undefined;
    if (encoding) {
      try {
        values = this.packer
          ? this.parsePacked(chunk, pending, this.packer, encoding)
          : (JSON.parse(`[${bytes.toString(encoding)}]`) as unknown[]);
      } catch {
        values = undefined;
      }
    }
    if (values === undefined || values.length !== pending.length) {
      values = pending.map(({ from, end }) => {
        const one = chunk.subarray(from, end);
        if (!isUtf8(one)) throw new SplitError(offset, notUtf8());
        try {
          return JSON.parse(one.toString('utf8')) as unknown;
        } catch (error) {
          throw new SplitError(offset, error as Error);
        }
      });
    }
    for (let k = 0; k < pending.length; k++) {
      const { index, end } = pending[k] as Pending;
      out.push({ index, item: values[k], end: offset + end });
    }
  }

  /**
   * The items of `pending` parsed by one JSON.parse with their geometry coordinates packed: each
   * packed array is cut from the text (a 0 stands in its place) and put back as PackedCoordinates.
   * An item whose parsed geometry doesn't hold the 0 where the array was is parsed again whole.
   */
  private parsePacked(
    chunk: Buffer,
    pending: { from: number; end: number }[],
    packer: CoordinatePacker,
    encoding: 'latin1' | 'utf8',
  ): unknown[] {
    const first = pending[0] as (typeof pending)[number];
    const last = pending[pending.length - 1] as (typeof pending)[number];
    // The search for coordinates ends with the run: one without any doesn't scan the rest of the chunk.
    const packed = packer.items(chunk.subarray(0, last.end), pending);
    const spans = packer.done();
    let text = '[';
    let at = first.from;
    for (const span of spans) {
      text += `${chunk.toString(encoding, at, span.start)}0`;
      at = span.stop;
    }
    text += `${chunk.toString(encoding, at, last.end)}]`;
    const values = JSON.parse(text) as unknown[];
    let s = 0;
    for (let k = 0; k < pending.length; k++) {
      if (!packed[k]) continue;
      const span = spans[s++] as (typeof spans)[number];
      const geometry = (values[k] as { geometry?: { coordinates?: unknown } } | null)?.geometry;
      if (geometry !== null && typeof geometry === 'object' && geometry.coordinates === 0) {
        geometry.coordinates = span.coordinates;
      } else {
        const { from, end } = pending[k] as (typeof pending)[number];
        values[k] = JSON.parse(chunk.toString(encoding, from, end));
      }
    }
    return values;
  }

  /** The captured value ends at chunk[end - 1]: reads it and moves on. */
  private complete(chunk: Buffer, from: number, end: number, offset: number, out: SplitItem[]): void {
    const capture = this.capture as Capture;
    this.checkSize(offset + end);
    const skipped = capture === 'item' && this.index < this.skip;
    if (capture === 'item' && !skipped && this.parts.length === 0) {
      // Read whole from this chunk: parsed with the chunk's other items in one JSON.parse.
      this.pending.push({ index: this.index, from, end });
      this.capture = null;
      this.index++;
      this.between = 'value';
      return;
    }
    let value: unknown;
    if (!skipped) {
      const bytes =
        this.parts.length === 0
          ? chunk.subarray(from, end)
          : Buffer.concat([...this.parts, chunk.subarray(from, end)]);
      if (!isUtf8(bytes)) throw new SplitError(this.startChunk, notUtf8());
      try {
        value = JSON.parse(bytes.toString('utf8'));
      } catch (error) {
        throw new SplitError(this.startChunk, error as Error);
      }
    }
    this.capture = null;
    this.parts = [];
    this.partBytes = 0;
    switch (capture) {
      case 'key':
        if (typeof value !== 'string')
          throw new SplitError(this.startChunk, new Error('a key must be a string'));
        this.key = value;
        this.mode = 'colon';
        return;
      case 'member':
        this.top.members[this.key] = value;
        this.mode = 'top';
        this.between = 'value';
        return;
      case 'item':
        this.flush(chunk, offset, out);
        if (!skipped) out.push({ index: this.index, item: value, end: offset + end });
        this.index++;
        this.between = 'value';
    }
  }
}
