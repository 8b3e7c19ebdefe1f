import { ConfiguredUriPolicy } from '#datasources/imports/sources.ts';
import type { ImportUriPolicy } from '#domain/imports.ts';

/*
 * Which URIs an import may read (createImport): allowed S3 buckets, https:// hosts past the network
 * policy, a local directory. Apart from `imports.ts`, because the network policy loads ipaddr.js
 * when its module loads (a CommonJS package esbuild can't shake): the other import routes don't
 * carry it (ADR 0153).
 */

/** Which URIs imports may read. */
export function importUriPolicy(): ImportUriPolicy {
  return new ConfiguredUriPolicy();
}
