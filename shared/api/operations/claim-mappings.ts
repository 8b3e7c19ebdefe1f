import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import {
  ClaimMappingBody,
  ClaimMappingInput,
  ClaimMappingList,
  IdOrName,
  PageQuery,
  Uuid,
} from '../schemas.ts';

const WorkspaceParams = /* @__PURE__ */ shakable(() => z.strictObject({ workspace: IdOrName }));
const MappingParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ workspace: IdOrName, mappingId: Uuid }),
);

/** What creating a mapping answers in either scope (a workspace's adds its 404). */
const mappingCreated = {
  201: {
    description: 'created mapping',
    schema: ClaimMappingBody,
    headers: { Location: 'URL of the mapping' },
  },
  400: { description: 'missing field or unknown role' },
  409: { description: 'the same claim, value and role are already mapped' },
  422: { description: 'the scope already has the most claim mappings it may have (500)' },
};

/** The example global mapping: a realm role made super_admin everywhere. */
const globalMappingInput = {
  claim_name: 'realm_access.roles',
  claim_value: 'gis-admin',
  role_id: 'super_admin',
  priority: 100,
};
const globalMapping = { ...ex.claimMapping, workspace_id: '*', ...globalMappingInput };

export const createClaimMapping = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createClaimMapping',
    method: 'POST',
    path: '/api/v1/workspaces/{workspace}/claim-mappings',
    handler: 'functions/claim-mappings/create-claim-mapping.ts',
    permission: 'manage',
    summary: 'Map an OIDC/JWT claim to a role in the workspace',
    description:
      'A token whose claim `claim_name` (a name or dotted path; arrays match on any element) equals `claim_value` gets `role_id` in this workspace. Higher `priority` is checked first.',
    tags: ['claim-mappings'],
    request: { params: WorkspaceParams, body: ClaimMappingInput },
    responses: { ...mappingCreated, 404: { description: 'workspace not found' } },
    examples: {
      params: { workspace: 'roads-demo' },
      request: { claim_name: 'groups', claim_value: 'gis-editors', role_id: 'editor', priority: 10 },
      response: ex.claimMapping,
    },
    // The scope's summary (ADR 0103): read, built from a Query when missing, put back.
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
  }),
);

export const listClaimMappings = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listClaimMappings',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/claim-mappings',
    handler: 'functions/claim-mappings/list-claim-mappings.ts',
    permission: 'manage',
    summary: "List the workspace's claim mappings",
    tags: ['claim-mappings'],
    request: { params: WorkspaceParams, query: PageQuery },
    responses: {
      200: { description: 'a page of mappings', schema: ClaimMappingList },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: { claim_mappings: [ex.claimMapping] },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const getClaimMapping = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getClaimMapping',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/claim-mappings/{mappingId}',
    handler: 'functions/claim-mappings/get-claim-mapping.ts',
    permission: 'manage',
    summary: 'Read one claim mapping of the workspace',
    description:
      'One mapping of this workspace, as listClaimMappings shows it. A mapping never changes: its ETag is `"1"` for its whole life (the one deleteClaimMapping\'s If-Match names).',
    tags: ['claim-mappings'],
    request: { params: MappingParams },
    responses: {
      200: {
        description: 'the mapping',
        schema: ClaimMappingBody,
        headers: { ETag: 'the mapping\'s version, `"1"`' },
      },
      400: { description: 'mappingId is not a UUID' },
      404: { description: 'claim mapping not found (or of another workspace, or global)' },
    },
    examples: {
      params: { workspace: 'roads-demo', mappingId: ex.ids.mapping },
      response: ex.claimMapping,
    },
    data: ['GetItem'],
  }),
);

export const deleteClaimMapping = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteClaimMapping',
    method: 'DELETE',
    path: '/api/v1/workspaces/{workspace}/claim-mappings/{mappingId}',
    handler: 'functions/claim-mappings/delete-claim-mapping.ts',
    permission: 'manage',
    summary: 'Delete a claim mapping; it stops applying at once',
    tags: ['claim-mappings'],
    request: { params: MappingParams },
    responses: {
      204: { description: 'deleted' },
      400: { description: 'mappingId is not a UUID' },
      404: { description: 'claim mapping not found (or of another workspace)' },
    },
    examples: { params: { workspace: 'roads-demo', mappingId: ex.ids.mapping } },
    data: ['GetItem', 'Query', 'PutItem', 'DeleteItem', 'UpdateItem'],
  }),
);

export const createGlobalClaimMapping = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createGlobalClaimMapping',
    method: 'POST',
    path: '/api/v1/claim-mappings',
    handler: 'functions/claim-mappings/create-global-claim-mapping.ts',
    permission: 'global',
    summary: 'Map a claim to a role in every workspace, or to super_admin (super_admin)',
    tags: ['claim-mappings'],
    request: { body: ClaimMappingInput },
    responses: mappingCreated,
    examples: {
      request: globalMappingInput,
      response: globalMapping,
    },
    data: ['GetItem', 'Query', 'PutItem', 'UpdateItem'],
  }),
);

export const listGlobalClaimMappings = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listGlobalClaimMappings',
    method: 'GET',
    path: '/api/v1/claim-mappings',
    handler: 'functions/claim-mappings/list-global-claim-mappings.ts',
    permission: 'global',
    summary: 'List global claim mappings (super_admin)',
    tags: ['claim-mappings'],
    request: { query: PageQuery },
    responses: {
      200: { description: 'a page of mappings', schema: ClaimMappingList },
      400: { description: 'bad limit or cursor' },
    },
    examples: {
      response: {
        claim_mappings: [globalMapping],
      },
    },
    data: ['Query'],
  }),
);

export const deleteGlobalClaimMapping = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteGlobalClaimMapping',
    method: 'DELETE',
    path: '/api/v1/claim-mappings/{mappingId}',
    handler: 'functions/claim-mappings/delete-global-claim-mapping.ts',
    permission: 'global',
    summary: 'Delete a global claim mapping (super_admin)',
    tags: ['claim-mappings'],
    request: { params: z.strictObject({ mappingId: Uuid }) },
    responses: {
      204: { description: 'deleted' },
      400: { description: 'mappingId is not a UUID' },
      404: { description: 'claim mapping not found' },
    },
    examples: { params: { mappingId: ex.ids.mapping } },
    data: ['GetItem', 'Query', 'PutItem', 'DeleteItem', 'UpdateItem'],
  }),
);
