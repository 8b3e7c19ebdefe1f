/*
 * The S3 client of the raster roots as a sidecar (ADR 0100, 0153): built as its own module beside
 * the bundles that read mosaic roots (`infra/bundling.ts`) and imported by `geotiff-readers.ts` on
 * the first read of an `s3://` root — a harvest, or the root check of a raster service. The service
 * routes otherwise carried the whole S3 client (~120 KB) for PostGIS services that never use it.
 * Third-party code only.
 */
export { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
