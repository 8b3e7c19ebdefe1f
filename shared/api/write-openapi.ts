import { writeFileSync } from 'node:fs';
import { openApiDocument } from './openapi.ts';

/** Writes docs/openapi.json from the route table (`npm run openapi`). */
const target = new URL('../../docs/openapi.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
