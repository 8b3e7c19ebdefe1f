import type { GeoTIFF } from 'geotiff';
import { DomainError, RuleViolationError } from '#domain/errors.ts';
import type { GranuleHeader, RasterSources } from '#domain/mosaics.ts';
import { type ByteRangeReader, rootStore } from './geotiff-readers.ts';

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

let parser: Promise<{ GeoTIFF: typeof GeoTIFF }> | undefined;

/** `geotiff`, loaded on the first header read (ADR 0100): the sidecar beside the bundle, or the package from source. */
function geotiff(): Promise<{ GeoTIFF: typeof GeoTIFF }> {
  parser ??= (
    typeof GEOPLANE_BUNDLE !== 'undefined'
      ? import(new URL('./geotiff.sidecar.mjs', import.meta.url).href)
      : import('geotiff')
  ).catch((error: unknown) => {
    parser = undefined;
    throw error;
  });
  return parser;
}

/** Bytes fetched first and kept: a COG's IFDs and GeoKeys sit at its start, so most headers need one read. */
const HEAD_BYTES = 64 * 1024;

/** GDAL's names for (SampleFormat, BitsPerSample). */
function dataType(format: number, bits: number): string {
  const names: Record<string, string> = {
    '1:8': 'Byte',
    '1:16': 'UInt16',
    '1:32': 'UInt32',
    '2:8': 'Int8',
    '2:16': 'Int16',
    '2:32': 'Int32',
    '3:32': 'Float32',
    '3:64': 'Float64',
  };
  return names[`${format}:${bits}`] ?? `Unknown(${format}:${bits})`;
}

/** Parses the first image's header through range reads (geotiff's own parser; ADR 0060). */
export async function readGeoTiffHeader(reader: ByteRangeReader, name: string): Promise<GranuleHeader> {
  let head: Promise<Uint8Array> | undefined;
  const slice = async (offset: number, length: number): Promise<ArrayBuffer> => {
    if (offset + length <= HEAD_BYTES) {
      head ??= reader.read(0, HEAD_BYTES);
      return (await head).slice(offset, offset + length).buffer as ArrayBuffer;
    }
    return (await reader.read(offset, length)).slice().buffer as ArrayBuffer;
  };
  const source = {
    fetch: (slices: { offset: number; length: number }[]) =>
      Promise.all(slices.map((s) => slice(s.offset, s.length))),
    fileSize: null,
    close: async () => {},
  };
  const { GeoTIFF } = await geotiff();
  try {
    const tiff = await GeoTIFF.fromSource(source as never);
    const image = await tiff.getImage();
    let bbox: number[];
    let resolution: number[];
    try {
      bbox = image.getBoundingBox();
      resolution = image.getResolution();
    } catch {
      throw new RuleViolationError('unreadable_source', `Source '${name}' is not georeferenced.`);
    }
    const keys = (image.getGeoKeys() ?? {}) as Record<string, unknown>;
    const code = keys.ProjectedCSTypeGeoKey ?? keys.GeographicTypeGeoKey;
    const srid = typeof code === 'number' && code > 0 && code < 32767 ? code : undefined;
    const citation = keys.GTCitationGeoKey ?? keys.GeogCitationGeoKey;
    return {
      crs: srid ? `EPSG:${srid}` : typeof citation === 'string' ? citation : 'unknown',
      ...(srid ? { srid } : {}),
      bbox: bbox.slice(0, 4) as [number, number, number, number],
      width: image.getWidth(),
      height: image.getHeight(),
      band_count: image.getSamplesPerPixel(),
      data_type: dataType(image.getSampleFormat(0), image.getBitsPerSample(0)),
      resolution_x: Math.abs(resolution[0] ?? 0),
      resolution_y: Math.abs(resolution[1] ?? 0),
    };
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new RuleViolationError(
      'unreadable_source',
      `Source '${name}' is not a readable GeoTIFF (${String((error as Error).message ?? 'parse error').replace(/\.$/, '')}).`,
    );
  } finally {
    await reader.close();
  }
}

/** Raster sources of mosaics: local directories and S3 prefixes, headers read with `geotiff`. */
export const rasterSources: RasterSources = {
  checkRoot: (rootUri) => rootStore(rootUri).checkRoot(),
  list: (rootUri, pattern) => rootStore(rootUri).list(pattern),
  readHeader: async (rootUri, relativePath) =>
    readGeoTiffHeader(await rootStore(rootUri).open(relativePath), relativePath),
};
