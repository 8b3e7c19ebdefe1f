import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { catalogEventJsonSchema } from '../../shared/api/event-schemas.ts';
import { openApiDocument } from '../../shared/api/openapi.ts';
import { routes } from '../../shared/api/routes.ts';
import { ceilings } from '../../shared/domain/settings.ts';
import { clientTypes } from './generate.ts';
import { settingsLimits } from './settings-limits.ts';

/**
 * `npm run openapi` writes docs/openapi.json from the route table (and the catalog events' JSON
 * Schema, docs/events/; the typed client's types, client/api-types.ts, and the settings limits'
 * ceilings, client/settings-limits.ts); `--check` fails when a committed file has drifted from it.
 */
const document = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
const outputs: [URL, string][] = [
  [new URL('../../docs/openapi.json', import.meta.url), document],
  // The typed client's types, generated from the document itself (ADR 0096).
  [new URL('../api-types.ts', import.meta.url), await clientTypes(document)],
  // The settings limits' ceilings, for the console's hints and inputs (the document names the limits).
  [new URL('../settings-limits.ts', import.meta.url), settingsLimits(JSON.parse(document), ceilings)],
  // operationId → permission without any schema, for handlers that need the catalog (small bundles).
  [
    new URL('../../shared/api/operation-permissions.json', import.meta.url),
    `${JSON.stringify(Object.fromEntries(routes.map((r) => [r.operationId, r.permission])), null, 2)}\n`,
  ],
  // The catalog-change events' schema (ADR 0094).
  [
    new URL('../../docs/events/catalog-event.schema.json', import.meta.url),
    `${JSON.stringify(catalogEventJsonSchema(), null, 2)}\n`,
  ],
];
let stale = false;
for (const [target, text] of outputs) {
  if (process.argv.includes('--check')) {
    if (!existsSync(target) || readFileSync(target, 'utf8') !== text) {
      console.error(`${target.pathname} is out of date: run \`npm run openapi\` and commit it.`);
      stale = true;
    }
  } else {
    writeFileSync(target, text);
    console.log(`wrote ${target.pathname}`);
  }
}
if (stale) process.exit(1);
