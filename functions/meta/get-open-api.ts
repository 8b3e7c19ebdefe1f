import document from '../../docs/openapi.json' with { type: 'json' };
import { getOpenAPI as operation } from '../../shared/api/operations/meta.ts';
import { ok } from '../../shared/http/responses.ts';
import { makeHandler } from '../../shared/wiring/handler.ts';

// The committed document (generated from the route table and drift-checked), so this Lambda
// carries neither the schemas nor the generator.
export const handler = makeHandler(operation, async () =>
  ok(document, { 'Cache-Control': 'public, max-age=300' }),
);
