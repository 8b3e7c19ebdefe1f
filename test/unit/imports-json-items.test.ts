import { describe, expect, it, vi } from 'vitest';
import {
  ItemSplitter,
  PARSE_BYTES,
  SplitError,
  type SplitItem,
} from '#datasources/imports/formats/json-items.ts';
import { CoordinatePacker } from '#datasources/imports/formats/packed-coordinates.ts';
import { point } from '../fixtures/imports/support.ts';

const square = (i: number) => ({
  type: 'Feature',
  properties: { i },
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [i, 0],
        [i + 0.5, 0],
        [i + 0.5, 0.5],
        [i, 0.5],
        [i, 0],
      ],
    ],
  },
});

/** The document as one chunk, split; every JSON.parse call's text recorded. */
function split(
  features: unknown[],
  packer?: CoordinatePacker,
  text = JSON.stringify({ type: 'FeatureCollection', features }),
) {
  const parse = vi.spyOn(JSON, 'parse');
  try {
    const splitter = new ItemSplitter({ members: {}, collection: false }, 0, 1024 ** 2, packer);
    const items = [...splitter.push(Buffer.from(text), 0)].flat();
    splitter.finish(text.length);
    return { items, texts: parse.mock.calls.map(([t]) => String(t)) };
  } finally {
    parse.mockRestore();
  }
}

const featuresIn = (text: string) => text.split('"Feature"').length - 1;

describe('ItemSplitter: the items of a chunk', () => {
  it('are parsed in runs of at most PARSE_BYTES of text (a larger item alone), in order, with their values and coordinates (ADR 0143)', () => {
    // Prepare: ~300 KB in one chunk, points and packed squares alike, one item of 100 KB in the middle
    const big = (i: number) => ({ ...point(i, 0), properties: { i, name: 'x'.repeat(100_000) } });
    const files = {
      points: Array.from({ length: 3_000 }, (_, i) => (i === 1_500 ? big(i) : point(i % 180, 0, { i }))),
      squares: Array.from({ length: 3_000 }, (_, i) => (i === 1_500 ? big(i) : square(i))),
    };
    for (const [name, features] of Object.entries(files)) {
      // Act
      const { items, texts } = split(features, name === 'squares' ? new CoordinatePacker() : undefined);

      // Assess: every item, in order, as written
      expect(items.map((s) => s.index)).toEqual(features.map((_, i) => i));
      expect(items.map((s) => (s.item as { properties: { i: number } }).properties.i)).toEqual(
        features.map((f) => f.properties.i),
      );
      const bigItem = (items[1_500] as SplitItem).item as { properties: { name: string } };
      expect(bigItem.properties.name).toHaveLength(100_000);
      const last = items.at(-1)?.item as { geometry: { coordinates: { unpack?: () => unknown } } };
      const coordinates = last.geometry.coordinates.unpack?.() ?? last.geometry.coordinates;
      expect(coordinates).toEqual(
        name === 'squares' ? square(2_999).geometry.coordinates : point(2_999 % 180, 0).geometry.coordinates,
      );
      // The runs: many, each of several items within PARSE_BYTES; the big item parsed alone.
      const runs = texts.filter((t) => featuresIn(t) > 1);
      expect(runs.length).toBeGreaterThan(8);
      expect(Math.max(...runs.map((t) => t.length))).toBeLessThanOrEqual(PARSE_BYTES + 2);
      expect(texts.filter((t) => t.length > 100_000).map(featuresIn)).toEqual([1]);
      expect(runs.reduce((n, t) => n + featuresIn(t), 0)).toBe(features.length - 1);
    }
  });

  it('name the first bad item when one in a later run is not JSON, as one parse of the chunk would', () => {
    // Prepare: a malformed item far past the first run
    const features = Array.from({ length: 3_000 }, (_, i) =>
      point(i % 180, 0, { i, mark: i === 2_500 ? 'BAD' : 'ok' }),
    );
    const text = JSON.stringify({ type: 'FeatureCollection', features }).replace('"BAD"', 'BAD');

    // Act
    let caught: unknown;
    try {
      split([], undefined, text);
    } catch (error) {
      caught = error;
    }

    // Assess: the error is the item's own parse error, and the items before it were parsed
    expect(caught).toBeInstanceOf(SplitError);
    expect((caught as SplitError).reason).toBeInstanceOf(SyntaxError);
    expect((caught as SplitError).message).toMatch(/Unexpected token 'B'/);
  });
});

describe('ItemSplitter: a chunk handed on', () => {
  it('a run at a time, each parsed as it is taken, so one run of items is alive at once, not the chunk (ADR 0143)', () => {
    // Prepare: ~1 MB of points in one chunk, as the reader reads them
    const features = Array.from({ length: 6_000 }, (_, i) => point(i % 180, 0, { i, name: `point ${i}` }));
    const text = JSON.stringify({ type: 'FeatureCollection', features });
    const splitter = new ItemSplitter({ members: {}, collection: false }, 0, 1024 ** 2);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      // Act: take the chunk's first run, then the rest
      const runs = splitter.push(Buffer.from(text), 0);
      const first = runs.next();
      // (The top level's keys and members are parsed on their own: only parses of items count.)
      const itemParses = () => parse.mock.calls.filter(([t]) => featuresIn(String(t)) > 0).length;
      const parsedForFirst = itemParses();
      const rest = [...runs];
      splitter.finish(text.length);

      // Assess: the first run came from one parse of its own; the others followed, one parse each
      expect(first.done).toBe(false);
      const firstItems = first.value as SplitItem[];
      expect(parsedForFirst).toBe(1);
      expect(firstItems.length).toBeGreaterThan(1);
      expect(firstItems.length).toBeLessThan(features.length / 10);
      expect(rest.length).toBeGreaterThan(10);
      expect(itemParses()).toBe(1 + rest.length);
      expect([...firstItems, ...rest.flat()].map((s) => s.index)).toEqual(features.map((_, i) => i));
    } finally {
      parse.mockRestore();
    }
  });
});
