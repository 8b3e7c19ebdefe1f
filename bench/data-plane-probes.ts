/**
 * The data-plane section's in-process instruments: the tile source the product renders the bench
 * layer with, the tile statement `renderTile` sends (caught on pg's Client.prototype.query), and
 * the round trips of one request of the use case (DynamoDB calls and PostgreSQL statements).
 */
import pg from 'pg';
import type { FeatureSource } from '#datasources/feature-items.ts';
import type { TileLayerSource } from '#datasources/vector-tiles.ts';
import type { Layer } from '#domain/layers.ts';
import { documentClient } from '#store/client.ts';
import type { RoundTrips } from './data-plane-types.ts';

/** The tile source `layer-data.ts` renders a described table layer with (its `tileSource`). */
export function tileSourceOf(layer: Pick<Layer, 'public_id'>, source: FeatureSource): TileLayerSource {
  if (source.kind !== 'table') throw new Error('the bench layer is a table layer');
  return {
    kind: 'table',
    schema: source.schema,
    table: source.table,
    name: layer.public_id,
    geometryColumn: source.geometryColumn,
    srid: source.srid,
    idColumn: source.idColumn,
    properties: source.properties.map((p) => p.name),
  };
}

/**
 * Runs `work` once and returns the tile statement it sent (text and values), caught on pg's
 * Client.prototype.query: the statement `renderTile` builds is private to vector-tiles.ts.
 */
export async function captureTileStatement(
  work: () => Promise<unknown>,
): Promise<{ text: string; values: unknown[] }> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let captured: { text: string; values: unknown[] } | undefined;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string; values?: unknown[] };
    const text = typeof first === 'string' ? first : first?.text;
    if (typeof text === 'string' && text.includes('WITH src AS')) {
      const values = typeof first === 'string' ? args[1] : first.values;
      captured = { text, values: (values as unknown[] | undefined) ?? [] };
    }
    return original.apply(this, args);
  };
  try {
    await work();
  } finally {
    proto.query = original;
  }
  if (!captured) throw new Error('renderTile sent no tile statement (WITH src AS …)');
  return captured;
}

/** The DynamoDB calls (on the product's document client) and PostgreSQL statements `work` sends. */
export async function countRoundTrips(work: () => Promise<unknown>): Promise<RoundTrips> {
  const out: RoundTrips = { dynamo: [], postgis: [] };
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = (typeof first === 'string' ? first : (first?.text ?? '')).replace(/\s+/g, ' ').trim();
    out.postgis.push(text.slice(0, 40));
    return query.apply(this, args);
  };
  const client = documentClient() as unknown as { send: (...args: unknown[]) => unknown };
  const send = client.send;
  client.send = function (this: unknown, ...args: unknown[]) {
    out.dynamo.push((args[0] as { constructor: { name: string } }).constructor.name.replace(/Command$/, ''));
    return send.apply(this, args);
  };
  try {
    await work();
  } finally {
    proto.query = query;
    client.send = send;
  }
  return out;
}
