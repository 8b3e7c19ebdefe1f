import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

/** The shared test host's mosaic directory: local mosaic roots must lie under it (ADR 0074). */
export function hostMosaicDir(): string {
  return join(inject('host').dataDir, 'mosaics');
}

/** A fresh directory for a mosaic's root_uri, under the shared test host's mosaic directory. */
export function mosaicRoot(prefix = 'mosaic-'): string {
  const dir = hostMosaicDir();
  mkdirSync(dir, { recursive: true });
  return mkdtempSync(join(dir, prefix));
}
