import * as z from 'zod/mini';
import { shakable } from '#api/shakable.ts';
import { ROLE_ID_PATTERN, ROLE_ID_RULE } from '#domain/identifiers.ts';
import * as ex from '../examples.ts';
import { defineOperation } from '../operation.ts';
import { IdOrName, pageQuery, RoleBody, RolePolicy, StoredRolePolicy } from '../schemas.ts';

const RoleId = /* @__PURE__ */ shakable(() =>
  z.string().check(z.regex(ROLE_ID_PATTERN, { error: ROLE_ID_RULE })),
);
const RoleParams = /* @__PURE__ */ shakable(() =>
  z.strictObject({ roleId: z.string().check(z.minLength(1), z.maxLength(64)) }),
);
const RoleList = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({ roles: z.array(RoleBody), next_cursor: z.optional(z.string()) })
    .check(z.meta({ id: 'RoleList' })),
);

export const createRole = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'createRole',
    method: 'POST',
    path: '/api/v1/roles',
    handler: 'functions/roles/create-role.ts',
    permission: 'global',
    summary: 'Create a custom role (super_admin)',
    description:
      'A new role grants nothing until policies are added. An id that exists or was ever retired is refused.',
    tags: ['roles'],
    request: {
      body: z.strictObject({
        id: RoleId,
        name: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
        description: z.optional(z.string().check(z.maxLength(1024))),
      }),
    },
    responses: {
      201: { description: 'created role', schema: RoleBody, headers: { Location: 'URL of the role' } },
      400: { description: 'bad request (invalid id)' },
      409: { description: 'role ID already exists or has been retired' },
    },
    examples: {
      request: { id: 'publisher', name: 'Publisher', description: 'Publishes layers in every workspace' },
      response: {
        id: 'publisher',
        name: 'Publisher',
        description: 'Publishes layers in every workspace',
        is_system: false,
        version: 1,
        created_at: ex.created,
        updated_at: ex.created,
      },
    },
    data: ['PutItem'],
  }),
);

export const listRoles = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listRoles',
    method: 'GET',
    path: '/api/v1/roles',
    handler: 'functions/roles/list-roles.ts',
    permission: 'global',
    summary: 'List roles: the four built-ins first, then custom roles (super_admin)',
    tags: ['roles'],
    request: { query: pageQuery(1000) },
    responses: {
      200: { description: 'roles', schema: RoleList },
      400: { description: 'bad limit or cursor' },
    },
    examples: {
      response: {
        roles: [
          { id: 'super_admin', name: 'super_admin', is_system: true },
          { id: 'admin', name: 'admin', is_system: true },
          { id: 'editor', name: 'editor', is_system: true },
          { id: 'viewer', name: 'viewer', is_system: true },
          {
            id: 'publisher',
            name: 'Publisher',
            description: 'Publishes layers in every workspace',
            is_system: false,
            version: 1,
            created_at: ex.created,
            updated_at: ex.created,
          },
        ],
      },
    },
    data: ['Query'],
  }),
);

export const getRole = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getRole',
    method: 'GET',
    path: '/api/v1/roles/{roleId}',
    handler: 'functions/roles/get-role.ts',
    permission: 'global',
    summary: 'Read a role (super_admin)',
    tags: ['roles'],
    request: { params: RoleParams },
    responses: { 200: { description: 'the role', schema: RoleBody }, 404: { description: 'role not found' } },
    examples: {
      params: { roleId: 'publisher' },
      response: {
        id: 'publisher',
        name: 'Publisher',
        description: 'Publishes layers in every workspace',
        is_system: false,
        version: 1,
        created_at: ex.created,
        updated_at: ex.created,
      },
    },
    data: ['GetItem'],
  }),
);

export const deleteRole = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'deleteRole',
    method: 'DELETE',
    path: '/api/v1/roles/{roleId}',
    handler: 'functions/roles/delete-role.ts',
    permission: 'global',
    summary: 'Delete a custom role; its id is retired forever (super_admin)',
    tags: ['roles'],
    request: { params: RoleParams },
    responses: {
      204: { description: 'retired' },
      400: { description: 'built-in roles cannot be deleted' },
      404: { description: 'role not found' },
      409: { description: 'the role is still assigned' },
    },
    examples: { params: { roleId: 'publisher' } },
    data: ['GetItem', 'UpdateItem', 'Query', 'DeleteItem'],
  }),
);

