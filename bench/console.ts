/**
 * Section 6: the console's JavaScript (ADR 0098). Builds console/ with its own Vite config and
 * reads Vite's manifest: the first load is the entry chunk and every chunk it imports
 * statically (what the browser fetches before the first page renders); each page and the map
 * preview are lazy chunks fetched when first opened. Sizes are gzip -9 of the built files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIST, ensureConsoleBuilt } from '../console/build.ts';
import { kb, table, verdict } from './stats.ts';

/** Issue #14: the first load carries at most this much gzipped JavaScript. */
export const CONSOLE_FIRST_LOAD_MAX_BYTES = 200 * 1024;

interface ManifestChunk {
  file: string;
  src?: string;
  name?: string;
  isEntry?: boolean;
  isDynamicEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

export interface ConsoleChunk {
  file: string;
  name: string;
  bytes: number;
  gzip: number;
}

export interface ConsoleOutcome {
  firstLoad: ConsoleChunk[];
  firstLoadCss: ConsoleChunk[];
  lazy: ConsoleChunk[];
}

function sizes(file: string, name: string): ConsoleChunk {
  const bytes = readFileSync(join(CONSOLE_DIST, file));
  return { file, name, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

export async function measureConsole(): Promise<ConsoleOutcome> {
  await ensureConsoleBuilt();
  const manifest = JSON.parse(readFileSync(join(CONSOLE_DIST, '.vite', 'manifest.json'), 'utf8')) as Record<
    string,
    ManifestChunk
  >;
  const entry = Object.entries(manifest).find(([, chunk]) => chunk.isEntry);
  if (!entry) throw new Error('the console manifest names no entry');
  // The entry and its static imports, transitively.
  const firstKeys = new Set<string>();
  const walk = (key: string) => {
    if (firstKeys.has(key)) return;
    firstKeys.add(key);
    for (const next of manifest[key]?.imports ?? []) walk(next);
  };
  walk(entry[0]);
  const nameOf = (key: string, chunk: ManifestChunk) => chunk.src ?? chunk.name ?? key;
  const firstLoad = [...firstKeys].map((key) =>
    sizes(manifest[key]?.file as string, nameOf(key, manifest[key] as ManifestChunk)),
  );
  const firstLoadCss = [...new Set([...firstKeys].flatMap((key) => manifest[key]?.css ?? []))].map((file) =>
    sizes(file, file),
  );
  const lazy = Object.entries(manifest)
    .filter(([key, chunk]) => !firstKeys.has(key) && chunk.file.endsWith('.js'))
    .map(([key, chunk]) => sizes(chunk.file, nameOf(key, chunk)))
    .sort((a, b) => b.gzip - a.gzip);
  return { firstLoad, firstLoadCss, lazy };
}

export function consoleSection(outcome: ConsoleOutcome, verdicts: string[]): string {
  const total = (chunks: ConsoleChunk[]) => chunks.reduce((sum, c) => sum + c.gzip, 0);
  const firstGzip = total(outcome.firstLoad);
  verdicts.push(
    `- console first load ≤ ${kb(CONSOLE_FIRST_LOAD_MAX_BYTES)} KB of gzipped JavaScript: ${verdict(firstGzip <= CONSOLE_FIRST_LOAD_MAX_BYTES)} (${kb(firstGzip)} KB)`,
  );
  const rows = (chunks: ConsoleChunk[]) => chunks.map((c) => [c.name, kb(c.bytes), kb(c.gzip)]);
  return [
    '## 6. The console: JavaScript of the first load and of each page',
    '',
    'Built by `console/build.ts` (Vite, Preact); sizes are the built files and their gzip -9. The first load is the ' +
      "entry chunk and its static imports (Vite's manifest); every page, and MapLibre for the layer preview, is a " +
      'lazy chunk fetched when the page is first opened.',
    '',
    `First load: **${kb(firstGzip)} KB gzipped JavaScript** (${kb(total(outcome.firstLoadCss))} KB gzipped CSS).`,
    '',
    table(['first-load chunk', 'KB', 'KB gzip'], rows(outcome.firstLoad)),
    '',
    table(['lazy chunk (largest first)', 'KB', 'KB gzip'], rows(outcome.lazy)),
    '',
  ].join('\n');
}
