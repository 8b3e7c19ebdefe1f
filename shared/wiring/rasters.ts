/*
 * The raster port: granule headers (the GeoTIFF parser, ADR 0060). Apart from the other ports so
 * only the handler that reads rasters (the harvest) bundles it.
 */
export { rasterSources } from '#datasources/geotiff.ts';
