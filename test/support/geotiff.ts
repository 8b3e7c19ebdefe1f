import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeArrayBuffer } from 'geotiff';

/** Writes a small single-band EPSG:4326 GeoTIFF whose upper-left corner is (x, y), 0.5° pixels. */
export function writeTiff(dir: string, name: string, x: number, y: number, width = 4, height = 2): void {
  const buf = writeArrayBuffer(new Array(width * height).fill(1), {
    width,
    height,
    ModelPixelScale: [0.5, 0.5, 0],
    ModelTiepoint: [0, 0, 0, x, y, 0],
    GeographicTypeGeoKey: 4326,
    GTModelTypeGeoKey: 2,
    GTRasterTypeGeoKey: 1,
  } as never);
  mkdirSync(join(dir, name, '..'), { recursive: true });
  writeFileSync(join(dir, name), Buffer.from(buf));
}
