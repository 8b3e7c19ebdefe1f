/**
 * The format readers on the calling thread (ADR 0084). Only the reader worker calls these
 * (ADR 0107): everyone else goes through index.ts, which runs them off the event loop.
 */
import { stat } from 'node:fs/promises';
import type { Discovery, ImportFormat, SourceFeature } from '#domain/import-sources.ts';
import { ImportInputError } from '#domain/import-sources.ts';
import { oneByOne } from '../staged-rows.ts';
import { discoverCsv, discoverCsvPart, readCsv } from './csv.ts';
import { type DiscoveryPart, type PartSpec, splits } from './discovery-parts.ts';
import { asInputError, isAbortError } from './errors.ts';
import { discoverFlatGeobuf, readFlatGeobuf } from './flatgeobuf.ts';
import { discoverGeoJson, discoverGeoJsonPart, readGeoJson } from './geojson.ts';
import { discoverGeoJsonSeq, discoverGeoJsonSeqPart, readGeoJsonSeq } from './geojsonseq.ts';
import { discoverGeoPackage, readGeoPackage } from './geopackage.ts';
import { limitsOf } from './limits.ts';
import { tooManyFields } from './scan.ts';
import { discoverShapefileZip, readShapefileZip } from './shapefile.ts';
import { sniffFormat as sniff } from './sniff.ts';
import { layerNameOf } from './source.ts';
import type { DiscoverOptions, ReadOptions } from './types.ts';

/** Sniffs the type from the bytes (the name is only a hint); throws ImportInputError('unsupported_format' | 'empty_file', …). */
export async function sniffFormat(path: string, filename: string): Promise<ImportFormat> {
  try {
    return await sniff(path, filename);
  } catch (error) {
    throw asInputError(error, 'unreadable_file', `${filename} cannot be read`);
  }
}

/** The discovery of the file's format (one full streaming pass). */
async function discoverFormat(path: string, filename: string, options: DiscoverOptions): Promise<Discovery> {
  const format = await sniff(path, filename, options.limits);
  const size = (await stat(path)).size;
  switch (format) {
    case 'geojson':
      return discoverGeoJson(path, filename, size, options);
    case 'geojsonseq':
      return discoverGeoJsonSeq(path, filename, size, options);
    case 'csv':
      return discoverCsv(path, filename, size, options);
    case 'shapefile':
      return discoverShapefileZip(path, filename, size, options);
    case 'geopackage':
      return discoverGeoPackage(path, filename, size, options);
    case 'flatgeobuf':
      return discoverFlatGeobuf(path, filename, size, options);
  }
}

/** One full streaming pass: layers, fields with inferred types, geometry type, SRID, feature count, bbox; warnings. */
export async function discover(
  path: string,
  filename: string,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  try {
    return withinFieldLimit(await discoverFormat(path, filename, options), options);
  } catch (error) {
    throw asInputError(error, 'unreadable_file', `${filename} cannot be read`);
  }
}

/** Header-declared fields (dbf, FlatGeobuf columns) are checked here; inferred ones while scanning. */
function withinFieldLimit(discovery: Discovery, options: DiscoverOptions): Discovery {
  const { maxFields } = limitsOf(options.limits);
  const wide = discovery.layers.find((l) => l.fields.length > maxFields);
  if (wide) throw tooManyFields(wide.name, maxFields);
  return discovery;
}

/**
 * One part of a file's discovery (ADR 0156, discovery-parts.ts). A head of a format that doesn't
 * split is its whole discovery; a tail of one fails. Whatever goes wrong in a tail is a plain
 * Error: which error the file has, and where, is for a discovery in order to say.
 */
export async function discoverPart(
  path: string,
  filename: string,
  part: PartSpec,
  options: DiscoverOptions = {},
): Promise<DiscoveryPart> {
  try {
    const format = await sniff(path, filename, options.limits);
    if (!splits(format)) {
      if ('from' in part) throw new Error(`a ${format} file is read in one part`);
      return { kind: 'whole', discovery: await discover(path, filename, options) };
    }
    const size = (await stat(path)).size;
    const read =
      format === 'geojson'
        ? discoverGeoJsonPart
        : format === 'csv'
          ? discoverCsvPart
          : discoverGeoJsonSeqPart;
    const answer = await read(path, filename, size, part, options);
    return answer.kind === 'whole'
      ? { kind: 'whole', discovery: withinFieldLimit(answer.discovery, options) }
      : answer;
  } catch (error) {
    if ('from' in part && !isAbortError(error)) {
      throw new Error(`The tail of the discovery failed: ${(error as Error).message}`);
    }
    throw asInputError(error, 'unreadable_file', `${filename} cannot be read`);
  }
}

/** The features of one layer in file order (the same order every call, so `skip` resumes exactly). */
export async function* readFeatures(
  path: string,
  filename: string,
  layer: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature> {
  for await (const batch of readFeatureBatches(path, filename, layer, options)) yield* batch;
}

/**
 * readFeatures a batch at a time: GeoJSON's, GeoJSONSeq's, CSV's and GeoPackage's readers give a
 * chunk's (or a page's) features at once, one async step per batch instead of one per feature,
 * which a reading thread spent about a sixth of its time on; Shapefile's and FlatGeobuf's, whose
 * sources give a feature at a time, one feature a batch.
 */
export async function* readFeatureBatches(
  path: string,
  filename: string,
  layer: string,
  options: ReadOptions = {},
): AsyncGenerator<SourceFeature[]> {
  try {
    const format = await sniff(path, filename, options.limits);
    const single = () => {
      if (layer !== layerNameOf(filename)) {
        throw new ImportInputError(
          'unknown_layer',
          `${filename} has no layer '${layer}' (its layer is '${layerNameOf(filename)}').`,
        );
      }
    };
    switch (format) {
      case 'geojson':
        single();
        yield* readGeoJson(path, options);
        return;
      case 'geojsonseq':
        single();
        yield* readGeoJsonSeq(path, options);
        return;
      case 'csv':
        single();
        yield* readCsv(path, options);
        return;
      case 'shapefile':
        yield* oneByOne(readShapefileZip(path, layer, options));
        return;
      case 'geopackage':
        yield* readGeoPackage(path, layer, options);
        return;
      case 'flatgeobuf':
        single();
        yield* oneByOne(readFlatGeobuf(path, options));
        return;
    }
  } catch (error) {
    throw asInputError(error, 'unreadable_file', `${filename} cannot be read`);
  }
}
