/**
 * Features as the rows the loader stages (ADR 0085, ADR 0107): each property cast to its staged
 * column's type, the geometry as the text PostGIS reads, column by column in batches. The format
 * reader's thread builds them, so what crosses to the loader is arrays of numbers and strings, not
 * one object graph per feature: structured clone copies those ~10× faster, and the loader's own
 * thread no longer casts values or writes WKB.
 */
import type { FieldType, SourceFeature } from '#domain/import-sources.ts';
import { castValue, MISFIT } from './database-values.ts';
import { GeometryShapeError, geometryText } from './geometry-text.ts';

/** A staged column: `name` is the plan's target. */
export interface StagedColumn {
  name: string;
  /** The property name in the source. */
  source: string;
  type: FieldType;
}

/** What a layer's rows hold: its staged columns, and whether it has a geometry column. */
export interface RowShape {
  /** The layer's public id, for messages. */
  label: string;
  columns: StagedColumn[];
  geometry: boolean;
}

/** A value as staged: the text, number or boolean of its column's type, or null. */
export type StagedValue = string | number | boolean | null;

/** Consecutive features of a layer as staged rows, column-wise; one entry per row in each array. */
export interface RowBatch {
  count: number;
  /** One array per staged column (the shape's order). */
  values: StagedValue[][];
  /** Geometry text per row (hex WKB or WKT), null for no geometry; empty when the shape has none. */
  geometries: (string | null)[];
  /** The values that didn't fit their column (left null): row and column index, pair after pair. */
  misfits: number[];
  /** About how many bytes each row's text takes. */
  sizes: number[];
  /** How far the reader had read in the file when each row was read. */
  positions: number[];
  /** Where the feature after each row begins in the file; null when the reader didn't say. */
  ends: (number | null)[];
  /** With `ends`: the lines before it, when the reader numbered them. */
  lines: (number | null)[];
  /**
   * The feature after the batch's last row can't be staged (its geometry can't be read): the
   * message naming it. Nothing is read after it.
   */
  failure?: string;
}

/** When a batch is handed on: at this many rows, bytes or milliseconds of filling, whichever comes first. */
export interface BatchBounds {
  features: number;
  bytes: number;
  ms: number;
}

export const DEFAULT_BOUNDS: BatchBounds = { features: 500, bytes: 1024 ** 2, ms: 20 };

export function emptyBatch(shape: Pick<RowShape, 'columns'>): RowBatch {
  return {
    count: 0,
    values: shape.columns.map(() => []),
    geometries: [],
    misfits: [],
    sizes: [],
    positions: [],
    ends: [],
    lines: [],
  };
}

/**
 * Appends one feature as a row (values cast, geometry as text); returns the row's approximate
 * size in bytes. Throws GeometryShapeError for a geometry that can't be written; the batch is
 * then unchanged.
 */
export function addRow(batch: RowBatch, shape: RowShape, feature: SourceFeature, position: number): number {
  let size = 16;
  let geometry: string | null = null;
  if (shape.geometry && feature.geometry) {
    geometry = geometryText(feature.geometry);
    size += geometry.length;
  }
  const row = batch.count;
  const properties = feature.properties ?? {};
  for (let i = 0; i < shape.columns.length; i++) {
    const column = shape.columns[i] as StagedColumn;
    let value = castValue(properties[column.source], column.type);
    if (value === MISFIT) {
      batch.misfits.push(row, i);
      value = null;
    }
    if (typeof value === 'string') size += value.length;
    else if (value !== null) size += 8;
    (batch.values[i] as StagedValue[]).push(value);
  }
  if (shape.geometry) batch.geometries.push(geometry);
  batch.sizes.push(size);
  batch.positions.push(position);
  batch.ends.push(feature.end ?? null);
  batch.lines.push(feature.lines ?? null);
  batch.count += 1;
  return size;
}

/** Appends rows `from` up to `to` of `source` to `target` (same shape). */
export function appendRows(target: RowBatch, source: RowBatch, from: number, to: number): void {
  if (to <= from) return;
  const offset = target.count - from;
  for (let c = 0; c < source.values.length; c++) {
    const into = target.values[c] as StagedValue[];
    const values = source.values[c] as StagedValue[];
    for (let r = from; r < to; r++) into.push(values[r] as StagedValue);
  }
  for (let r = from; r < to; r++) {
    if (source.geometries.length > 0) target.geometries.push(source.geometries[r] ?? null);
    target.sizes.push(source.sizes[r] as number);
    target.positions.push(source.positions[r] as number);
    target.ends.push(source.ends[r] ?? null);
    target.lines.push(source.lines[r] ?? null);
  }
  for (let i = 0; i < source.misfits.length; i += 2) {
    const row = source.misfits[i] as number;
    if (row >= from && row < to) target.misfits.push(row + offset, source.misfits[i + 1] as number);
  }
  target.count += to - from;
}

/** Each feature of a source that reads one at a time as a batch of its own (rowBatches reads batches). */
export async function* oneByOne(features: AsyncIterable<SourceFeature>): AsyncGenerator<SourceFeature[]> {
  for await (const feature of features) yield [feature];
}

/**
 * The features (read a batch at a time) as row batches, bounded by `bounds`; feature `firstFid`
 * is the first. A geometry that can't be written ends the batches: the last one carries the
 * failure naming its feature. `position()` says how far the reader has read.
 */
export async function* rowBatches(
  features: AsyncIterable<readonly SourceFeature[]>,
  shape: RowShape,
  firstFid: number,
  position: () => number,
  bounds: BatchBounds = DEFAULT_BOUNDS,
): AsyncGenerator<RowBatch> {
  let batch = emptyBatch(shape);
  let bytes = 0;
  let started = performance.now();
  let fid = firstFid;
  for await (const read of features) {
    for (const feature of read) {
      try {
        bytes += addRow(batch, shape, feature, position());
      } catch (error) {
        if (!(error instanceof GeometryShapeError)) throw error;
        batch.failure = `layer ${shape.label}: feature ${fid} has a geometry that can't be read (${error.message}).`;
        yield batch;
        return;
      }
      fid += 1;
      if (
        batch.count >= bounds.features ||
        bytes >= bounds.bytes ||
        performance.now() - started >= bounds.ms
      ) {
        yield batch;
        batch = emptyBatch(shape);
        bytes = 0;
        started = performance.now();
      }
    }
  }
  if (batch.count > 0) yield batch;
}
