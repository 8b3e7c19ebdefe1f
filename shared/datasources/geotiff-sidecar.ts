/*
 * The GeoTIFF parser's sidecar (ADR 0100): `geotiff` built as its own module beside the mosaic
 * harvest's bundle (`infra/bundling.ts`) and imported by `geotiff.ts` on the first header read.
 * Third-party code only.
 */
export { GeoTIFF } from 'geotiff';