/** What deleting a custom role meets (ADR 0135). */
const RoleDeletionPlan = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      role_id: z.string(),
      deletable: z
        .boolean()
        .check(z.meta({ description: 'true when nothing refers to the role (references is 0)' })),
      references: z.int().check(
        z.meta({
          description:
            "the role's reference count, what deleteRole's 409 reports: claim_mappings + layers + unrecorded",
        }),
      ),
      claim_mappings: z.array(
        z.strictObject({
          workspace_id: z.nullable(z.string()).check(z.meta({ description: 'null for a global mapping' })),
          id: z.string(),
        }),
      ),
      layers: z.array(z.strictObject({ workspace_id: z.string(), service_id: z.string(), id: z.string() })),
      unrecorded: z.int().check(
        z.meta({
          description:
            'references counted before GeoPlane recorded each referrer (ADR 0135): not listable, but counted',
        }),
      ),
      policies: z
        .array(StoredRolePolicy)
        .check(z.meta({ description: 'removed with the role; they do not block it' })),
      api_keys: z.int().check(z.meta({ description: 'always 0: API keys carry built-in roles only' })),
      sessions: z
        .int()
        .check(
          z.meta({ description: 'always 0: sessions resolve roles per request, they hold no reference' }),
        ),
    })
    .check(z.meta({ id: 'RoleDeletionPlan' })),
);

export const getRoleDeletionPlan = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'getRoleDeletionPlan',
    method: 'GET',
    path: '/api/v1/roles/{roleId}/deletion-plan',
    handler: 'functions/roles/get-role-deletion-plan.ts',
    permission: 'global',
    summary:
      'What deleting a custom role meets: the claim mappings and layers that refer to it, and its policies (super_admin)',
    description:
      "One Query of the role's reference records, each checked against its referrer as stored now. `references` is the count deleteRole is conditioned on; what it holds beyond the listed mappings and layers is `unrecorded` (made before the records existed, ADR 0135).",
    tags: ['roles'],
    request: { params: RoleParams },
    responses: {
      200: { description: 'the plan', schema: RoleDeletionPlan },
      400: { description: 'built-in roles cannot be deleted' },
      404: { description: 'role not found' },
    },
    examples: {
      params: { roleId: 'publisher' },
      response: {
        role_id: 'publisher',
        deletable: false,
        references: 3,
        claim_mappings: [{ workspace_id: ex.ids.workspace, id: ex.ids.mapping }],
        layers: [{ workspace_id: ex.ids.workspace, service_id: ex.ids.service, id: ex.ids.layer }],
        unrecorded: 1,
        policies: [ex.rolePolicy],
        api_keys: 0,
        sessions: 0,
      },
    },
    data: ['GetItem', 'Query', 'BatchGetItem'],
  }),
);

export const addRolePolicy = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'addRolePolicy',
    method: 'POST',
    path: '/api/v1/roles/{roleId}/policies',
    handler: 'functions/roles/add-role-policy.ts',
    permission: 'global',
    summary: 'Grant a service or operation to a role (super_admin)',
    description:
      'For `management` the operation is an operationId of this API and the action its permission class (read, write or manage); for OGC services a protocol operation. Invalid combinations → 422. Granting the same rule twice is harmless.',
    tags: ['roles'],
    request: { params: RoleParams, body: RolePolicy },
    responses: {
      201: { description: 'granted, no body', headers: { Location: 'URL of the policy' } },
      400: { description: 'bad request' },
      404: { description: 'role not found' },
      422: {
        description:
          'invalid policy (unknown operation or workspace, or an action the operation does not use)',
      },
    },
    examples: {
      params: { roleId: 'publisher' },
      request: { workspace: '*', service: 'management', operation: 'createLayer', action: 'write' },
    },
    data: ['GetItem', 'PutItem'],
  }),
);

