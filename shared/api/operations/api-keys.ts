import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { APIKey, APIKeyWithSecret, DateTime, IdOrName, PageQuery, Role, Uuid } from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const KeyParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName, keyId: Uuid }));
const APIKeyList = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ api_keys: z.array(APIKey), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'APIKeyList' })),
);

export const createAPIKey = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createAPIKey',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/apikeys',
    handler: 'functions/api-keys/create-api-key.ts',
    permission: 'manage',
    summary: 'Create an API key',
    description:
      'The full key is returned once, in the field `key` of this response; only its SHA-256 hash is stored.',
    tags: ['api-keys'],
    request: {
      params: WorkspaceParams,
      body: z.strictObject({
        name: z.string().check(z.minLength(1), z.maxLength(128)),
        role_id: Role,
        expires_at: z.optional(DateTime),
        owner_email: z.optional(z.email().check(z.maxLength(254))),
        owner_name: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
      }),
    },
    responses: {
      201: {
        description: 'created key with its secret',
        schema: APIKeyWithSecret,
        headers: { Location: 'URL of the key' },
      },
      400: { description: 'bad request (missing name, unknown role_id, expires_at in the past)' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      request: {
        name: 'ci-publisher',
        role_id: 'editor',
        expires_at: '2031-03-02T00:00:00.000Z',
        owner_email: 'ci@example.org',
      },
      response: { ...ex.apiKey, key: 'gpk_q3Zt8WbRk2mXc9LpV4nH7sJ0aF6dG1eY5uT8iO3wQzA' },
    },
    data: ['GetItem', 'PutItem', 'ConditionCheckItem', 'UpdateItem'],
  }),
);

export const listAPIKeys = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listAPIKeys',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/apikeys',
    handler: 'functions/api-keys/list-api-keys.ts',
    permission: 'manage',
    summary: "List a workspace's API keys (prefixes only)",
    tags: ['api-keys'],
    request: { params: WorkspaceParams, query: PageQuery },
    responses: {
      200: { description: 'a page of keys', schema: APIKeyList },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: { api_keys: [ex.apiKey] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const getAPIKey = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getAPIKey',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/apikeys/{keyId}',
    handler: 'functions/api-keys/get-api-key.ts',
    permission: 'manage',
    summary: 'Read an API key (prefix only)',
    tags: ['api-keys'],
    request: { params: KeyParams },
    responses: {
      200: { description: 'the key', schema: APIKey },
      400: { description: 'keyId is not a UUID' },
      404: { description: 'workspace or key not found' },
    },
    examples: {
      params: { workspace: 'roads-demo', keyId: ex.ids.apiKey },
      response: ex.apiKey,
    },
    data: ['GetItem'],
  }),
);

export const revokeAPIKey = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'revokeAPIKey',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/apikeys/{keyId}',
    handler: 'functions/api-keys/revoke-api-key.ts',
    permission: 'manage',
    summary: 'Revoke an API key',
    description: 'The key stops authenticating at once. Revoking a revoked key is a no-op (204).',
    tags: ['api-keys'],
    request: { params: KeyParams },
    responses: {
      204: { description: 'revoked' },
      400: { description: 'keyId is not a UUID' },
      404: { description: 'workspace or key not found' },
    },
    examples: { params: { workspace: 'roads-demo', keyId: ex.ids.apiKey } },
    data: ['GetItem', 'UpdateItem'],
  }),
);

export const deleteAPIKey = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteAPIKey',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/apikeys/{keyId}/permanent',
    handler: 'functions/api-keys/delete-api-key.ts',
    permission: 'manage',
    summary: 'Delete a revoked API key for good',
    description:
      'Removes a **revoked** key from the workspace: it leaves listAPIKeys and getAPIKey answers 404. A key that is not revoked (expired ones included) is refused with 409: revoke it first. The deletion is audited like the other key operations.',
    tags: ['api-keys'],
    request: { params: KeyParams },
    responses: {
      204: { description: 'deleted' },
      400: { description: 'keyId is not a UUID' },
      404: { description: 'workspace or key not found' },
      409: { description: 'the key is not revoked (`api_key_not_revoked`): revoke it first' },
    },
    examples: { params: { workspace: 'roads-demo', keyId: ex.ids.apiKey } },
    data: ['GetItem', 'DeleteItem', 'UpdateItem'],
  }),
);
