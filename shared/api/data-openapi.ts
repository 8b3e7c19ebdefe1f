/**
 * The OpenAPI 3.0 document of one workspace's data API (`…/ogc/api`), generated from THE data
 * route table (OGC API Features Part 1 /req/oas30; the paths relative to the API root).
 */
import { DATA_PLANE_ROOT, type DataRoute, getDataItems } from './data-routes.ts';

const pathParameter = (name: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
});

const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  style: 'form',
  explode: false,
});

const itemsParameters = [
  query('limit', 'At most this many features (default and maximum from the workspace settings).', {
    type: 'integer',
    minimum: 1,
  }),
  query('bbox', 'minx,miny,maxx,maxy (or 6 numbers) in bbox-crs, default CRS84.', {
    type: 'array',
    minItems: 4,
    maxItems: 6,
    items: { type: 'number' },
  }),
  query('bbox-crs', 'The CRS of bbox (a URI from the collection\u2019s crs list).'),
  query('crs', 'The CRS of the answer (a URI from the collection\u2019s crs list).'),
  query('datetime', 'An RFC 3339 instant or interval (collections with a time dimension only).'),
  query('next', 'The cursor of a `next` link.'),
];

/** The data API's OpenAPI document, its server the workspace's API root. */
export function dataOpenApi(routes: readonly DataRoute[], root: string, title: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const relative = route.path.slice(DATA_PLANE_ROOT.length) || '/';
    const names = [...relative.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
    const ok = route.responses[200];
    paths[relative] = {
      get: {
        operationId: route.operationId,
        summary: route.summary,
        ...(route.description ? { description: route.description } : {}),
        tags: [route.access.protocols.join(' + ')],
        parameters: [
          ...names.map(pathParameter),
          query('f', 'The representation (json; tilejson for tilesets, mapbox for styles).'),
          ...(route === getDataItems ? itemsParameters : []),
        ],
        responses: {
          200: {
            description: ok?.description ?? 'OK',
            content: Object.fromEntries((ok?.mediaTypes ?? ['application/json']).map((t) => [t, {}])),
          },
          400: { description: 'A parameter is malformed.', content: { 'application/json': {} } },
          401: { description: 'A credential is required.', content: { 'application/json': {} } },
          404: {
            description: 'Not found, or not served to this caller.',
            content: { 'application/json': {} },
          },
        },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title, version: '1.0.0' },
    servers: [{ url: root }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
    },
    security: [{}, { apiKey: [] }, { bearer: [] }],
    paths,
  };
}
