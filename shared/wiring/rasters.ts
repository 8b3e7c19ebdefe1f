/*
 * The raster ports: granule headers (the GeoTIFF parser, ADR 0060) and the mosaic root check (a
 * local directory or an S3 prefix). Apart from `datasources.ts` so only the handlers that read
 * rasters bundle them.
 */

export { rasterSources } from '../datasources/geotiff.ts';
export { rasterRoots } from '../datasources/geotiff-readers.ts';
