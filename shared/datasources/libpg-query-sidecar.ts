/*
 * The SQL parser's sidecar (ADR 0100): libpg-query (PostgreSQL's parser as WebAssembly, compiled
 * when this module loads) built as its own module beside the PostGIS bundles (`infra/bundling.ts`)
 * and imported by `sql-guard.ts` when it loads (issue #27: during a Lambda's init phase). Third-party code only.
 */
export { loadModule, parse } from 'libpg-query';
