import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';

const root = import.meta.dirname;
const repo = resolve(root, '..');

/**
 * `virtual:operations`: method + path template → operationId and the permission it needs, read
 * from the generated OpenAPI document and permission table at build time (a few KB), so the
 * console can say which role a 403 wanted without shipping the whole document.
 */
function operationsTable(): Plugin {
  const id = 'virtual:operations';
  return {
    name: 'geoplane-operations',
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    load(loaded) {
      if (loaded !== `\0${id}`) return undefined;
      const document = JSON.parse(readFileSync(resolve(repo, 'docs/openapi.json'), 'utf8')) as {
        paths: Record<string, Record<string, { operationId?: string }>>;
      };
      const permissions = JSON.parse(
        readFileSync(resolve(repo, 'shared/api/operation-permissions.json'), 'utf8'),
      ) as Record<string, string>;
      const table: Record<string, { operationId: string; permission: string }> = {};
      for (const [path, methods] of Object.entries(document.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          if (!op.operationId) continue;
          table[`${method.toUpperCase()} ${path}`] = {
            operationId: op.operationId,
            permission: permissions[op.operationId] ?? 'authenticated',
          };
        }
      }
      return `export default ${JSON.stringify(table)};`;
    },
  };
}

export default defineConfig({
  root,
  base: '/console/',
  publicDir: false,
  plugins: [operationsTable()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: resolve(root, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    // No data: URIs and no inline scripts: the console runs under a strict CSP (ADR 0098).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // The bench reads what the first load needs (the entry and its static imports) from here.
    manifest: true,
  },
  logLevel: 'warn',
});