export const listRolePolicies = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listRolePolicies',
    method: 'GET',
    path: '/api/v1/roles/{roleId}/policies',
    handler: 'functions/roles/list-role-policies.ts',
    permission: 'global',
    summary: "List a role's policies (super_admin)",
    tags: ['roles'],
    request: { params: RoleParams },
    responses: {
      200: {
        description: 'the policies',
        schema: z
          .strictObject({ policies: z.array(StoredRolePolicy) })
          .check(z.meta({ id: 'RolePolicyList' })),
      },
      404: { description: 'role not found' },
    },
    examples: {
      params: { roleId: 'publisher' },
      response: {
        policies: [ex.rolePolicy],
      },
    },
    data: ['GetItem', 'Query'],
  }),
);

export const removeRolePolicy = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'removeRolePolicy',
    method: 'DELETE',
    path: '/api/v1/roles/{roleId}/policies/{policyId}',
    handler: 'functions/roles/remove-role-policy.ts',
    permission: 'global',
    summary: 'Remove a policy from a role (super_admin)',
    tags: ['roles'],
    request: {
      params: z.strictObject({
        roleId: z.string().check(z.minLength(1), z.maxLength(64)),
        policyId: z.string().check(z.regex(/^[0-9a-f]{20}$/)),
      }),
    },
    responses: {
      204: { description: 'removed' },
      400: { description: 'bad policy id' },
      404: { description: 'role or policy not found' },
    },
    examples: { params: { roleId: 'publisher', policyId: ex.rolePolicy.id } },
    data: ['GetItem', 'DeleteItem'],
  }),
);

const WorkspaceRole = /* @__PURE__ */ shakable(() =>
  z
    .strictObject({
      ...RoleBody.def.shape,
      assignable_to: z
        .array(z.enum(['api_keys', 'claim_mappings']))
        .check(z.meta({ description: 'what may carry the role here: API keys take the built-ins only' })),
    })
    .check(z.meta({ id: 'WorkspaceRole' })),
);

export const listWorkspaceRoles = /* @__PURE__ */ shakable(() =>
  defineOperation({
    operationId: 'listWorkspaceRoles',
    method: 'GET',
    path: '/api/v1/workspaces/{workspace}/roles',
    handler: 'functions/roles/list-workspace-roles.ts',
    permission: 'manage',
    summary: 'List the roles assignable in the workspace: admin, editor, viewer, then custom roles',
    description:
      'The roles an API key or a claim mapping of this workspace may carry: the built-ins admin, editor and viewer lead the first page (super_admin is global only), followed by a page of the active custom roles (custom roles are global; their policies say where they grant). `assignable_to` says what may carry each: API keys take the built-ins only.',
    tags: ['roles'],
    request: { params: z.strictObject({ workspace: IdOrName }), query: pageQuery(1000) },
    responses: {
      200: {
        description: 'built-ins (first page only) followed by a page of custom roles',
        schema: z
          .strictObject({ roles: z.array(WorkspaceRole), next_cursor: z.optional(z.string()) })
          .check(z.meta({ id: 'WorkspaceRoleList' })),
      },
      400: { description: 'bad limit or cursor' },
      404: { description: 'workspace not found' },
    },
    examples: {
      params: { workspace: 'roads-demo' },
      response: {
        roles: [
          { id: 'admin', name: 'admin', is_system: true, assignable_to: ['api_keys', 'claim_mappings'] },
          { id: 'editor', name: 'editor', is_system: true, assignable_to: ['api_keys', 'claim_mappings'] },
          { id: 'viewer', name: 'viewer', is_system: true, assignable_to: ['api_keys', 'claim_mappings'] },
          {
            id: 'publisher',
            name: 'Publisher',
            description: 'Publishes layers in every workspace',
            is_system: false,
            version: 1,
            created_at: ex.created,
            updated_at: ex.created,
            assignable_to: ['claim_mappings'],
          },
        ],
      },
    },
    data: ['Query'],
  }),
);
