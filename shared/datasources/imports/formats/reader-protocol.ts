/** The messages between the format readers' client (reader-thread.ts) and their worker (ADR 0107). */
import type { CsvGeometry, SourceFeature } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import type { RowBatch, RowShape } from '../staged-rows.ts';
import type { PartSpec } from './discovery-parts.ts';
import type { ImportLimits } from './limits.ts';

/** Batches of features the worker may send before the client takes one. */
export const CREDITS = 8;

/** What the worker runs: one of direct.ts's readers. */
export type ReaderJob =
  | { op: 'sniff'; path: string; filename: string }
  | {
      op: 'discover';
      path: string;
      filename: string;
      limits?: Partial<ImportLimits>;
      /** One part of the file (ADR 0156): answers a DiscoveryPart instead of a Discovery. */
      part?: PartSpec;
    }
  | {
      op: 'read';
      path: string;
      filename: string;
      layer: string;
      skip?: number;
      offset?: number;
      lines?: number;
      csv?: CsvGeometry;
      encoding?: string;
      limits?: Partial<ImportLimits>;
      /** Answer staged rows of this shape instead of features (the loader's read, staged-rows.ts). */
      shape?: RowShape;
      /** Staged rows: none for the features from this one on (counted from the layer's first) until told (ADR 0150). */
      until?: number;
    };

/** Client → worker. */
export type ToReader =
  /** Run `job`, its temp files under `scratch` (a dir the client removes afterwards). */
  | { type: 'job'; id: number; job: ReaderJob; scratch: string }
  /** The client took a batch: the worker may send one more. */
  | { type: 'more'; id: number }
  /** The consumer moved how far it will read (ReadLimit): the rows stop before feature `until`. */
  | { type: 'until'; id: number; until: number }
  /** The consumer stopped early: end the job (its cleanup runs) and answer 'done'. */
  | { type: 'stop'; id: number };

/** An error as it crosses the thread boundary. */
export interface WireError {
  name: string;
  message: string;
  code?: ImportInputError['code'];
}

/** Worker → client. */
export type FromReader =
  /** The worker's modules are loaded. */
  | { type: 'ready' }
  /** The worker's event loop turned (it is not stuck in one synchronous step). */
  | { type: 'alive'; id: number }
  /** The reader's position in the file (discovery: forwarded as onBytes; a read also counts it alive). */
  | { type: 'bytes'; id: number; bytes: number }
  /** A batch of features, and the position in the file once they were read. */
  | { type: 'features'; id: number; features: SourceFeature[]; bytes: number | undefined }
  /** A batch of staged rows (a read with a shape), and the position in the file once they were read. */
  | { type: 'rows'; id: number; rows: RowBatch; bytes: number | undefined }
  /** The job ended: its value (sniff, discover) or the last position (read). */
  | { type: 'done'; id: number; value?: unknown; bytes?: number }
  | { type: 'error'; id: number; error: WireError };

/** An error as it crosses (an ImportInputError keeps its code). */
export const toWire = (error: unknown): WireError =>
  error instanceof ImportInputError
    ? { name: error.name, message: error.message, code: error.code }
    : error instanceof Error
      ? { name: error.name, message: error.message }
      : { name: 'Error', message: String(error) };

/** The error again on the client's side: an ImportInputError with its code, else a plain Error. */
export const fromWire = (wire: WireError): Error => {
  if (wire.name === 'ImportInputError' && wire.code) return new ImportInputError(wire.code, wire.message);
  const error = new Error(wire.message);
  error.name = wire.name;
  return error;
};
