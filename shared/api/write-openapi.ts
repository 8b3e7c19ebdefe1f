import { readFileSync, writeFileSync } from 'node:fs';
import { openApiDocument } from './openapi.ts';

/**
 * `npm run openapi` writes docs/openapi.json from the route table; `--check` fails when the
 * committed file has drifted from it.
 */
const target = new URL('../../docs/openapi.json', import.meta.url);
const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
if (process.argv.includes('--check')) {
  if (readFileSync(target, 'utf8') !== text) {
    console.error('docs/openapi.json is out of date: run `npm run openapi` and commit it.');
    process.exit(1);
  }
  console.log('docs/openapi.json matches the route table');
} else {
  writeFileSync(target, text);
  console.log(`wrote ${target.pathname}`);
}
