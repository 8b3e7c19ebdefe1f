import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

/**
 * The client's types (`client/api-types.ts`) from the OpenAPI document's text, by
 * openapi-typescript. It runs from this folder's own package, which brings the TypeScript 5 that
 * openapi-typescript's compiler-API code needs beside the repository's native TypeScript 7
 * (ADR 0096).
 */
export async function clientTypes(documentText: string): Promise<string> {
  const ast = await openapiTS(JSON.parse(documentText), {
    silent: true,
    // A property with a default stays optional: request bodies may leave it out.
    defaultNonNullable: false,
  });
  return `${COMMENT_HEADER.replace(
    ' */',
    ' * Source: docs/openapi.json. Regenerate with `npm run openapi` (ADR 0096).\n */',
  )}${astToString(ast)}`;
}
