import * as z from 'zod/mini';
import { defineOperation } from '../operation.ts';
import { IdOrName } from '../schemas.ts';
import { OGCAPISettingsSchema, OGCTilesSettingsSchema, WMSSettingsSchema } from '../settings-schemas.ts';

const Etag = { ETag: 'the document version ("0" while the defaults apply)' };
const Params = z.strictObject({ workspace: IdOrName });
const notFound = { description: 'workspace not found' };
const mismatch = { description: 'If-Match does not match the current version' };

function pair<S extends z.ZodMiniType>(
  names: { get: string; update: string; path: string; file: string; what: string },
  schema: S,
  badRequest: string,
) {
  const get = defineOperation({
    operationId: names.get,
    method: 'GET',
    path: `/api/v1/workspaces/{workspace}/settings/${names.path}`,
    handler: `functions/settings/get-${names.file}-settings.ts`,
    permission: 'read',
    summary: `Read the ${names.what} settings of a workspace (defaults until first saved)`,
    tags: ['settings'],
    request: { params: Params },
    responses: { 200: { description: `${names.what} settings`, schema, headers: Etag }, 404: notFound },
    data: ['GetItem'],
  });
  const update = defineOperation({
    operationId: names.update,
    method: 'PUT',
    path: `/api/v1/workspaces/{workspace}/settings/${names.path}`,
    handler: `functions/settings/update-${names.file}-settings.ts`,
    permission: 'manage',
    summary: `Replace the ${names.what} settings of a workspace (the whole document). Honours If-Match.`,
    tags: ['settings'],
    request: { params: Params, body: schema },
    responses: {
      200: { description: `updated ${names.what} settings`, schema, headers: Etag },
      400: { description: badRequest },
      404: notFound,
      409: { description: 'concurrent writers kept conflicting after retries; send it again' },
      412: mismatch,
    },
    data:
      names.path === 'ogc-tiles'
        ? ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem']
        : ['GetItem', 'PutItem', 'ConditionCheckItem'],
  });
  return [get, update] as const;
}

export const [getWMSSettings, updateWMSSettings] = pair(
  { get: 'getWMSSettings', update: 'updateWMSSettings', path: 'wms', file: 'wms', what: 'WMS' },
  WMSSettingsSchema,
  'bad request: a limit above the server ceiling, an unknown or repeated extension',
);

export const [getOGCAPISettings, updateOGCAPISettings] = pair(
  {
    get: 'getOGCAPISettings',
    update: 'updateOGCAPISettings',
    path: 'ogcapi',
    file: 'ogcapi',
    what: 'OGC API Features',
  },
  OGCAPISettingsSchema,
  'bad request: a limit above the server ceiling, or limit_default above limit_max',
);

export const [getOGCTilesAPISettings, updateOGCTilesAPISettings] = pair(
  {
    get: 'getOGCTilesAPISettings',
    update: 'updateOGCTilesAPISettings',
    path: 'ogc-tiles',
    file: 'ogc-tiles-api',
    what: 'OGC API Tiles',
  },
  OGCTilesSettingsSchema,
  'bad request: an unknown tile matrix set, a repeated value, missing formats, or a limit above the server ceiling',
);
