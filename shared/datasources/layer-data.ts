/**
 * The data plane's {@link LayerData} port on PostGIS (ADR 0123): a layer's source is described
 * from its data source's catalog on every request (no cache: a changed table is served as it is
 * now), its items read by `feature-items.ts`, its tiles rendered by `vector-tiles.ts`.
 */
import type { ItemsAnswer, LayerData, ServedLayer, TileAnswer, TileBudget } from '#domain/data-plane.ts';
import { CRS84, type Crs, featureCrs, parseFeatureQuery } from '#domain/feature-query.ts';
import type { CollectionShape } from '#domain/ogc-documents.ts';
import type { Service } from '#domain/services.ts';
import {
  describeFeatureSource,
  type FeatureSource,
  featureQueryContext,
  readFeatureItem,
  readFeatureItems,
} from './feature-items.ts';
import type { PostgisConnection } from './postgis.ts';
import { parseTile, renderTile, type TileLayerSource } from './vector-tiles.ts';

/** Opens a service's connection details (its password decrypted). */
export type Connector = (service: Service) => Promise<PostgisConnection>;

/** Collections rendered at once into one workspace-wide tile. */
const TILE_PARALLELISM = 4;

function tileSource(layer: ServedLayer['layer'], source: FeatureSource): TileLayerSource {
  const common = {
    name: layer.public_id,
    geometryColumn: source.geometryColumn,
    srid: source.srid,
    idColumn: source.idColumn,
    properties: source.properties.map((p) => p.name),
  };
  return source.kind === 'table'
    ? { kind: 'table', schema: source.schema, table: source.table, ...common }
    : { kind: 'sql', sql: source.sql, ...common };
}

/**
 * How long a source's description is reused (ADR 0123): keyed by the layer's and the service's
 * versions, so a catalog change is read at once; a table altered behind the catalog's back (a
 * column added or dropped in the database) is seen within this.
 */
export const DESCRIPTION_TTL_MS = 5_000;
/** Descriptions kept per process at most (the oldest is dropped first). */
const MAX_DESCRIPTIONS = 512;

/** The LayerData port over PostGIS connections opened by `connect`. */
export function postgisLayerData(connect: Connector, now: () => number = Date.now): LayerData {
  const descriptions = new Map<string, { at: number; source: Promise<FeatureSource> }>();
  const describe = (c: PostgisConnection, served: ServedLayer): Promise<FeatureSource> => {
    const { layer, service } = served;
    const key = `${service.id}@${service.version}/${layer.id}@${layer.version}`;
    const kept = descriptions.get(key);
    if (kept && now() - kept.at < DESCRIPTION_TTL_MS) return kept.source;
    const source = describeFeatureSource(c, layer);
    descriptions.delete(key);
    descriptions.set(key, { at: now(), source });
    if (descriptions.size > MAX_DESCRIPTIONS) descriptions.delete(descriptions.keys().next().value as string);
    // A failed description is not kept: the next request asks again.
    source.catch(() => {
      if (descriptions.get(key)?.source === source) descriptions.delete(key);
    });
    return source;
  };
  const described = async (served: ServedLayer) => {
    const c = await connect(served.service);
    return { c, source: await describe(c, served) };
  };
  return {
    async shape(served): Promise<CollectionShape> {
      const { source } = await described(served);
      return {
        crs: source.crs,
        storageCrs: (source.crs.find((x) => x.srid === source.srid && x.uri !== CRS84) as Crs).uri,
        queryables: source.properties,
        temporal: Boolean(source.time),
      };
    },
    async items(served, params, settings, nextHref, selfHref): Promise<ItemsAnswer> {
      const { c, source } = await described(served);
      const query = parseFeatureQuery(params, featureQueryContext(source, settings));
      const page = await readFeatureItems(c, source, query, served.layer.public_id, { nextHref });
      return {
        body: {
          ...page.collection,
          links: [
            { href: selfHref, rel: 'self', type: 'application/geo+json', title: 'This page' },
            ...page.collection.links,
          ],
          timeStamp: new Date().toISOString(),
        },
        contentCrs: page.contentCrs,
      };
    },
    async item(served, featureId, crsParam): Promise<ItemsAnswer> {
      const { c, source } = await described(served);
      const crs = featureCrs(source.crs, crsParam);
      const item = await readFeatureItem(c, source, featureId, served.layer.public_id, crs);
      return { body: { ...item.feature }, contentCrs: item.contentCrs };
    },
    async tile(layers, address, budget: TileBudget): Promise<TileAnswer> {
      // The address is checked before any read, so a bad one is a 400/404 even with no collection.
      parseTile(address);
      const parts: { bytes: Uint8Array; features: number; truncated: boolean }[] = [];
      for (let i = 0; i < layers.length; i += TILE_PARALLELISM) {
        const batch = layers.slice(i, i + TILE_PARALLELISM);
        parts.push(
          ...(await Promise.all(
            batch.map(async (served) => {
              const { c, source } = await described(served);
              return renderTile(c, tileSource(served.layer, source), address, budget);
            }),
          )),
        );
      }
      // Each part is a whole Tile message of one layer; concatenated protobuf messages merge, so
      // the bytes together are one tile with one layer per collection.
      const bytes = Buffer.concat(parts.map((p) => p.bytes));
      return {
        bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        features: parts.reduce((n, p) => n + p.features, 0),
        truncated: parts.some((p) => p.truncated),
      };
    },
  };
}
