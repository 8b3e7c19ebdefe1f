import { openApiDocument } from '../../shared/api/openapi.ts';
import { getOpenAPI as operation } from '../../shared/api/operations/meta.ts';
import { makeHandler } from '../../shared/http/make-handler.ts';
import { ok } from '../../shared/http/responses.ts';

let document: unknown;

export const handler = makeHandler(operation, async () => {
  document ??= openApiDocument();
  return ok(document, { 'Cache-Control': 'public, max-age=300' });
});
