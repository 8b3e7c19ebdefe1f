/*
 * The mosaic root check (a local directory or an S3 prefix, ADR 0074), apart from the GeoTIFF
 * parser of `rasters.ts`: the services' handlers check roots but read no raster.
 */
export { rasterRoots } from '#datasources/geotiff-readers.ts';
