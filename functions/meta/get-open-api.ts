import { readFile } from 'node:fs/promises';
import { getOpenAPI as operation } from '#api/operations/meta.ts';
import { makeHandler } from '#entry/handler.ts';
import { ok } from '#http/responses.ts';

/** Set by `infra/bundling.ts` in the Lambda bundles; undefined when run from source. */
declare const GEOPLANE_BUNDLE: true | undefined;

// The committed document (generated from the route table and drift-checked), so this Lambda
// carries neither the schemas nor the generator. Read on the first request from the file staged
// beside the bundle (ADR 0100), not inlined: 250 KB of JSON the bundle would parse at every cold
// start, and the first request needs it anyway.
const file =
  typeof GEOPLANE_BUNDLE !== 'undefined'
    ? new URL('./openapi.document.json', import.meta.url)
    : new URL('../../docs/openapi.json', import.meta.url);
let document: Promise<unknown> | undefined;

export const handler = makeHandler(operation, async () => {
  document ??= readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as unknown,
    (error: unknown) => {
      document = undefined;
      throw error;
    },
  );
  return ok(await document, { 'Cache-Control': 'public, max-age=300' });
});
